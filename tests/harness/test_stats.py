"""Bootstrap intervals and the paired test."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vlbench.backports import strict_zip
from vlbench.item_table import ItemTable
from vlbench.stats import (
    align_items,
    bootstrap_ci,
    paired_bootstrap,
    pooled_ci,
    pooled_difference,
    resampled_units,
    unit_generator,
)


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


# --- clustered bootstrap: source images are the resampled unit -----------------------------------


def clustered(values, clusters, unit="source image", columns=("acc",), ids=None) -> dict[str, ItemTable]:
    values = np.asarray(values, dtype=float).reshape(len(clusters), len(columns))
    ids = ids or [f"q{i}" for i in range(len(clusters))]
    return {"queries": ItemTable(ids, list(columns), values, unit=unit, clusters=list(clusters))}


def direct_cluster_replicates(populations, unit, n_resamples, seed):
    """Resample source images directly: per replicate, draw the images with replacement and take
    every row of every drawn image (as often as the image is drawn), in every population."""
    units = sorted({c for rows in populations.values() for c, _ in rows})
    rng = unit_generator(seed, unit)
    out = {name: [] for name in populations}
    for _ in range(n_resamples):
        drawn = [units[i] for i in rng.integers(0, len(units), size=len(units))]
        for name, rows in populations.items():
            by_unit: dict[str, list] = {}
            for c, v in rows:
                by_unit.setdefault(c, []).append(v)
            picked = [v for u in drawn for v in by_unit.get(u, [])]
            out[name].append(np.mean(picked, axis=0))
    return {name: np.array(v) for name, v in out.items()}


@pytest.mark.parametrize("seed", [0, 3])
def test_clustered_bootstrap_equals_direct_resampling_of_source_images(seed) -> None:
    rng = np.random.default_rng(seed)
    clusters = [f"img{c}" for c in rng.integers(0, 9, size=23)]  # 9 images, 1 to several queries each
    values = rng.random((23, 2))
    items = clustered(values, clusters, columns=("x", "y"))

    def ratio(means):
        return {"ratio": means["queries"]["x"] / means["queries"]["y"], "x": means["queries"]["x"]}

    ci = bootstrap_ci(items, ratio, n_resamples=400, seed=seed)
    reps = direct_cluster_replicates({"queries": list(strict_zip(clusters, values))}, "source image", 400, seed)
    q = reps["queries"]
    for key, direct in (("ratio", q[:, 0] / q[:, 1]), ("x", q[:, 0])):
        assert ci[key] == pytest.approx(list(np.percentile(direct, [2.5, 97.5])), rel=1e-12, abs=1e-15)


def test_populations_with_one_unit_share_the_draw_of_images() -> None:
    """Retrieval: an image brings its image query and its caption queries into a replicate."""
    rng = np.random.default_rng(7)
    images = [f"i{k}" for k in range(6)]
    cap_images = [images[k] for k in rng.integers(0, 6, size=17)]
    i2t, t2i = rng.random(6), rng.random(17)
    items = {
        "image_to_text": ItemTable(images, ["r"], i2t[:, None], unit="image", clusters=images),
        "text_to_image": ItemTable([f"c{k}" for k in range(17)], ["r"], t2i[:, None], unit="image",
                                   clusters=cap_images),
    }

    def total(means):
        return {"sum": means["image_to_text"]["r"] + means["text_to_image"]["r"]}

    ci = bootstrap_ci(items, total, n_resamples=300, seed=1)
    reps = direct_cluster_replicates(
        {"image_to_text": list(strict_zip(images, i2t)), "text_to_image": list(strict_zip(cap_images, t2i))},
        "image", 300, 1)
    direct = reps["image_to_text"] + reps["text_to_image"]
    assert ci["sum"] == pytest.approx(list(np.percentile(direct, [2.5, 97.5])), rel=1e-12)


def test_identical_rows_within_an_image_count_once() -> None:
    """Ten copies of each image's value: the clustered interval is the one-row-per-image interval,
    and much wider than resampling the rows as if they were independent."""
    values = np.random.default_rng(5).random(40)
    per_image = {"queries": ItemTable([f"u{i:02d}" for i in range(40)], ["acc"], values[:, None], unit="source image")}
    rows = np.repeat(values, 10)
    clusters = [f"u{i:02d}" for i in range(40) for _ in range(10)]
    copies = clustered(rows, clusters)
    a = bootstrap_ci(per_image, mean_metrics, n_resamples=500, seed=2)["acc"]
    b = bootstrap_ci(copies, mean_metrics, n_resamples=500, seed=2)["acc"]
    naive = bootstrap_ci(table(rows), mean_metrics, n_resamples=500, seed=2)["acc"]
    assert b == pytest.approx(a, rel=1e-12)
    assert (naive[1] - naive[0]) < 0.5 * (b[1] - b[0])


def test_interval_does_not_depend_on_the_other_columns_or_populations() -> None:
    """Issue 18: CIDEr-D's interval was different with METEOR installed (another column)."""
    rng = np.random.default_rng(11)
    n = 300
    cider, meteor = rng.gamma(2.0, 0.4, n), rng.random(n)
    ids = [str(i) for i in range(n)]
    alone = {"captions": ItemTable(ids, ["CIDEr-D"], cider[:, None], unit="image")}
    both = {"captions": ItemTable(ids, ["CIDEr-D", "METEOR"], np.stack([cider, meteor], 1), unit="image")}
    more = {**both, "other": ItemTable(["a", "b", "c"], ["z"], np.array([[1.0], [0.0], [1.0]]))}
    cis = [bootstrap_ci(t, mean_metrics, n_resamples=1000, seed=0)["CIDEr-D"] for t in (alone, both, more)]
    assert cis[0] == cis[1] == cis[2]


