"""Scores and paired differences of an experiment's submissions (`experiment.py`; the README,
results.json and plot that show them: `report.py`).

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

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

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
# absent-dependent@1 (issue 30, "absent dependent named@1"): the top caption names the dependent of
# a cue that is in the query image while that dependent is not. Unlike named@1 it sees the
# shortcut on controls too (a control shows a cue without its dependent, and naming that dependent
# breaks no ODmAP rule there, since it was never removed); on partner queries it equals partner@1.
# any-absent-dependent@1: the top caption names any dependent class absent from the image (its cue
# there or not), the issue's wording read literally (tasks/mini/README.md, issue 30's amendment).
ABSENT_DEPENDENT = [f"{m}@1/{g}" for m in ("absent-dependent", "any-absent-dependent") for g in ("partner", "control")]
MENTIONS = [*NAMED, "partner@1/partner", "present@1/partner", "present@1/control", *ABSENT_DEPENDENT]
# Differences reported between arms: (a, b) means a - b.
CONTRASTS = (("synthetic", "control"), ("synthetic", "biased"), ("unbiased", "biased"),
             ("synthetic", "synthetic-null"), ("synthetic-null", "control"),
             # the dose-response (exploratory; arms run only when named): each dose against D'-null,
             # and D' (about 60% counterexamples) against the highest dose
             ("dose-10", "synthetic-null"), ("dose-30", "synthetic-null"), ("synthetic", "dose-30"))
DIFF_METRICS = [*DECORRELATED, "i2t_R@1", "i2t_R@5", "i2t_R@10", "t2i_R@1", *MENTIONS]
NAMED_BENCHMARK = "removed-class mentions"
_SHARES = ("named@", "partner@", "present@", "absent-dependent@", "any-absent-dependent@")


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


def _cue_pairs(gt: Any) -> list[tuple[str, str]]:
    """(cue, dependent) pairs of the manifest; an undirected (v2) pair counts both ways."""
    params = gt.raw.get("params", {})
    pairs = [(a, b) for a, b in params.get("partner_pairs", [])]
    return pairs if params.get("directed") else pairs + [(b, a) for a, b in pairs]


def _absent_dependent_masks(gt: Any) -> tuple[np.ndarray, np.ndarray]:
    """(Q, B) packed, per query: the dependents of cues in the image that are not in it; and every
    dependent class not in it."""
    from vlbench.tasks.decorrelated.metrics import pack_classes

    index = {c: i for i, c in enumerate(gt.classes)}
    present = np.unpackbits(gt.present, axis=1, count=len(gt.classes)).astype(bool)
    pairs = [(index[c], index[d]) for c, d in _cue_pairs(gt)]
    dependents = sorted({d for _, d in pairs})
    of_cue = [sorted({d for c, d in pairs if present[q, c] and not present[q, d]}) for q in range(len(present))]
    anyone = [[d for d in dependents if not present[q, d]] for q in range(len(present))]
    return pack_classes(of_cue, len(gt.classes)), pack_classes(anyone, len(gt.classes))


def removed_mentions(evaluation: Any) -> dict[str, ItemTable]:
    """Per query: whether the top caption, and what share of the top 10, name a removed class;
    whether the top caption names the removed partner of a remaining class, whether it names
    a present class, and whether it names a dependent class that is absent from the query image.

    Computed from the decorrelated task's own ground truth (the gallery's class mentions by its
    word matcher) and the validated ranking, so it agrees with ODmAP's rules by construction."""
    sub = evaluation.submission
    gt, ranks = sub.ground_truth, np.asarray(sub.parsed)
    masks = gt.caption_masks[ranks]  # (Q, 10, B)
    named = np.any(masks & gt.removed[:, None, :], axis=-1).astype(np.float64)  # (Q, 10)
    partner = np.any(masks[:, 0] & _partner_masks(gt), axis=-1).astype(np.float64)
    present = np.any(masks[:, 0] & gt.present, axis=-1).astype(np.float64)
    of_cue, anyone = _absent_dependent_masks(gt)
    absent_dependent = np.any(masks[:, 0] & of_cue, axis=-1).astype(np.float64)
    any_absent_dependent = np.any(masks[:, 0] & anyone, axis=-1).astype(np.float64)
    columns, values = [], []
    for g in gt.groups:
        member = np.array([qg == g for qg in gt.query_groups], dtype=np.float64)
        for k in (1, 10):
            columns.append(f"named@{k}/{g}")
            values.append(named[:, :k].mean(axis=1) * member)
        columns += [f"partner@1/{g}", f"present@1/{g}", f"absent-dependent@1/{g}", f"any-absent-dependent@1/{g}",
                    f"group/{g}"]
        values += [partner * member, present * member, absent_dependent * member, any_absent_dependent * member, member]
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
    from vlbench.ground_truth import load_ground_truth

    return load_ground_truth(registry().benchmark(benchmark_id), data_dir)[0]


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
    of_cue, anyone = _absent_dependent_masks(dec)
    named.update({f"absent-dependent@1/{g}": v for g, v in share(of_cue).items()})
    named.update({f"any-absent-dependent@1/{g}": v for g, v in share(anyone).items()})
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
    results as they were has not moved the model enough to test anything."""
    out = []
    for arm in exp.arms:
        if arm.init is None:
            continue
        for seed in exp.seeds:
            if (arm.init, seed, DECORRELATED_BENCHMARK) not in scored:  # a subset of arms without the starting one
                continue
            tuned = np.asarray(scored[(arm.name, seed, DECORRELATED_BENCHMARK)].submission.parsed)
            start = np.asarray(scored[(arm.init, seed, DECORRELATED_BENCHMARK)].submission.parsed)
            out.append({"arm": arm.name, "init": arm.init, "seed": seed,
                        "top1_changed": float(np.mean(tuned[:, 0] != start[:, 0]))})
    return out


def cooccurrence(exp: Any, scored: Mapping[tuple[str, int, str], Any]) -> list[dict[str, Any]]:
    """Per D' arm and seed: P(dependent | cue) in D, D' and D + D' as its run measured it on the
    pairs it trained on (the submission's `meta.extra.recipe.train.synthetic`), and how many D'
    pairs break the co-occurrence."""
    out = []
    for arm in exp.arms:
        for seed in exp.seeds:
            key = (arm.name, seed, DECORRELATED_BENCHMARK)
            if key not in scored:
                continue
            train = (scored[key].submission.meta.get("extra", {}).get("recipe", {}).get("train") or {})
            facts = train.get("synthetic")
            if facts:
                out.append({"arm": arm.name, "seed": seed, "synthetic_pairs": train.get("synthetic_pairs"), **facts})
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
              "fine_tune_moved": fine_tune_moved(exp, scored), "cooccurrence": cooccurrence(exp, scored)}
    report["preregistered"] = preregistration.evaluate(report)
    return report
