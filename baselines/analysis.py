"""Scores, paired differences and the plot of an experiment's submissions (`experiment.py`).

Every number comes from vlbench's own scoring of the written submission files (`score_file`), so
the report equals what `vlbench score` gives for the same files. Intervals are vlbench's
percentile bootstrap over source images (the unit the queries were sampled as); differences
between arms of one seed use the paired bootstrap (the same resampled images for both arms).
Pooled over seeds, a value is the mean of the seeds' values, and its interval comes from a
two-level bootstrap that resamples the seeds as well as the images, so seed-to-seed variance is
part of it. Seeds of two arms fine-tuned from the same seed's model are drawn together.
Chance rows are the exact expected values of random ranking, not one random draw.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.atomic_files import atomic_write_json, staged_folder
from vlbench.item_table import ItemTable
from vlbench.registry import registry
from vlbench.scoring import score_file
from vlbench.stats import bootstrap_ci, paired_bootstrap, pooled_ci, pooled_difference

from . import preregistration
from .experiment import DECORRELATED_BENCHMARK, RETRIEVAL_BENCHMARK

# What the table shows, per benchmark (the decorrelated groups reported separately).
DECORRELATED = [f"ODmAP@{k}/{g}" for g in ("partner", "control") for k in (1, 5, 10)]
RETRIEVAL = [f"{d}_R@{k}" for d in ("i2t", "t2i") for k in (1, 5, 10)]
COLUMNS = {DECORRELATED_BENCHMARK: DECORRELATED, RETRIEVAL_BENCHMARK: RETRIEVAL}
# The paper's claim in its own words: retrieved captions that name an object which is not there.
# Share of a query's top-k captions naming a removed class (lower is better), per group; and, for
# the pre-registered gates (`preregistration.py`), whether the top caption names the removed partner
# of a remaining class (the shortcut's own error) or a class that is present (recognition).
NAMED = [f"named@{k}/{g}" for g in ("partner", "control") for k in (1, 10)]
MENTIONS = [*NAMED, "partner@1/partner", "present@1/partner", "present@1/control"]
# Differences reported between arms: (a, b) means a - b.
CONTRASTS = (("synthetic", "control"), ("synthetic", "biased"), ("unbiased", "biased"))
DIFF_METRICS = [*DECORRELATED, "i2t_R@1", "i2t_R@5", "i2t_R@10", "t2i_R@1", *MENTIONS]
NAMED_BENCHMARK = "removed-class mentions"
_SHARES = ("named@", "partner@", "present@")


def _partner_masks(gt: Any) -> np.ndarray:
    """(Q, B) packed: the removed classes whose partner stays in the query image."""
    from vlbench.tasks.decorrelated.metrics import pack_classes

    index = {c: i for i, c in enumerate(gt.classes)}
    params = gt.raw.get("params", {})
    partner = {}
    for a, b in params.get("partner_pairs", []):
        partner[b] = a  # (cue, dependent) when directed: only a removed dependent counts
        if not params.get("directed"):
            partner[a] = b
    removed = np.unpackbits(gt.removed, axis=1, count=len(gt.classes)).astype(bool)
    present = np.unpackbits(gt.present, axis=1, count=len(gt.classes)).astype(bool)
    sets = [[index[c] for c in gt.classes if removed[q, index[c]] and c in partner and present[q, index[partner[c]]]]
            for q in range(len(gt.query_ids))]
    return pack_classes(sets, len(gt.classes))


def removed_mentions(evaluation: Any) -> dict[str, ItemTable]:
    """Per query: whether the top caption, and what share of the top 10, name a removed class;
    whether the top caption names the removed partner of a remaining class, and whether it names
    a present class.

    Computed from the decorrelated task's own ground truth (the gallery's class mentions by its
    word matcher) and the validated ranking, so it agrees with ODmAP's rules by construction."""
    sub = evaluation.submission
    gt, ranks = sub.ground_truth, np.asarray(sub.parsed)
    masks = gt.caption_masks[ranks]  # (Q, 10, B)
    named = np.any(masks & gt.removed[:, None, :], axis=-1).astype(np.float64)  # (Q, 10)
    partner = np.any(masks[:, 0] & _partner_masks(gt), axis=-1).astype(np.float64)
    present = np.any(masks[:, 0] & gt.present, axis=-1).astype(np.float64)
    columns, values = [], []
    for g in gt.groups:
        member = np.array([qg == g for qg in gt.query_groups], dtype=np.float64)
        for k in (1, 10):
            columns.append(f"named@{k}/{g}")
            values.append(named[:, :k].mean(axis=1) * member)
        columns += [f"partner@1/{g}", f"present@1/{g}", f"group/{g}"]
        values += [partner * member, present * member, member]
    return {"queries": ItemTable(list(gt.query_ids), columns, np.stack(values, axis=1), unit="source image",
                                 clusters=list(gt.query_sources))}


