"""Score a validated submission, build its result record, and write it.

Validation is `vlbench.submission`'s; this module takes what it returns.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vlbench import __version__
from vlbench.atomic_files import atomic_write_many, dumps_json
from vlbench.errors import UsageError
from vlbench.item_table import ItemTable
from vlbench.jsonio import LoadedJson, gc_paused
from vlbench.output_rule import PER_ITEM, RESULT_RECORD, check_file_target, target_problem
from vlbench.results import ResultRecord, items_document, per_item_path
from vlbench.stats import bootstrap_ci, resampled_units
from vlbench.submission import ValidatedSubmission, ValidationOptions, options_of, validate
from vlbench.task_type import TaskScores


@dataclass
class Evaluation:
    result: ResultRecord
    items: dict[str, ItemTable]
    submission: ValidatedSubmission


def _clean(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


def score_validated(
    sub: ValidatedSubmission, bootstrap: int = 1000, seed: int = 0, started: float | None = None
) -> Evaluation:
    started = time.perf_counter() if started is None else started
    task, benchmark = sub.task, sub.benchmark
    scored: TaskScores = task.score(sub.parsed, sub.ground_truth, benchmark)
    tolerated = [i.message for i in task.strict_issues(sub.parsed, sub.ground_truth, benchmark)]
    ci = (
        bootstrap_ci(
            scored.items,
            lambda means: task.metrics_from_means(benchmark, means),
            n_resamples=bootstrap,
            seed=seed,
        )
        if bootstrap > 0 and scored.items
        else {}
    )
    record = ResultRecord(
        benchmark=benchmark.id,
        task=benchmark.task,
        benchmark_version=benchmark.version,
        harness_version=__version__,
        submission_sha256=sub.submission_sha256,
        ground_truth_sha256=sub.ground_truth_sha256,
        meta=sub.meta,
        scores={k: _clean(v) for k, v in scored.scores.items()},
        main_score=benchmark.main_score,
        ci95={k: v for k, v in ci.items() if k in scored.scores},
        n=dict(scored.n),
        bootstrap={"resamples": bootstrap, "seed": seed, "units": resampled_units(scored.items)} if ci else {},
        elapsed_s=round(time.perf_counter() - started, 4),
        created_utc=dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        extra=dict(scored.extra),
    )
    if tolerated:
        record.extra["warnings"] = [*record.extra.get("warnings", []), *tolerated]
    return Evaluation(record, scored.items, sub)


def score_file(
    source: str | os.PathLike | LoadedJson,
    options: ValidationOptions | None = None,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    **fields: Any,
) -> Evaluation:
    """Read, validate (`submission.validate`, same options) and score one submission (raises
    InvalidSubmission / UsageError). A file read in another tool's format records it in the
    result's `extra.input_format`."""
    started = time.perf_counter()
    with gc_paused():
        sub = validate(source, options_of(options, fields))
        evaluation = score_validated(sub, bootstrap=bootstrap, seed=seed, started=started)
    if sub.input_format is not None:
        evaluation.result.extra["input_format"] = sub.input_format
    return evaluation


def check_evaluation_target(out: str | os.PathLike, *, force: bool = False, option: str = "--out",
                            force_hint: str = "--force") -> Path:
    """Refuse, before any work, a result record path that the output rule forbids: the record or
    its per-item file there is not one vlbench wrote (unless `force`), or its folder is missing."""
    out = check_file_target(out, RESULT_RECORD, force=force, option=option, force_hint=force_hint)
    items = per_item_path(out)
    problem = target_problem(items, PER_ITEM, force=force, option=f"{option} {out} writes its per-item file beside it:",
                             force_hint=force_hint)
    if problem is not None:
        raise UsageError(problem)
    return out


def write_evaluation(evaluation: Evaluation, out: str | os.PathLike, with_items: bool = True,
                     force: bool = False) -> Path:
    """Write the result record and its per-item file next to it: both, or neither on failure
    (a refused or failed run leaves nothing behind). The output rule holds (`check_evaluation_target`).
    Write errors are UsageErrors."""
    out = check_evaluation_target(out, force=force)
    files: list[tuple[Path, bytes]] = []
    per_item = None
    if with_items and evaluation.items:
        items_path = per_item_path(out)
        files.append((items_path, dumps_json(items_document(evaluation.items), indent=None)))
        per_item = items_path.name
    record = dataclasses.replace(evaluation.result, per_item=per_item)
    try:
        files.append((out, dumps_json(record.to_dict())))
    except (ValueError, RecursionError) as exc:  # meta validation should make this impossible
        raise UsageError(f"the result cannot be written as JSON ({exc})") from None
    atomic_write_many(files)
    evaluation.result.per_item = per_item
    return out