def test_paired_test_resamples_clusters_and_carries_them() -> None:
    rng = np.random.default_rng(12)
    clusters = [f"img{c}" for c in rng.integers(0, 12, size=40)]
    a, b = rng.random(40), rng.random(40)
    items_a, items_b = clustered(a, clusters), clustered(b, clusters)
    (r,) = paired_bootstrap(items_a, items_b, mean_metrics, n_resamples=300, seed=4)
    reps = direct_cluster_replicates({"a": list(strict_zip(clusters, a)), "b": list(strict_zip(clusters, b))},
                                     "source image", 300, 4)
    diff = reps["a"] - reps["b"]
    assert r.ci95 == pytest.approx(tuple(np.percentile(diff, [2.5, 97.5])), rel=1e-12)
    # a per-item file of an older vlbench (no units) pairs with a new one, taking its units
    old_b = {"queries": ItemTable(items_b["queries"].ids, ["acc"], b[:, None])}
    (r2,) = paired_bootstrap(items_a, old_b, mean_metrics, n_resamples=300, seed=4)
    assert r2.ci95 == r.ci95


def test_align_rejects_different_units() -> None:
    a = clustered([1.0, 0.0], ["x", "y"])
    b = clustered([1.0, 0.0], ["x", "x"])
    with pytest.raises(ValueError, match="different units"):
        align_items(a, b)


def test_units_travel_in_the_per_item_document() -> None:
    t = clustered([1.0, 0.0, 1.0], ["x", "y", "x"])["queries"]
    back = ItemTable.from_dict(t.to_dict())
    assert (back.unit, back.clusters) == ("source image", ["x", "y", "x"])
    old = ItemTable.from_dict({"ids": ["a"], "columns": ["c"], "values": [[1.0]]})
    assert (old.unit, old.clusters) == ("item", None)
    assert resampled_units({"q": t}) == {"q": "source image"}
    with pytest.raises(ValueError, match="cluster ids"):
        ItemTable(["a", "b"], ["c"], np.zeros((2, 1)), unit="image", clusters=["x"])


# --- several seeds: the two-level bootstrap ------------------------------------------------------


def test_pooled_interval_of_identical_runs_is_the_single_run_interval() -> None:
    rng = np.random.default_rng(13)
    clusters = [f"img{c}" for c in rng.integers(0, 15, size=50)]
    run = clustered(rng.random(50), clusters)
    point, ci = pooled_ci([run, run, run], mean_metrics, n_resamples=400, seed=0)
    assert point["acc"] == pytest.approx(float(run["queries"].values.mean()))
    assert ci["acc"] == pytest.approx(bootstrap_ci(run, mean_metrics, n_resamples=400, seed=0)["acc"], rel=1e-12)


def test_pooled_difference_equals_direct_two_level_resampling() -> None:
    rng = np.random.default_rng(14)
    clusters = [f"img{c}" for c in rng.integers(0, 10, size=30)]
    runs_a = [clustered(rng.random(30) + 0.1 * s, clusters) for s in range(4)]
    runs_b = [clustered(rng.random(30), clusters) for s in range(4)]
    n_rep = 200
    (r,) = pooled_difference(runs_a, runs_b, mean_metrics, n_resamples=n_rep, seed=6)
    per_run = {f"{arm}{i}": list(strict_zip(clusters, run["queries"].values[:, 0]))
               for arm, runs in (("a", runs_a), ("b", runs_b)) for i, run in enumerate(runs)}
    reps = direct_cluster_replicates(per_run, "source image", n_rep, 6)
    draws_a = unit_generator(6, "run").integers(0, 4, size=(n_rep, 4))
    draws_b = unit_generator(6, "run/b").integers(0, 4, size=(n_rep, 4))
    diff = [np.mean([reps[f"a{i}"][k] for i in draws_a[k]]) - np.mean([reps[f"b{i}"][k] for i in draws_b[k]])
            for k in range(n_rep)]
    assert r.ci95 == pytest.approx(tuple(np.percentile(diff, [2.5, 97.5])), rel=1e-12)
    assert r.difference == pytest.approx(np.mean([t["queries"].values.mean() for t in runs_a])
                                         - np.mean([t["queries"].values.mean() for t in runs_b]))