def named_from_means(means: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
    m = means["queries"]
    out = {}
    for key in m:
        if key.startswith(_SHARES):
            share = np.asarray(m["group/" + key.rsplit("/", 1)[1]], dtype=np.float64)
            num = np.asarray(m[key], dtype=np.float64)
            out[key] = np.divide(num, share, out=np.full_like(num, np.nan), where=share > 0)
    return out


def _metrics_fn(benchmark_id: str) -> Any:
    if benchmark_id == NAMED_BENCHMARK:
        return named_from_means
    benchmark = registry().benchmark(benchmark_id)
    task = registry().task_of(benchmark)
    return lambda means: task.metrics_from_means(benchmark, means)


def _score_runs(runs: Sequence[Mapping[str, Any]], data_dir: Path | None, bootstrap: int) -> dict[tuple[str, int, str], Any]:
    scored = {}
    for run in runs:
        for benchmark, path in run["files"].items():
            ev = score_file(path, data_dir=data_dir, bootstrap=bootstrap, seed=0)
            scored[(run["arm"], run["seed"], benchmark)] = ev
            if benchmark == DECORRELATED_BENCHMARK:
                items = removed_mentions(ev)
                point = named_from_means({k: t.column_means() for k, t in items.items()})
                ci = bootstrap_ci(items, named_from_means, n_resamples=bootstrap, seed=0) if bootstrap else {}
                scored[(run["arm"], run["seed"], NAMED_BENCHMARK)] = _Named(items, point, ci)
    return scored


class _Named:
    """The removed-class mention statistics of one run, shaped like an Evaluation's parts."""

    def __init__(self, items: dict[str, ItemTable], point: Mapping[str, np.ndarray], ci: Mapping[str, Any]) -> None:
        self.items = items
        self.scores = {k: float(np.asarray(v)[0]) for k, v in point.items()}
        self.ci95 = {k: [float(x) for x in v] for k, v in ci.items()}


def _ground_truth(benchmark_id: str, data_dir: Path | None) -> Any:
    from vlbench.ground_truth import locate_ground_truth

    benchmark = registry().benchmark(benchmark_id)
    task = registry().task_of(benchmark)
    return task.load_ground_truth(benchmark, locate_ground_truth(benchmark, data_dir))


def _group_means(per_query: np.ndarray, groups: Sequence[str | None], names: Sequence[str]) -> dict[str, float]:
    return {g: float(per_query[[qg == g for qg in groups]].mean()) for g in names}


def chance_expected(data_dir: Path | None) -> dict[str, dict[str, Any]]:
    """The exact expected scores of random ranking (the task's `random_predictions`: each query's
    top 10 drawn uniformly without replacement from its gallery), per benchmark of the report."""
    from vlbench.tasks.decorrelated.metrics import KS, expected_average_precision_at_k
    from vlbench.tasks.retrieval.metrics import expected_hit_at_k

    dec = _ground_truth(DECORRELATED_BENCHMARK, data_dir)
    n_gallery = len(dec.caption_index)
    decorrelated: dict[str, float] = {}
    for k in KS:
        ap = expected_average_precision_at_k(dec.n_relevant, n_gallery, k)
        decorrelated[f"ODmAP@{k}"] = float(ap.mean())
        for g, v in _group_means(ap, dec.query_groups, dec.groups).items():
            decorrelated[f"ODmAP@{k}/{g}"] = v
    # a top-k caption names a class of a set with probability M/N (M such captions of N), at any rank
    def share(classes: np.ndarray) -> dict[str, float]:
        naming = np.any(dec.caption_masks[None, :, :] & classes[:, None, :], axis=-1).sum(axis=1) / n_gallery
        return _group_means(naming, dec.query_groups, dec.groups)

    named = {f"named@{k}/{g}": v for g, v in share(dec.removed).items() for k in (1, 10)}
    named.update({f"partner@1/{g}": v for g, v in share(_partner_masks(dec)).items()})
    named.update({f"present@1/{g}": v for g, v in share(dec.present).items()})
    ret = _ground_truth(RETRIEVAL_BENCHMARK, data_dir)
    per_fold_captions = np.bincount(ret.caption_fold, minlength=ret.folds)
    per_fold_images = np.bincount(ret.image_fold, minlength=ret.folds)
    captions_of = np.bincount(ret.caption_image, minlength=len(ret.images))
    retrieval = {}
    for k in KS:
        retrieval[f"i2t_R@{k}"] = float(expected_hit_at_k(captions_of, per_fold_captions[ret.image_fold], k).mean())
        retrieval[f"t2i_R@{k}"] = float(expected_hit_at_k(np.ones(len(ret.captions)), per_fold_images[ret.caption_fold], k).mean())
    return {DECORRELATED_BENCHMARK: {"scores": decorrelated}, RETRIEVAL_BENCHMARK: {"scores": retrieval},
            NAMED_BENCHMARK: {"scores": named}}


def fine_tune_moved(exp: Any, scored: Mapping[tuple[str, int, str], Any]) -> list[dict[str, Any]]:
    """Per fine-tuned arm and seed: the share of decorrelated queries whose top-1 caption differs
    from the top-1 of the model it started from (same seed). A fine-tune that leaves most top-1
    results as they were has not moved the model enough to test anything (issue 21)."""
    out = []
    for arm in exp.arms:
        if arm.init is None:
            continue
        for seed in exp.seeds:
            tuned = np.asarray(scored[(arm.name, seed, DECORRELATED_BENCHMARK)].submission.parsed)
            start = np.asarray(scored[(arm.init, seed, DECORRELATED_BENCHMARK)].submission.parsed)
            out.append({"arm": arm.name, "init": arm.init, "seed": seed,
                        "top1_changed": float(np.mean(tuned[:, 0] != start[:, 0]))})
    return out


def _paired_runs(exp: Any, a: str, b: str) -> bool:
    """Whether run i of arm a and run i of arm b share a model (one starts from the other's
    weights of the same seed, or both from a third arm's)."""
    init_a, init_b = exp.arm(a).init, exp.arm(b).init
    return init_a == b or init_b == a or (init_a is not None and init_a == init_b)


def analyse(exp: Any, runs: Sequence[Mapping[str, Any]], *, data_dir: Path | None, bootstrap: int) -> dict[str, Any]:
    scored = _score_runs(runs, data_dir, bootstrap)
    arms = [a.name for a in exp.arms]
    seeds = list(exp.seeds)
    per_run = []
    for arm in arms:
        for seed in seeds:
            row: dict[str, Any] = {"arm": arm, "seed": seed, "scores": {}, "ci95": {}, "files": {}}
            for benchmark, columns in COLUMNS.items():
                ev = scored[(arm, seed, benchmark)]
                row["files"][benchmark] = {"submission_sha256": ev.result.submission_sha256,
                                           "benchmark_version": ev.result.benchmark_version}
                for c in columns:
                    row["scores"][c] = ev.result.scores[c]
                    if c in ev.result.ci95:
                        row["ci95"][c] = list(ev.result.ci95[c])
            named = scored[(arm, seed, NAMED_BENCHMARK)]
            row["scores"].update({c: named.scores[c] for c in MENTIONS})
            row["ci95"].update({c: named.ci95[c] for c in MENTIONS if c in named.ci95})
            per_run.append(row)
    groups = {**COLUMNS, NAMED_BENCHMARK: MENTIONS}
    runs_of = {(arm, b): [scored[(arm, s, b)].items for s in seeds] for arm in arms for b in groups}
    pooled = []
    for arm in arms:
        row = {"arm": arm, "scores": {}, "ci95": {}}
        for benchmark, columns in groups.items():
            point, ci = pooled_ci(runs_of[(arm, benchmark)], _metrics_fn(benchmark), n_resamples=bootstrap, seed=0)
            for c in columns:
                row["scores"][c] = point[c]
                if c in ci:
                    row["ci95"][c] = ci[c]
        pooled.append(row)
    diffs = []
    if bootstrap:
        for a, b in CONTRASTS:
            if a not in arms or b not in arms:
                continue
            for benchmark in groups:
                fn = _metrics_fn(benchmark)
                labelled = [(f"seed {s}", paired_bootstrap(scored[(a, s, benchmark)].items, scored[(b, s, benchmark)].items,
                                                         fn, bootstrap, 0)) for s in seeds]
                labelled.append(("pooled", pooled_difference(runs_of[(a, benchmark)], runs_of[(b, benchmark)], fn, bootstrap, 0,
                                                             paired_runs=_paired_runs(exp, a, b))))
                for label, comparisons in labelled:
                    for c in comparisons:
                        if c.metric in DIFF_METRICS:
                            diffs.append({"a": a, "b": b, "over": label, "metric": c.metric, "a_value": c.a,
                                          "b_value": c.b, "difference": c.difference, "ci95": list(c.ci95),
                                          "p_value": c.p_value})
    order = {label: i for i, label in enumerate([*(f"seed {s}" for s in seeds), "pooled"])}
    diffs.sort(key=lambda d: (CONTRASTS.index((d["a"], d["b"])), order[d["over"]]))
    report = {"runs": per_run, "pooled": pooled, "differences": diffs, "chance": chance_expected(data_dir),
              "fine_tune_moved": fine_tune_moved(exp, scored)}
    report["preregistered"] = preregistration.evaluate(report)
    return report


# --- writing -----------------------------------------------------------------------------------

def _pct(v: float | None) -> str:
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.1f}"


