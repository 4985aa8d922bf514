"""Score a validated submission, build its result record, and write it.

Validation is `vlbench.submission`'s; this module takes what it returns. The record is built once,
in `score_validated`, with everything it holds (the warnings of what the scoring tolerated,
another tool's input format, the name of its per-item file when it is to be written to `out`);
`write_evaluation` writes it as it is.
"""

from __future__ import annotations

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
    sub: ValidatedSubmission,
    bootstrap: int = 1000,
    seed: int = 0,
    started: float | None = None,
    out: str | os.PathLike | None = None,
) -> Evaluation:
    """Score, bootstrap and build the result record. `out`: where `write_evaluation` will write
    the record (the record names its per-item file, written next to it)."""
    started = time.perf_counter() if started is None else started
    task, benchmark = sub.task, sub.benchmark
    scored: TaskScores = task.score(sub.parsed, sub.ground_truth, benchmark)
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
    extra = dict(scored.extra)
    if sub.tolerated:
        extra["warnings"] = [*extra.get("warnings", []), *(i.message for i in sub.tolerated)]
    if sub.input_format is not None:
        extra["input_format"] = sub.input_format
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
        per_item=per_item_path(out).name if out is not None and scored.items else None,
        elapsed_s=round(time.perf_counter() - started, 4),
        created_utc=dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        extra=extra,
    )
    return Evaluation(record, scored.items, sub)


def score_file(
    source: str | os.PathLike | LoadedJson,
    options: ValidationOptions | None = None,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    out: str | os.PathLike | None = None,
    **fields: Any,
) -> Evaluation:
    """Read, validate (`submission.validate`, same options) and score one submission (raises
    InvalidSubmission / UsageError). A file read in another tool's format records it in the
    result's `extra.input_format`. `out`: where the record is to be written (`write_evaluation`)."""
    started = time.perf_counter()
    with gc_paused():
        sub = validate(source, options_of(options, fields))
        return score_validated(sub, bootstrap=bootstrap, seed=seed, started=started, out=out)


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


def write_evaluation(evaluation: Evaluation, out: str | os.PathLike, force: bool = False) -> Path:
    """Write the result record to `out` as it was built, and the per-item file it names next to
    it: both, or neither on failure (a refused or failed run leaves nothing behind). The output
    rule holds (`check_evaluation_target`). Write errors are UsageErrors. The record names its
    per-item file when it was scored for this `out`."""
    out = check_evaluation_target(out, force=force)
    record = evaluation.result
    files: list[tuple[Path, bytes]] = []
    if record.per_item is not None:
        items_path = per_item_path(out)
        if items_path.name != record.per_item:
            raise ValueError(f"the record names the per-item file {record.per_item}, not {items_path.name}: "
                             f"score it with out={str(out)!r}")
        files.append((items_path, dumps_json(items_document(evaluation.items), indent=None)))
    try:
        files.append((out, dumps_json(record.to_dict())))
    except (ValueError, RecursionError) as exc:  # meta validation should make this impossible
        raise UsageError(f"the result cannot be written as JSON ({exc})") from None
    atomic_write_many(files)
    return out