def test_seed_variance_widens_the_pooled_difference() -> None:
    """Runs that differ by seed (an offset per run) give a wider interval than images alone."""
    rng = np.random.default_rng(15)
    clusters = [f"img{c}" for c in range(200)]
    base = rng.random(200)
    runs_a = [clustered(np.clip(base + off, 0, 1), clusters) for off in (-0.1, 0.0, 0.1, 0.05, -0.05)]
    runs_b = [clustered(base, clusters) for _ in range(5)]
    (two_level,) = pooled_difference(runs_a, runs_b, mean_metrics, n_resamples=500, seed=0)
    pooled_a = {"queries": ItemTable(runs_a[0]["queries"].ids, ["acc"],
                                     np.mean([r["queries"].values for r in runs_a], axis=0), "source image", clusters)}
    (images_only,) = paired_bootstrap(pooled_a, runs_b[0], mean_metrics, n_resamples=500, seed=0)
    assert (two_level.ci95[1] - two_level.ci95[0]) > 2 * (images_only.ci95[1] - images_only.ci95[0])
    paired = pooled_difference(runs_a, runs_b, mean_metrics, n_resamples=500, seed=0, paired_runs=True)
    assert paired[0].difference == pytest.approx(two_level.difference)


# --- every task names its unit, and the units travel to `vlbench compare` ------------------------

REPO = Path(__file__).resolve().parents[2]
UNITS = {
    "mini-retrieval": {"image_to_text": "image", "text_to_image": "image"},
    "mini-shapes-retrieval": {"image_to_text": "image", "text_to_image": "image"},
    "mini-decorrelated": {"image_to_text": "source image"},
    "mini-grounding": {"phrases": "image"},
    "mini-captions": {"images": "image"},
}


@pytest.mark.parametrize("benchmark", sorted(UNITS))
def test_each_task_resamples_its_unit_and_compare_uses_it(benchmark: str, tmp_path: Path, capsys) -> None:
    from vlbench.cli import main
    from vlbench.results import ResultRecord, load_items
    from vlbench.scoring import score_file, write_evaluation

    ev = score_file(REPO / "submissions" / benchmark / "random.json", bootstrap=100, seed=0, out=tmp_path / "r.json")
    assert ev.result.bootstrap["units"] == UNITS[benchmark]
    out = write_evaluation(ev, tmp_path / "r.json")
    items = load_items(tmp_path / ResultRecord.load(out).per_item)
    for name, t in items.items():
        assert (t.unit, t.clusters) == (ev.items[name].unit, ev.items[name].clusters)
    if benchmark == "mini-decorrelated":  # v3.0: one query per pool image, each its own unit
        t = items["image_to_text"]
        assert len(set(t.clusters)) == len(t.ids) and t.clusters != t.ids  # clusters are source image ids
    if benchmark.endswith("retrieval"):  # a caption's unit is its image
        t2i = items["text_to_image"]
        assert set(t2i.clusters) == set(items["image_to_text"].ids)
    capsys.readouterr()
    assert main(["compare", str(out), str(out), "--bootstrap", "50", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and all(r["difference"] == 0 and r["p_value"] == 1.0 for r in rows)


def test_caption_intervals_do_not_depend_on_meteor() -> None:
    """Issue 18: the same file and seed gave CIDEr-D [0.728, 0.898] on the core install and
    [0.718, 0.892] with METEOR's column present. Now one interval, whatever columns are scored."""
    from vlbench.scoring import score_file

    path = REPO / "submissions" / "mini-captions" / "caption-nn.json"
    full = score_file(path, bootstrap=300, seed=0)
    assert "METEOR" in full.result.ci95  # computed in Python, no Java needed
    table = full.items["images"]

    def interval(columns: list[str]) -> tuple[float, float]:
        keep = [table.columns.index(c) for c in columns]
        only = {"images": ItemTable(table.ids, columns, table.values[:, keep], "image")}
        return bootstrap_ci(only, lambda m: {"CIDEr-D": m["images"]["CIDEr-D"]},
                            n_resamples=300, seed=0)["CIDEr-D"]

    without_meteor = [c for c in table.columns if not c.startswith("METEOR")]
    assert len(without_meteor) < len(table.columns)
    assert full.result.ci95["CIDEr-D"] == list(interval(["CIDEr-D"]))
    assert interval(without_meteor) == interval(["CIDEr-D"]) == interval(list(table.columns))