def _ci(ci: Sequence[float] | None) -> str:
    return "" if not ci else f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _signed(v: float) -> str:
    return f"{100 * v:+.1f}"


TOY_RUN = ("**A toy run (`--quick`)**: a tiny model trained for a few steps, to test the pipeline end to "
           "end. Its numbers say nothing about the method; the experiment's result comes from the full run "
           "(without `--quick`).")


def render_markdown(exp: Any, report: Mapping[str, Any], command: str, timing: Mapping[str, Any],
                    quick: bool = False) -> str:
    labels = {a.name: a.label for a in exp.arms}
    lines = [
        f"# {exp.name}: results" + (" of a toy run (--quick)" if quick else ""),
        "",
        *([TOY_RUN, ""] if quick else []),
        "Generated by `" + command + "` (numbers are what `vlbench score` gives for the submissions; "
        "percent, 95% bootstrap intervals in brackets: source images resampled, and seeds too when "
        "pooled). Partner removals and matched "
        "controls are reported separately. How the arms are made: `baselines/README.md`.",
        "",
        f"Seeds: {', '.join(map(str, exp.seeds))}. Wall time: {timing.get('total_s', '?')} s "
        f"({timing.get('workers', '?')} worker processes, one thread each).",
        "",
    ]
    lines += preregistration.render(report["preregistered"], exp.preregistered)
    moved = report.get("fine_tune_moved", [])
    if moved:
        shares = ", ".join(
            f"{labels[arm]} {_pct(float(np.mean([m['top1_changed'] for m in moved if m['arm'] == arm])))}%"
            for arm in dict.fromkeys(m["arm"] for m in moved))
        lines += [f"Did the fine-tunes move the model? Share of decorrelated queries whose top-1 caption "
                  f"changed from the starting model's (mean over seeds): {shares}.", ""]
    lines += ["## Pooled over seeds (mean over seeds; the interval resamples seeds and source images)", ""]
    header = ["arm", *DECORRELATED, *RETRIEVAL]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for row in report["pooled"]:
        cells = [labels[row["arm"]]] + [_pct(row["scores"][c]) + _ci(row["ci95"].get(c)) for c in [*DECORRELATED, *RETRIEVAL]]
        lines.append("| " + " | ".join(cells) + " |")
    chance = report["chance"]
    floor = [chance[DECORRELATED_BENCHMARK]["scores"].get(c) for c in DECORRELATED] + [chance[RETRIEVAL_BENCHMARK]["scores"].get(c) for c in RETRIEVAL]
    lines.append("| chance (expected value of random ranking) | " + " | ".join(_pct(v) for v in floor) + " |")
    lines += ["", "## What the top captions name", "",
              "The paper's claim in its own terms: the share of queries whose top caption (named@1), and the "
              "share of the top 10 captions (named@10), that name a class removed from the query image. "
              "partner@1: the top caption names the removed partner of a class that stays (the shortcut's "
              "own error; lower is better). present@1: the top caption names a class that is in the query "
              "image (recognition; higher is better). Computed from the decorrelated task's own ground truth "
              "(the gallery's class mentions).", "",
              "| arm | " + " | ".join(MENTIONS) + " |", "|" + "---|" * (len(MENTIONS) + 1)]
    for row in report["pooled"]:
        lines.append(f"| {labels[row['arm']]} | " + " | ".join(_pct(row["scores"][c]) + _ci(row["ci95"].get(c)) for c in MENTIONS) + " |")
    named_floor = chance.get(NAMED_BENCHMARK, {}).get("scores", {})
    lines.append("| chance (expected value of random ranking) | " + " | ".join(_pct(named_floor.get(c)) for c in MENTIONS) + " |")
    every = [*DECORRELATED, *RETRIEVAL, *MENTIONS]
    lines += ["", "## Every run", "", "| arm | seed | " + " | ".join(every) + " |", "|" + "---|" * (len(every) + 2)]
    for row in report["runs"]:
        cells = [labels[row["arm"]], str(row["seed"])] + [_pct(row["scores"][c]) for c in every]
        lines.append("| " + " | ".join(cells) + " |")
    if report["differences"]:
        lines += ["", "## Paired differences (a - b, percent points; per seed: paired bootstrap over source images; "
                  "pooled: two-level bootstrap over seeds and source images)", ""]
        metrics = [m for m in DIFF_METRICS if any(d["metric"] == m for d in report["differences"])]
        for a, b in CONTRASTS:
            rows = [d for d in report["differences"] if d["a"] == a and d["b"] == b]
            if not rows:
                continue
            lines += [f"### {labels[a]} - {labels[b]}", "", "| over | " + " | ".join(metrics) + " |",
                      "|" + "---|" * (len(metrics) + 1)]
            for over in dict.fromkeys(d["over"] for d in rows):
                cells = []
                for m in metrics:
                    d = next((x for x in rows if x["over"] == over and x["metric"] == m), None)
                    cells.append("" if d is None else f"{_signed(d['difference'])} [{_signed(d['ci95'][0])}, {_signed(d['ci95'][1])}]")
                lines.append(f"| {over} | " + " | ".join(cells) + " |")
            lines.append("")
    lines += ["", "![partner-removal ODmAP@1 against i2t R@1](plot.png)", ""]
    return "\n".join(lines)


