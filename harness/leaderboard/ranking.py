"""The rows a visitor sees and their ranks: one row per method, ordered and ranked by what it shows.

A board's row is a method (`groups.py`): one submission, or the seeds of one recipe. A row shows
the mean of its seeds (a single run: its score) and is ordered by that value, so order, rank and
the number shown agree. Ranks count rows, 1..N: a row shares the rank of the one above it when a
paired test at the level of methods cannot separate them (p >= alpha) or when the two show the
same main score (to 6 decimals). The test and the interval shown follow the run structure: a
single run against a single run is the paired bootstrap over the same resampled units
(`stats.paired_bootstrap`); where a side has seeds, the two-level bootstrap that also resamples
each method's seeds (`stats.pooled_difference`, seeds of two methods drawn independently), and a
seeded row's interval is `stats.pooled_ci`, the same two levels.

A chance floor (a reference row the maintainers list with `floor`) is ranked like any row but
competes for no column's best mark; where it scores above every contender, the board says so,
with the paired test between the floor and the best contender on that column.

Ranking many boards that share entries (intake ranks main's board plus one candidate, once per
pull request) can keep the bootstrap statistics in a `StatsMemo`: a seeded row's interval and the
paired test of two rows depend only on their runs' per-item tables (in order), the benchmark, the
resamples and the seed, so they are kept by exactly those, and a board ranked with a memo gets the
ranks, rows and notes it gets without one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from vlbench.item_table import ItemTable
from vlbench.leaderboard.groups import MethodGroup, method_groups
from vlbench.registry import registry
from vlbench.stats import (
    MeansToMetrics,
    PairedComparison,
    paired_bootstrap,
    pooled_ci,
    pooled_difference,
)

if TYPE_CHECKING:
    from vlbench.benchmark import Benchmark
    from vlbench.leaderboard.build import Board

DATA_DECIMALS = 6


def canonical_value(value: float | None) -> float | None:
    """Every published number is first rounded to 6 decimals: last-digit noise of a machine (a
    numpy version's summation order) cannot reach the published bytes."""
    return None if value is None else round(float(value), DATA_DECIMALS)


@dataclass
class MethodRow:
    """One row of a board: a method with its shown scores and intervals."""

    group: MethodGroup
    scores: dict[str, float | None]  # what the row shows: the seeds' mean, or the run's score
    ci95: dict[str, list[float]]  # two-level bootstrap for seeds; the run's own interval otherwise
    rank: int = 0

    @property
    def name(self) -> str:
        return self.group.name

    @property
    def seeded(self) -> bool:
        return self.group.seeded

    @property
    def entries(self) -> list[Any]:
        return self.group.entries

    @property
    def floor(self) -> bool:
        return all(e.floor for e in self.entries)

    @property
    def reference(self) -> bool:
        return all(e.reference for e in self.entries)

    @property
    def team(self) -> str:
        return str(self.entries[0].result.meta.get("team", ""))

    def shown(self, key: str) -> float | None:
        return canonical_value(self.scores.get(key))


@dataclass(frozen=True)
class FloorNote:
    """A column where a chance floor shows a better value than every contender."""

    metric: str
    floor: str  # the floor row's name
    floor_value: float
    contender: str  # the best contender's name
    contender_value: float
    p_value: float | None  # paired test at the level of methods; None when it cannot be run


Runs = Sequence[Mapping[str, ItemTable]]
_T = TypeVar("_T")


class StatsMemo:
    """Bootstrap statistics kept across `rank_board` calls (see the module's docstring).

    The per-item tables are told apart by identity: a scored entry's tables are never changed, and
    the memo holds every table it has seen, so an identity is never reused for other tables while it
    lives. Entries rescored into new tables only miss; they never get another entry's numbers."""

    def __init__(self) -> None:
        self._tables: dict[int, Mapping[str, ItemTable]] = {}
        self._kept: dict[tuple[Any, ...], Any] = {}
        self.computed = 0  # statistics computed (misses), for the curious and the tests

    def _ids(self, runs: Runs) -> tuple[int, ...]:
        for tables in runs:
            self._tables.setdefault(id(tables), tables)
        return tuple(id(tables) for tables in runs)

    def kept(self, what: str, scope: tuple[Any, ...], sides: Sequence[Runs], compute: Callable[[], _T]) -> _T:
        key = (what, scope, *(self._ids(runs) for runs in sides))
        if key not in self._kept:
            self._kept[key] = compute()
            self.computed += 1
        return self._kept[key]


@dataclass(frozen=True)
class BoardStats:
    """What a board's statistics are computed with: its metrics function, resamples, seed, and
    the memo (if any) with the scope its values are kept under."""

    fn: MeansToMetrics
    resamples: int
    seed: int
    memo: StatsMemo | None = None
    scope: tuple[Any, ...] = ()

    def kept(self, what: str, sides: Sequence[Runs], compute: Callable[[], _T]) -> _T:
        return compute() if self.memo is None else self.memo.kept(what, self.scope, sides, compute)


def metrics_function(benchmark: Benchmark) -> MeansToMetrics:
    task = registry().task_of(benchmark)
    return lambda means: task.metrics_from_means(benchmark, means)


def _runs(row: MethodRow) -> list[Mapping[str, ItemTable]] | None:
    """The per-item tables of each of the row's runs, or None when one has none."""
    runs = [e.items for e in row.entries]
    return runs if all(runs) else None


def _row_stats(group: MethodGroup, stats: BoardStats) -> MethodRow:
    if not group.seeded:
        result = group.entries[0].result
        return MethodRow(group, dict(result.scores), {k: list(v) for k, v in result.ci95.items()})
    keys = list(dict.fromkeys(k for e in group.entries for k in e.result.scores))
    scores = {k: group.mean(k) for k in keys}
    ci95: dict[str, list[float]] = {}
    runs = [e.items for e in group.entries]
    if stats.resamples > 0 and all(runs):
        kept = stats.kept("pooled_ci", [runs], lambda: pooled_ci(runs, stats.fn, n_resamples=stats.resamples,
                                                                  seed=stats.seed)[1])
        ci95 = {k: list(v) for k, v in kept.items()}  # the row's own lists: a kept value is never changed
    return MethodRow(group, scores, ci95)


def compare(above: MethodRow, below: MethodRow, stats: BoardStats) -> list[PairedComparison] | None:
    """The paired test of two rows over the same items (None without per-item tables): one
    level between two single runs, two levels (seeds, then units) when a side has seeds."""
    a, b = _runs(above), _runs(below)
    if a is None or b is None or stats.resamples <= 0:
        return None
    if len(a) == 1 and len(b) == 1:
        return stats.kept("paired_bootstrap", [a, b],
                          lambda: paired_bootstrap(a[0], b[0], stats.fn, stats.resamples, stats.seed))
    return stats.kept("pooled_difference", [a, b],
                      lambda: pooled_difference(a, b, stats.fn, stats.resamples, stats.seed))


def _p_value(comparisons: Sequence[PairedComparison] | None, metric: str) -> float | None:
    if comparisons is None:
        return None
    return next((c.p_value for c in comparisons if c.metric == metric), None)


def _order_key(row: MethodRow, main: str, higher: bool) -> tuple[Any, ...]:
    value = row.shown(main)
    if value is None:
        value = float("-inf") if higher else float("inf")
    return (-value if higher else value, row.name, row.entries[0].path)


def rank_board(board: Board, alpha: float, resamples: int, seed: int, memo: StatsMemo | None = None) -> None:
    """Rows of `board` (`board.rows`) in the order shown, ranked; each entry gets its row's rank,
    and `board.entries` follows the rows (seeds in seed order). `memo`: statistics kept from
    earlier calls (the same result, computed once)."""
    benchmark = board.benchmark
    stats = BoardStats(metrics_function(benchmark), resamples, seed, memo, (benchmark.id, benchmark.version, resamples, seed))
    main = benchmark.main_score
    higher = benchmark.metric(main).higher_is_better
    rows = [_row_stats(g, stats) for g in method_groups(board)]
    rows.sort(key=lambda r: _order_key(r, main, higher))
    for i, row in enumerate(rows):
        if i == 0:
            row.rank = 1
            continue
        above = rows[i - 1]
        same = row.shown(main) == above.shown(main)
        if not same:
            p = _p_value(compare(above, row, stats), main)
            same = p is not None and p >= alpha
        row.rank = above.rank if same else i + 1
    for row in rows:
        for entry in row.entries:
            entry.rank = row.rank
    board.rows = rows
    board.entries = [e for row in rows for e in row.entries]
    board.floor_notes = floor_notes(board, rows, stats)


def floor_notes(board: Board, rows: list[MethodRow], stats: BoardStats) -> list[FloorNote]:
    """Per headline metric, a note when a floor's shown value beats every contender's."""
    contenders = [r for r in rows if not r.floor]
    floors = [r for r in rows if r.floor]
    notes: list[FloorNote] = []
    if not contenders or not floors:
        return notes
    for metric in board.benchmark.metrics:
        if "/" in metric.key:
            continue
        sign = 1.0 if metric.higher_is_better else -1.0
        valued = [(r, v) for r in contenders if (v := r.shown(metric.key)) is not None]
        if not valued:
            continue
        best_row, best = max(valued, key=lambda rv: sign * rv[1])
        for floor in floors:
            value = floor.shown(metric.key)
            if value is None or sign * value <= sign * best:
                continue
            p = _p_value(compare(floor, best_row, stats), metric.key)
            notes.append(FloorNote(metric.key, floor.name, value, best_row.name, best, p))
    return notes
