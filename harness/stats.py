"""Bootstrap confidence intervals and the paired bootstrap test, shared by every task.

What is resampled is the unit the items were sampled as, not the rows: the captions of one image,
or the queries made from one source image, are drawn together (a cluster bootstrap), because they
are not independent. A population's `ItemTable.unit` names the unit and `clusters` gives each
row's unit; populations with the same unit share one draw (an image brings its image query and
its caption queries along). Different units (e.g. "item") are drawn independently.

Every replicate draws the units with replacement, then every metric is recomputed from the
resampled column means by the task's `metrics_from_means`, so corpus-level metrics (BLEU, RSUM)
get intervals too. A column mean over drawn clusters is the sum of the drawn clusters' row sums
over the number of rows drawn (clusters may differ in size).

The random draws depend only on the seed, the unit's name and the number of units, never on the
columns or the other populations: a metric's interval is the same whichever other metrics were
computed (METEOR present or not), for the same file, ground truth, seed and resample count.

Pooled over several runs (seeds of one training recipe), the replicates resample the runs too
(a two-level bootstrap): seed-to-seed variance is part of the interval.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from vlbench.backports import strict_zip
from vlbench.item_table import ItemTable

MeansToMetrics = Callable[[Mapping[str, Mapping[str, np.ndarray]]], dict[str, np.ndarray]]

# Cap on unit counts held at once (replicates x units), 64 MB of float64.
_CHUNK_ELEMENTS = 8_000_000


def unit_generator(seed: int, unit: str) -> np.random.Generator:
    """The random generator that draws the units named `unit` (one per unit and seed, so adding
    a population with another unit does not change this one's draws)."""
    return np.random.default_rng([seed, zlib.crc32(unit.encode("utf-8"))])


@dataclass(frozen=True)
class _Population:
    draw: str  # key of the draw it shares
    unit_index: np.ndarray  # (rows,) index of each row's unit within the draw's units
    sizes: np.ndarray  # (units,) rows per unit


@dataclass(frozen=True)
class Design:
    """Which units the bootstrap draws, and how each population's rows map to them."""

    units: dict[str, int]  # draw key -> number of units, in drawing order
    populations: dict[str, _Population]
    names: dict[str, str]  # population -> unit name, as the result record reports it

    @classmethod
    def of(cls, items: Mapping[str, ItemTable]) -> Design:
        keys = {name: (t.unit if t.unit != "item" else f"item:{name}") for name, t in items.items()}
        unit_ids: dict[str, set[str]] = {}
        for name, t in items.items():
            unit_ids.setdefault(keys[name], set()).update(t.unit_ids())
        ordered = {key: sorted(unit_ids[key]) for key in sorted(unit_ids)}
        populations = {}
        for name, t in items.items():
            position = {u: i for i, u in enumerate(ordered[keys[name]])}
            index = np.fromiter((position[u] for u in t.unit_ids()), dtype=np.int64, count=len(t.ids))
            sizes = np.bincount(index, minlength=len(position)).astype(np.float64)
            populations[name] = _Population(keys[name], index, sizes)
        names = {name: t.unit for name, t in items.items()}
        return cls({k: len(v) for k, v in ordered.items()}, populations, names)

    def counts(self, n_resamples: int, seed: int) -> Iterator[dict[str, np.ndarray]]:
        """Per chunk of replicates: how often each unit is drawn, (chunk, units) per draw key.

        Each draw key has its own generator and each replicate is one call to it, so a key's
        counts do not depend on the other keys or on the chunk size."""
        if not self.units:
            return
        generators = {key: unit_generator(seed, key) for key in self.units}
        largest = max(max(self.units.values()), 1)
        per_chunk = max(1, _CHUNK_ELEMENTS // largest)
        for start in range(0, n_resamples, per_chunk):
            stop = min(n_resamples, start + per_chunk)
            out = {}
            for key, n_units in self.units.items():
                out[key] = _draw_counts(generators[key], n_units, stop - start)
            yield out


def _draw_counts(rng: np.random.Generator, n_units: int, n_rows: int) -> np.ndarray:
    """(n_rows, n_units) float64: per replicate, how often each unit is drawn in `n_units` draws
    with replacement (replicate r is `rng.integers(0, n_units, size=n_units)`: one call per
    replicate, since numpy's bounded integers keep no state between calls but do within one)."""
    counts = np.empty((n_rows, n_units))
    for r in range(n_rows):
        counts[r] = np.bincount(rng.integers(0, n_units, size=n_units), minlength=n_units)
    return counts


def _unit_sums(table: ItemTable, pop: _Population, n_units: int) -> list[np.ndarray]:
    """Per column, the sum of the column over each unit's rows (contiguous, one array per column so
    a column's arithmetic never depends on which other columns exist)."""
    return [np.bincount(pop.unit_index, weights=table.values[:, j], minlength=n_units)
            for j in range(table.values.shape[1])]


def replicate_means(
    tables: Sequence[Mapping[str, ItemTable]], design: Design, n_resamples: int, seed: int
) -> list[dict[str, dict[str, np.ndarray]]]:
    """Column means per replicate for each of `tables` (runs or systems over the same items),
    all with the same drawn units: {population: {column: (n_resamples,) array}} per table."""
    sums = [
        {name: _unit_sums(t, design.populations[name], design.units[design.populations[name].draw])
         for name, t in tab.items()}
        for tab in tables
    ]
    out: list[dict[str, dict[str, np.ndarray]]] = [
        {name: {c: np.empty(n_resamples) for c in t.columns} for name, t in tab.items()} for tab in tables
    ]
    start = 0
    for counts in design.counts(n_resamples, seed):
        stop = start + next(iter(counts.values())).shape[0]
        for name, pop in design.populations.items():
            drawn = counts[pop.draw]
            rows = drawn @ pop.sizes
            with np.errstate(invalid="ignore", divide="ignore"):
                for tab, tab_sums, tab_out in strict_zip(tables, sums, out):
                    for c, column_sums in strict_zip(tab[name].columns, tab_sums[name]):
                        tab_out[name][c][start:stop] = (drawn @ column_sums) / rows
        start = stop
    return out


def _percentile_ci(replicated: Mapping[str, np.ndarray], level: float) -> dict[str, list[float]]:
    tail = 100.0 * (1.0 - level) / 2.0
    ci: dict[str, list[float]] = {}
    for key, values in replicated.items():
        values = np.asarray(values, dtype=np.float64)
        if values.size == 0 or not np.all(np.isfinite(values)):
            continue
        lo, hi = np.percentile(values, [tail, 100.0 - tail])
        ci[key] = [float(lo), float(hi)]
    return ci


def resampled_units(items: Mapping[str, ItemTable]) -> dict[str, str]:
    """Population -> the unit the bootstrap resamples (for the result record)."""
    return {name: items[name].unit for name in sorted(items)}


def bootstrap_ci(
    items: Mapping[str, ItemTable],
    metrics_from_means: MeansToMetrics,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, list[float]]:
    """Percentile bootstrap intervals for every metric the task derives from `items`."""
    if n_resamples <= 0 or not items:
        return {}
    (means,) = replicate_means([items], Design.of(items), n_resamples, seed)
    return _percentile_ci(metrics_from_means(means), level)


@dataclass(frozen=True)
class PairedComparison:
    metric: str
    a: float
    b: float
    difference: float  # a - b
    ci95: tuple[float, float]
    p_value: float  # two-sided, for "no difference"


def align_items(a: Mapping[str, ItemTable], b: Mapping[str, ItemTable]) -> dict[str, ItemTable]:
    """Reorder `b`'s rows to `a`'s ids; both must cover exactly the same items, grouped into the
    same units. A table that records no units (written by an older vlbench) takes the other's:
    both were scored against the same ground truth."""
    if set(a) != set(b):
        raise ValueError(f"the results have different populations: {sorted(a)} vs {sorted(b)}")
    aligned: dict[str, ItemTable] = {}
    for name, ta in a.items():
        tb = b[name]
        if ta.columns != tb.columns:
            raise ValueError(f"population {name}: different columns")
        if ta.ids == tb.ids:
            order = None
        else:
            position = {item: i for i, item in enumerate(tb.ids)}
            if set(position) != set(ta.ids) or len(position) != len(ta.ids):
                raise ValueError(f"population {name}: the results cover different items")
            order = np.fromiter((position[i] for i in ta.ids), dtype=np.int64, count=len(ta.ids))
        clusters_b = tb.clusters
        if clusters_b is not None and order is not None:
            clusters_b = [clusters_b[i] for i in order]
        if tb.unit == "item" and ta.unit != "item":
            unit, clusters = ta.unit, ta.clusters
        elif ta.unit == "item" and tb.unit != "item":
            unit, clusters = tb.unit, clusters_b
        elif ta.unit == tb.unit and ta.clusters == clusters_b:
            unit, clusters = ta.unit, ta.clusters
        else:
            raise ValueError(f"population {name}: the results group the items into different units")
        values = tb.values if order is None else tb.values[order]
        aligned[name] = ItemTable(list(ta.ids), list(tb.columns), values, unit, clusters)
    return aligned


def _with_units(items: Mapping[str, ItemTable], units: Mapping[str, ItemTable]) -> dict[str, ItemTable]:
    return {name: ItemTable(t.ids, t.columns, t.values, units[name].unit, units[name].clusters)
            for name, t in items.items()}


def _comparison(key: str, a: float, b: float, diff: np.ndarray, level: float = 0.95) -> PairedComparison:
    """Percentile interval of the replicated differences and the two-sided p-value: twice the
    smaller share of replicates on either side of zero, with the usual +1 correction so it is never
    exactly 0."""
    n = diff.size
    below = int(np.sum(diff <= 0))
    above = int(np.sum(diff >= 0))
    p = min(1.0, 2.0 * (min(below, above) + 1) / (n + 1))
    tail = 100.0 * (1.0 - level) / 2.0
    lo, hi = np.percentile(diff, [tail, 100.0 - tail])
    return PairedComparison(key, a, b, a - b, (float(lo), float(hi)), p)


def paired_bootstrap(
    items_a: Mapping[str, ItemTable],
    items_b: Mapping[str, ItemTable],
    metrics_from_means: MeansToMetrics,
    n_resamples: int = 1000,
    seed: int = 0,
) -> list[PairedComparison]:
    """Paired bootstrap test (Koehn 2004 style): the same resampled units for both systems."""
    items_b = align_items(items_a, items_b)
    items_a = _with_units(items_a, items_b)
    point_a = metrics_from_means({k: t.column_means() for k, t in items_a.items()})
    point_b = metrics_from_means({k: t.column_means() for k, t in items_b.items()})
    means_a, means_b = replicate_means([items_a, items_b], Design.of(items_a), n_resamples, seed)
    rep_a = metrics_from_means(means_a)
    rep_b = metrics_from_means(means_b)
    return [
        _comparison(key, float(np.asarray(point_a[key])[0]), float(np.asarray(point_b[key])[0]),
                    np.asarray(rep_a[key], dtype=np.float64) - np.asarray(rep_b[key], dtype=np.float64))
        for key in rep_a
    ]


# --- several runs (seeds) per system: two-level bootstrap -------------------------------------


def _aligned_runs(runs: Sequence[Mapping[str, ItemTable]]) -> list[dict[str, ItemTable]]:
    """Every run's rows in the first run's order, all with the same units."""
    aligned = [align_items(runs[0], r) for r in runs]
    reference = next((a for a in aligned if any(t.unit != "item" for t in a.values())), aligned[0])
    return [_with_units(align_items(reference, a), reference) for a in aligned]


def _run_metrics(
    runs: Sequence[Mapping[str, ItemTable]], metrics_from_means: MeansToMetrics, design: Design,
    n_resamples: int, seed: int,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Per metric: the point values of each run (runs,) and the replicates (runs, n_resamples),
    every run on the same drawn units."""
    points = [metrics_from_means({k: t.column_means() for k, t in r.items()}) for r in runs]
    replicated = [metrics_from_means(m) for m in replicate_means(runs, design, n_resamples, seed)]
    keys = list(replicated[0])
    point = {k: np.array([float(np.asarray(p[k])[0]) for p in points]) for k in keys}
    reps = {k: np.stack([np.asarray(r[k], dtype=np.float64) for r in replicated]) for k in keys}
    return point, reps


def _seed_draws(n_runs: int, n_resamples: int, seed: int) -> np.ndarray:
    """(n_resamples, n_runs): which runs each replicate takes, drawn with replacement."""
    return unit_generator(seed, "run").integers(0, n_runs, size=(n_resamples, n_runs))


def _pooled(reps: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Per replicate, the mean over the drawn runs of their replicate values."""
    columns = np.arange(reps.shape[1])[:, None]
    return reps[draws, columns].mean(axis=1)


def pooled_ci(
    runs: Sequence[Mapping[str, ItemTable]],
    metrics_from_means: MeansToMetrics,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[dict[str, float], dict[str, list[float]]]:
    """The mean of a metric over runs (seeds) on the same items, and its two-level bootstrap
    interval: each replicate draws the runs with replacement and the units with replacement."""
    runs = _aligned_runs(runs)
    point, reps = _run_metrics(runs, metrics_from_means, Design.of(runs[0]), n_resamples, seed)
    means = {k: float(v.mean()) for k, v in point.items()}
    if n_resamples <= 0:
        return means, {}
    draws = _seed_draws(len(runs), n_resamples, seed)
    return means, _percentile_ci({k: _pooled(v, draws) for k, v in reps.items()}, level)


def pooled_difference(
    runs_a: Sequence[Mapping[str, ItemTable]],
    runs_b: Sequence[Mapping[str, ItemTable]],
    metrics_from_means: MeansToMetrics,
    n_resamples: int = 1000,
    seed: int = 0,
    paired_runs: bool = False,
) -> list[PairedComparison]:
    """Mean over A's runs minus mean over B's runs, with a two-level bootstrap: every replicate
    draws the same units for all runs and draws each arm's runs with replacement. `paired_runs`:
    run i of A belongs with run i of B (e.g. both fine-tuned from the same seed's model), so
    their runs are drawn together; otherwise each arm's runs are drawn independently."""
    if paired_runs and len(runs_a) != len(runs_b):
        raise ValueError(f"paired runs need as many runs on each side ({len(runs_a)} vs {len(runs_b)})")
    aligned = _aligned_runs([*runs_a, *runs_b])
    point, reps = _run_metrics(aligned, metrics_from_means, Design.of(aligned[0]), n_resamples, seed)
    n_a = len(runs_a)
    draws_a = _seed_draws(n_a, n_resamples, seed)
    if paired_runs:
        draws_b = draws_a
    else:
        draws_b = unit_generator(seed, "run/b").integers(0, len(runs_b), size=(n_resamples, len(runs_b)))
    out = []
    for key in reps:
        a_val, b_val = float(point[key][:n_a].mean()), float(point[key][n_a:].mean())
        diff = _pooled(reps[key][:n_a], draws_a) - _pooled(reps[key][n_a:], draws_b)
        out.append(_comparison(key, a_val, b_val, diff))
    return out