def plot(exp: Any, report: Mapping[str, Any], path: Path, quick: bool = False) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {"biased": "#d62728", "control": "#1f77b4", "synthetic": "#2ca02c", "unbiased": "#7f7f7f"}
    markers = "osD^v<>"
    fig, ax = plt.subplots(figsize=(6.4, 4.8), dpi=100)
    labels = {a.name: a.label for a in exp.arms}
    x_key, y_key = exp.plot_x, exp.plot_y
    for row in report["runs"]:
        x, y = row["scores"][x_key], row["scores"][y_key]
        xe = row["ci95"].get(x_key)
        ye = row["ci95"].get(y_key)
        ax.errorbar(100 * x, 100 * y,
                    xerr=None if xe is None else [[100 * (x - xe[0])], [100 * (xe[1] - x)]],
                    yerr=None if ye is None else [[100 * (y - ye[0])], [100 * (ye[1] - y)]],
                    fmt=markers[exp.seeds.index(row["seed"]) % len(markers)], color=colours.get(row["arm"], "k"),
                    alpha=0.8, capsize=2, markersize=6,
                    label=f"{labels[row['arm']]}" if row["seed"] == exp.seeds[0] else None)
    floor = report["chance"][DECORRELATED_BENCHMARK]["scores"].get(y_key)
    if floor is not None:
        ax.axhline(100 * floor, color="k", linestyle=":", linewidth=1, label="chance (expected, random ranking)")
    ax.set_xlabel(f"{x_key} on {RETRIEVAL_BENCHMARK} (%)")
    ax.set_ylabel(f"{y_key} on {DECORRELATED_BENCHMARK} (%)")
    toy = "TOY RUN (--quick), numbers mean nothing: " if quick else ""
    ax.set_title(f"{toy}{exp.name}: one point per arm and seed (markers: seeds {', '.join(map(str, exp.seeds))})",
                 fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    # fixed metadata: the same numbers give the same PNG bytes
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)


