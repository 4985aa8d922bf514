"""Bootstrap intervals and the paired test."""

from __future__ import annotations

import numpy as np
import pytest

from vlbench.item_table import ItemTable
from vlbench.stats import align_items, bootstrap_ci, paired_bootstrap


def mean_metrics(means):
    return {c: v for table in means.values() for c, v in table.items()}


def table(values, ids=None, column="acc") -> dict[str, ItemTable]:
    values = np.asarray(values, dtype=float)
    ids = ids or [str(i) for i in range(len(values))]
    return {"queries": ItemTable(ids, [column], values[:, None])}


def test_constant_scores_have_zero_width() -> None:
    ci = bootstrap_ci(table([1.0] * 50), mean_metrics, n_resamples=200, seed=0)
    assert ci == {"acc": [1.0, 1.0]}


def test_interval_matches_the_binomial_standard_error() -> None:
    rng = np.random.default_rng(0)
    hits = (rng.random(4000) < 0.3).astype(float)
    lo, hi = bootstrap_ci(table(hits), mean_metrics, n_resamples=2000, seed=1)["acc"]
    p = hits.mean()
    se = np.sqrt(p * (1 - p) / hits.size)
    assert lo < p < hi
    assert (hi - lo) == pytest.approx(2 * 1.96 * se, rel=0.1)


def test_seeded_and_reproducible() -> None:
    values = np.random.default_rng(2).random(300)
    a = bootstrap_ci(table(values), mean_metrics, n_resamples=300, seed=5)
    b = bootstrap_ci(table(values), mean_metrics, n_resamples=300, seed=5)
    c = bootstrap_ci(table(values), mean_metrics, n_resamples=300, seed=6)
    assert a == b and a != c


def test_derived_metric_from_two_populations() -> None:
    items = {
        "a": ItemTable(["1", "2"], ["x"], np.array([[1.0], [0.0]])),
        "b": ItemTable(["1", "2", "3"], ["y"], np.array([[1.0], [1.0], [1.0]])),
    }

    def combined(means):
        return {"sum": means["a"]["x"] + means["b"]["y"]}

    lo, hi = bootstrap_ci(items, combined, n_resamples=500, seed=0)["sum"]
    assert 1.0 <= lo <= 1.5 <= hi <= 2.0


def test_paired_test_identical_systems() -> None:
    values = np.random.default_rng(3).random(200)
    (r,) = paired_bootstrap(table(values), table(values), mean_metrics, n_resamples=500, seed=0)
    assert r.difference == 0.0 and r.p_value == 1.0


def test_paired_test_detects_a_clear_difference_and_aligns_ids() -> None:
    rng = np.random.default_rng(4)
    a = (rng.random(1000) < 0.6).astype(float)
    b = np.where(rng.random(1000) < 0.8, a, 0.0)  # b loses 20% of a's hits
    ids = [f"q{i}" for i in range(1000)]
    order = rng.permutation(1000)
    shuffled_b = table(b[order], [ids[i] for i in order])
    (r,) = paired_bootstrap(table(a, ids), shuffled_b, mean_metrics, n_resamples=1000, seed=0)
    assert r.difference == pytest.approx(a.mean() - b.mean())
    assert r.p_value < 0.01
    assert r.ci95[0] > 0


def test_align_rejects_different_items() -> None:
    with pytest.raises(ValueError, match="different items"):
        align_items(table([1, 0], ["a", "b"]), table([1, 0], ["a", "c"]))
