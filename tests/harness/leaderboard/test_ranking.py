"""A board's rows and ranks (`vlbench.leaderboard.ranking`): one row per method, ordered by the value
it shows, ranked 1..N over the rows with ties where a paired test at the level of methods cannot
separate neighbours; seeds in the interval and the test (the two-level bootstrap of `stats`);
chance floors ranked but never the best contender."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from tests.harness.leaderboard.conftest import REPO
from vlbench.item_table import ItemTable
from vlbench.leaderboard.build import Board, Entry
from vlbench.leaderboard.ranking import StatsMemo, canonical_value, metrics_function, rank_board
from vlbench.registry import registry
from vlbench.results import ResultRecord
from vlbench.stats import paired_bootstrap, pooled_ci, pooled_difference

N = 400  # queries per direction


def _entry(path: str, method: str, rate: float, *, seed: int = 0, floor: bool = False, team: str = "t") -> Entry:
    """A mini-retrieval result whose six recalls are all `rate` (hits drawn at that rate, exactly)."""
    b = registry().benchmark("mini-retrieval")
    rng = np.random.default_rng(seed)
    hits = np.zeros(N)
    hits[rng.permutation(N)[:round(rate * N)]] = 1.0
    table = ItemTable([str(i) for i in range(N)], ["R@1", "R@5", "R@10"], np.stack([hits, hits, hits], axis=1))
    mean = float(hits.mean())
    scores: dict[str, float | None] = {k: mean for k in ("i2t_R@1", "i2t_R@5", "i2t_R@10", "t2i_R@1", "t2i_R@5", "t2i_R@10")}
    scores["RSUM"] = 600 * mean
    result = ResultRecord(b.id, b.task, b.version, "x", "s", "g", {"method": method, "team": team}, scores, b.main_score,
                          ci95={"RSUM": [600 * mean - 1, 600 * mean + 1]})
    return Entry(path, result, {"image_to_text": table, "text_to_image": table}, floor=floor)


def _board(*entries: Entry) -> Board:
    return Board(registry().benchmark("mini-retrieval"), list(entries))


def test_rows_are_methods_ordered_by_what_they_show_and_ranked_over_the_rows() -> None:
    # A's best seed (0.90) is above B, but A shows its mean (0.55): B is above A
    board = _board(
        _entry("a0.json", "A (seed 0)", 0.90, seed=1), _entry("a1.json", "A (seed 1)", 0.40, seed=2),
        _entry("a2.json", "A (seed 2)", 0.35, seed=3),
        _entry("b.json", "B", 0.80, seed=4),
        _entry("c0.json", "C (seed 0)", 0.05, seed=5), _entry("c1.json", "C (seed 1)", 0.06, seed=6),
        _entry("floor.json", "random", 0.02, seed=7, floor=True),
    )
    rank_board(board, alpha=0.05, resamples=300, seed=0)
    shown = [(r.name, r.shown("RSUM"), r.rank) for r in board.rows]
    assert [name for name, _, _ in shown] == ["B", "A", "C", "random"]
    values = [v for _, v, _ in shown]
    assert values == sorted(values, reverse=True) and values[1] == canonical_value(600 * (0.90 + 0.40 + 0.35) / 3)
    ranks = [rank for _, _, rank in shown]
    assert ranks[0] == 1 and all(r in (ranks[i], i + 2) for i, r in enumerate(ranks[1:]))  # 1..N, ties share
    assert max(ranks) <= len(board.rows)
    # every submission carries its row's rank; the entries follow the rows, seeds in seed order
    assert [e.path for e in board.entries] == ["b.json", "a0.json", "a1.json", "a2.json", "c0.json", "c1.json",
                                               "floor.json"]
    assert {e.path: e.rank for e in board.entries}["a2.json"] == board.rows[1].rank
    assert [r.floor for r in board.rows] == [False, False, False, True]


def test_a_seeded_row_shows_the_two_level_bootstrap_of_stats() -> None:
    seeds = [_entry(f"a{s}.json", f"A (seed {s})", rate, seed=s) for s, rate in enumerate((0.5, 0.6, 0.7))]
    single = _entry("b.json", "B", 0.3, seed=9)
    board = _board(*seeds, single)
    rank_board(board, alpha=0.05, resamples=200, seed=0)
    a, b = board.rows
    fn = metrics_function(board.benchmark)
    means, ci = pooled_ci([e.items for e in seeds], fn, n_resamples=200, seed=0)
    assert a.ci95 == ci and a.scores["RSUM"] == pytest.approx(600 * 0.6) and means["RSUM"] == pytest.approx(600 * 0.6)
    # the interval holds the spread of the seeds, wider than one seed's own over the images
    one = pooled_ci([seeds[1].items], fn, n_resamples=200, seed=0)[1]
    assert ci["RSUM"][1] - ci["RSUM"][0] > 1.5 * (one["RSUM"][1] - one["RSUM"][0])
    # a single run keeps its own record's one-level interval
    assert b.ci95 == {"RSUM": [600 * 0.3 - 1, 600 * 0.3 + 1]} and not b.seeded


def test_seed_variance_can_keep_two_methods_together() -> None:
    """Means 0.60 and 0.50 over 400 queries: separable as single runs, not when A's two seeds are
    0.80 and 0.40 (resampling the seeds moves A's mean from 0.40 to 0.80)."""
    fn = metrics_function(registry().benchmark("mini-retrieval"))
    a = [_entry("a0.json", "A (seed 0)", 0.80, seed=1), _entry("a1.json", "A (seed 1)", 0.40, seed=2)]
    b = [_entry("b0.json", "B (seed 0)", 0.50, seed=3), _entry("b1.json", "B (seed 1)", 0.50, seed=4)]
    board = _board(*a, *b)
    rank_board(board, alpha=0.05, resamples=300, seed=0)
    assert [(r.name, r.rank) for r in board.rows] == [("A", 1), ("B", 1)]
    main = next(c for c in pooled_difference([e.items for e in a], [e.items for e in b], fn, 300, 0)
                if c.metric == "RSUM")
    assert main.p_value >= 0.05
    # the same means as two single runs are told apart
    single = _board(_entry("a.json", "A", 0.60, seed=1), _entry("b.json", "B", 0.50, seed=3))
    rank_board(single, alpha=0.05, resamples=300, seed=0)
    assert [r.rank for r in single.rows] == [1, 2]
    one_level = next(c for c in paired_bootstrap(single.rows[0].entries[0].items, single.rows[1].entries[0].items,
                                                fn, 300, 0) if c.metric == "RSUM")
    assert one_level.p_value < 0.05


def test_a_floor_above_every_contender_is_noted_with_its_test() -> None:
    b = registry().benchmark("mini-retrieval")
    contender = _entry("c.json", "C", 0.50, seed=1)
    floor = _entry("f.json", "random", 0.30, seed=2, floor=True)
    # the floor is better on i2t_R@10 only, by one query in 400: a test cannot separate them
    floor.result.scores["i2t_R@10"] = 0.5025
    board = Board(b, [contender, floor])
    rank_board(board, alpha=0.05, resamples=200, seed=0)
    assert [(r.name, r.rank, r.floor) for r in board.rows] == [("C", 1, False), ("random", 2, True)]
    [note] = board.floor_notes
    assert (note.metric, note.floor, note.contender) == ("i2t_R@10", "random", "C")
    assert note.floor_value == 0.5025 and note.contender_value == 0.5 and note.p_value is not None
    # no note where the floor is below, and none without a contender
    alone = Board(b, [_entry("f.json", "random", 0.3, floor=True)])
    rank_board(alone, alpha=0.05, resamples=50, seed=0)
    assert alone.floor_notes == [] and alone.rows[0].rank == 1


def test_equal_shown_scores_share_a_rank_without_a_test() -> None:
    board = _board(_entry("a.json", "A", 0.5, seed=1), _entry("b.json", "B", 0.5, seed=2))
    board.entries[1].items = {}  # no per-item table: no test, but the same shown value
    rank_board(board, alpha=0.05, resamples=100, seed=0)
    assert [r.rank for r in board.rows] == [1, 1]


def _ranked(board: Board) -> list[tuple[object, ...]]:
    rows = [(r.name, r.rank, r.shown("RSUM"), r.ci95, [e.path for e in r.entries], r.floor) for r in board.rows]
    return [*rows, [(e.path, e.rank) for e in board.entries], board.floor_notes]


def test_a_memo_shared_by_boards_ranks_each_exactly_as_without_it() -> None:
    """Intake ranks main's board plus one candidate after another with one memo: every board gets
    exactly the rows, ranks, intervals and notes it gets alone, and a statistic is computed once."""
    def main_entries() -> list[Entry]:  # the same per-item tables every time, as intake's scored entries
        return [dataclasses.replace(e) for e in kept]

    kept = [_entry("a0.json", "A (seed 0)", 0.60, seed=1), _entry("a1.json", "A (seed 1)", 0.52, seed=2),
            _entry("b.json", "B", 0.55, seed=3), _entry("c.json", "C", 0.45, seed=4),
            _entry("d.json", "D", 0.45, seed=4),  # the same hits as C: a shared rank without a test
            _entry("floor.json", "random", 0.47, seed=5, floor=True)]
    kept[-1].result.scores["i2t_R@10"] = 0.99  # the floor above every contender on one column: a note
    candidates = [_entry("n.json", "N", 0.50, seed=6), _entry("a2.json", "A (seed 2)", 0.30, seed=7),
                  _entry("b.json", "B", 0.20, seed=8), _entry("m.json", "M", 0.45, seed=4)]
    memo = StatsMemo()
    for candidate in candidates:
        entries = [e for e in main_entries() if e.path != candidate.path] + [candidate]
        alone, shared = _board(*entries), _board(*(dataclasses.replace(e) for e in entries))
        rank_board(alone, alpha=0.05, resamples=150, seed=0)
        before = memo.computed
        rank_board(shared, alpha=0.05, resamples=150, seed=0, memo=memo)
        assert _ranked(shared) == _ranked(alone), candidate.path
        assert memo.computed > before  # the candidate's own tests at least (its tables are new)
        again = memo.computed
        rank_board(_board(*(dataclasses.replace(e) for e in entries)), alpha=0.05, resamples=150, seed=0, memo=memo)
        assert memo.computed == again  # the same board again: nothing computed
    # other resamples or another seed are other statistics
    before = memo.computed
    rank_board(_board(*main_entries()), alpha=0.05, resamples=100, seed=0, memo=memo)
    assert memo.computed > before


def test_committed_method_rows_are_the_experiment_s_pooled_results() -> None:
    """The leaderboard's rows of the mini-odmap arms (five seeds each) show exactly what the
    experiment's analysis reports pooled over seeds (`baselines/analysis.py`, the same
    `stats.pooled_ci`, 1,000 resamples, seed 0): the same means and two-level intervals."""
    board_doc = json.loads((REPO / "leaderboard" / "leaderboard.json").read_text(encoding="utf-8"))
    experiment = json.loads((REPO / "baselines" / "results" / "mini-odmap" / "results.json").read_text(encoding="utf-8"))
    assert experiment["bootstrap"] == {"resamples": 1000, "seed": 0}
    rows = {(b["benchmark"], r["method"]): r for b in board_doc["boards"] if not b["retired"] for r in b["rows"]}
    labels = {arm["name"]: arm["label"] for arm in experiment["experiment"]["arms"]}
    checked = 0
    for pooled in experiment["pooled"]:
        label = labels[pooled["arm"]]
        for benchmark, keys in (("mini-decorrelated", ("ODmAP@1/partner", "ODmAP@5/control", "ODmAP@10/control")),
                                ("mini-shapes-retrieval", ("i2t_R@1", "t2i_R@5"))):
            row = rows[(benchmark, f"mini-odmap arm {label}")]
            assert row["seeds"] == len(experiment["experiment"]["seeds"])
            for key in keys:
                assert row["scores"][key] == pytest.approx(pooled["scores"][key], abs=1e-6)
                assert row["ci95"][key] == pytest.approx(pooled["ci95"][key], abs=1e-6)
                checked += 1
    assert len(labels) == 7 and checked == 5 * len(labels)  # five arms and issue 30's two dose arms, five keys each