def write_report(exp: Any, jobs: Sequence[Any], runs: Sequence[Mapping[str, Any]], out_dir: Path, *,
                 data_dir: Path | None, bootstrap: int, command: str, quick: bool,
                 timing: Mapping[str, Any], started: float | None = None) -> None:
    """Score everything and replace `out_dir` with README.md, results.json and plot.png at once.
    `started`: `time.perf_counter()` at the experiment's start, for the total wall time."""
    import time

    from .experiment import describe
    from .provenance import git_commit, package_versions

    report = analyse(exp, runs, data_dir=data_dir, bootstrap=bootstrap)
    timing = {**timing}
    if started is not None:
        timing["total_s"] = round(time.perf_counter() - started, 1)
    out_dir = Path(out_dir)
    with staged_folder(out_dir) as staging:
        total = sum(r.get("wall_time_s", 0) for r in runs)
        timing.setdefault("runs_wall_time_sum_s", round(total, 1))
        doc = {"experiment": describe(exp), "quick": quick, "command": command, "bootstrap": {"resamples": bootstrap, "seed": 0},
               "timing": timing, "packages": package_versions(), "git_commit": git_commit(),
               "train": [{"arm": r["arm"], "seed": r["seed"], **(r.get("train") or {})} for r in runs], **report}
        atomic_write_json(staging / "results.json", doc, indent=1)
        (staging / "README.md").write_text(render_markdown(exp, report, command, timing, quick=quick),
                                           encoding="utf-8")
        plot(exp, report, staging / "plot.png", quick=quick)
