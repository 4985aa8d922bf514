"""Score a validated submission and build its result record."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vlbench import __version__
from vlbench.benchmark import Benchmark
from vlbench.errors import InvalidSubmission, IssueList, UsageError
from vlbench.ground_truth import locate_ground_truth
from vlbench.item_table import ItemTable
from vlbench.jsonio import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_DECOMPRESSED,
    LoadedJson,
    atomic_write_many,
    check_output_path,
    dumps_json,
    gc_paused,
    load_submission_file,
)
from vlbench.registry import registry
from vlbench.results import ResultRecord, items_document, per_item_path
from vlbench.stats import bootstrap_ci, resampled_units
from vlbench.submission import ValidatedSubmission, validate_document
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
    path: str | os.PathLike | LoadedJson,
    *,
    benchmark_id: str | None = None,
    data_dir: str | os.PathLike | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
    max_errors: int = 50,
    benchmark_override: Benchmark | None = None,
    input_format: str | None = None,
    strict: bool = False,
) -> Evaluation:
    """Read, validate and score one submission file (raises InvalidSubmission / UsageError).

    `input_format` and `strict`: see `validate_input`. A file read in another tool's format
    records it in the result's `extra.input_format`.
    """
    started = time.perf_counter()
    with gc_paused():
        sub, fmt = _validate_input(
            path, input_format, strict, benchmark_id, data_dir, max_bytes, max_decompressed,
            max_errors, benchmark_override,
        )
        evaluation = score_validated(sub, bootstrap=bootstrap, seed=seed, started=started)
    if fmt is not None:
        evaluation.result.extra["input_format"] = fmt
    return evaluation


def validate_input(
    path: str | os.PathLike | LoadedJson,
    *,
    benchmark_id: str | None = None,
    data_dir: str | os.PathLike | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
    max_errors: int = 50,
    benchmark_override: Benchmark | None = None,
    input_format: str | None = None,
    strict: bool = False,
) -> ValidatedSubmission:
    """`submission.validate_file`, plus other tools' formats and --strict.

    `input_format`: None reads a vlbench submission, or a bare document given with
    `benchmark_id` in whichever format its task detects (`TaskType.detect_format`); "vlbench"
    forces the own format; another name is one of the task's `foreign_formats`, read by its
    `check_foreign`. `strict`: refuse what the task would only warn about and score
    conservatively (`TaskType.strict_issues`, e.g. a partial submission).
    """
    with gc_paused():
        return _validate_input(
            path, input_format, strict, benchmark_id, data_dir, max_bytes, max_decompressed,
            max_errors, benchmark_override,
        )[0]


# The name an in-memory document (vlbench.score / vlbench.validate) goes by in reports.
IN_MEMORY = "<in-memory predictions>"


def _validate_input(
    path: str | os.PathLike | LoadedJson,
    input_format: str | None,
    strict: bool,
    benchmark_id: str | None,
    data_dir: str | os.PathLike | None,
    max_bytes: int,
    max_decompressed: int,
    max_errors: int,
    benchmark_override: Benchmark | None,
) -> tuple[ValidatedSubmission, str | None]:
    issues = IssueList(limit=max_errors)
    if isinstance(path, LoadedJson):  # already read from memory (jsonio.load_document)
        loaded, source = path, IN_MEMORY
    else:
        loaded, source = load_submission_file(path, issues, max_bytes, max_decompressed), str(path)
    if loaded is None:
        raise InvalidSubmission(issues, source)
    try:
        fmt = _format_of(loaded.data, input_format, benchmark_id, benchmark_override)
        if fmt is None:
            sub = validate_document(
                loaded.data,
                submission_sha256=loaded.sha256,
                benchmark_id=benchmark_id,
                data_dir=data_dir,
                issues=issues,
                benchmark_override=benchmark_override,
            )
        else:
            sub = _validate_foreign(loaded, fmt, benchmark_id, data_dir, issues)
        if strict:
            issues.extend(sub.task.strict_issues(sub.parsed, sub.ground_truth, sub.benchmark))
            if issues:
                raise InvalidSubmission(issues)
    except InvalidSubmission as exc:
        exc.source = source
        raise
    return sub, fmt


def _format_of(
    doc: object, input_format: str | None, benchmark_id: str | None, override: Benchmark | None
) -> str | None:
    if input_format == "vlbench":
        return None
    if input_format is not None:
        if benchmark_id is None or override is not None:
            raise UsageError(f"--format {input_format} reads a bare predictions file: give "
                             "--benchmark ID too")
        return input_format
    if benchmark_id is None or override is not None or (isinstance(doc, dict) and "vlbench" in doc):
        return None
    reg = registry()
    benchmark = reg.benchmark(benchmark_id)
    return reg.task_of(benchmark).detect_format(doc, benchmark)


def _validate_foreign(
    loaded: LoadedJson,
    fmt: str,
    benchmark_id: str | None,
    data_dir: str | os.PathLike | None,
    issues: IssueList,
) -> ValidatedSubmission:
    reg = registry()
    benchmark = reg.benchmark(str(benchmark_id))
    task = reg.task_of(benchmark)
    if fmt not in task.foreign_formats:
        known = ", ".join(("vlbench", *task.foreign_formats))
        raise UsageError(f"{benchmark.id} is a {task.name} benchmark: --format is one of {known}, "
                         f"not {fmt!r}")
    files = locate_ground_truth(benchmark, data_dir)
    ground_truth = task.load_ground_truth(benchmark, files)
    parsed = task.check_foreign(fmt, loaded.data, ground_truth, benchmark, issues)
    if issues:
        raise InvalidSubmission(issues)
    return ValidatedSubmission(
        benchmark=benchmark,
        task=task,
        meta={"method": f"unnamed ({fmt}-format predictions file)"},
        parsed=parsed,
        ground_truth=ground_truth,
        submission_sha256=loaded.sha256,
        ground_truth_sha256=files.combined_sha256,
        bare=True,
    )


def write_evaluation(evaluation: Evaluation, out: str | os.PathLike, with_items: bool = True) -> Path:
    """Write the result record and its per-item file next to it: both, or neither on failure
    (a refused or failed run leaves nothing behind). Write errors are UsageErrors."""
    out = check_output_path(out, "result record")
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
