"""Validation, in one place: read -> envelope -> layer 1 (schema) -> layer 2 (semantic) -> parsed.

`validate(source, options)` is the one way in, for the command line, the Python API, the
leaderboard and the recipes; `ValidationOptions` is the one record of what can be asked (the
benchmark, the data folder, size and error limits, an ad-hoc benchmark, another tool's format,
--strict). Every stage adds to one `IssueList`, so a user sees all problems at once. A submission
reaches scoring (`vlbench.scoring`) only with zero issues.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from typing import Any

from vlbench.benchmark import Benchmark
from vlbench.errors import InvalidSubmission, Issue, IssueList, UsageError, pointer, shorten
from vlbench.ground_truth import load_ground_truth
from vlbench.jsonio import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_DECOMPRESSED,
    LoadedJson,
    gc_paused,
    load_submission_file,
)
from vlbench.limits import DEFAULT_MAX_ERRORS
from vlbench.registry import Registry, registry
from vlbench.schema import ENVELOPE_SCHEMA, schema_issues
from vlbench.task_type import TaskType


@dataclass(frozen=True)
class ValidationOptions:
    """What a caller can ask of validation; the command line's and the API's options map onto it."""

    benchmark_id: str | None = None  # --benchmark: the benchmark of a bare predictions file
    data_dir: str | os.PathLike | None = None
    max_bytes: int = DEFAULT_MAX_BYTES
    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED
    max_errors: int = DEFAULT_MAX_ERRORS
    benchmark_override: Benchmark | None = None  # an ad-hoc benchmark (captions with --references)
    # None reads a vlbench submission, or a bare document given with `benchmark_id` in whichever
    # format its task detects (`TaskType.detect_format`); "vlbench" forces the own format; another
    # name is one of the task's `foreign_formats`, read by its `check_foreign`.
    input_format: str | None = None
    # Refuse what the task would only warn about and score conservatively
    # (`TaskType.strict_issues`, e.g. a partial submission).
    strict: bool = False


def options_of(options: ValidationOptions | None, fields: dict[str, Any]) -> ValidationOptions:
    """`options` with `fields` (keyword arguments naming its fields) set: callers that set one or
    two fields need not build the record."""
    base = ValidationOptions() if options is None else options
    return replace(base, **fields) if fields else base


# The name an in-memory document (vlbench.score / vlbench.validate) goes by in reports.
IN_MEMORY = "<in-memory predictions>"


@dataclass
class ValidatedSubmission:
    benchmark: Benchmark
    task: TaskType
    meta: dict[str, Any]
    parsed: Any
    ground_truth: Any
    submission_sha256: str
    ground_truth_sha256: str
    bare: bool
    # Another tool's format the file was read in (recorded in the result's extra.input_format).
    input_format: str | None = None
    # What the default scoring tolerates (the task's `strict_issues`), found once here: refused
    # under --strict, the result's warnings otherwise.
    tolerated: list[Issue] = field(default_factory=list)


def _envelope(
    doc: Any, benchmark_id: str | None, reg: Registry, issues: IssueList
) -> tuple[dict[str, Any] | None, bool]:
    """Return the envelope (wrapping a bare predictions document when allowed) and whether bare."""
    if isinstance(doc, dict) and "vlbench" in doc:
        return doc, False
    if benchmark_id is None:
        issues.add(
            "not_an_envelope",
            "",
            "the document is not a vlbench submission envelope (no 'vlbench' field)",
            "wrap predictions as {\"vlbench\": 1, \"benchmark\": ..., \"task\": ..., \"meta\": "
            "{\"method\": ...}, \"predictions\": ...}, or pass --benchmark ID for a bare predictions file",
        )
        return None, False
    benchmark = reg.benchmark(benchmark_id)
    task = reg.task_of(benchmark)
    if not task.accepts_bare:
        raise UsageError(f"benchmark {benchmark_id} does not accept bare predictions; use the envelope")
    return {
        "vlbench": 1,
        "benchmark": benchmark.id,
        "task": benchmark.task,
        "meta": {"method": "unnamed (bare predictions file)"},
        "predictions": doc,
    }, True


# `meta` is free-form under `meta.extra` and is copied into every result record: bound it so that
# what passes validation can always be written (no RecursionError, no Infinity) and stays small.
META_MAX_DEPTH = 16
META_MAX_VALUES = 10_000
META_MAX_CHARS = 100_000


def meta_issues(meta: Any, issues: IssueList) -> None:
    """Depth, size and finite numbers of `meta` (its fields' types are the envelope schema's)."""
    if not isinstance(meta, dict):
        return
    values = chars = 0
    too_deep = too_big = False
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(meta, ("meta",))]
    while stack:
        value, where = stack.pop()
        values += 1
        if isinstance(value, str):
            chars += len(value)
        elif isinstance(value, float) and not math.isfinite(value):
            issues.add(
                "meta.non_finite",
                pointer(*where),
                f"{value} is not a finite number (JSON has no Infinity or NaN)",
                "write a finite number, or the value as a string",
            )
        elif isinstance(value, (dict, list)):
            if len(where) > META_MAX_DEPTH and not too_deep:
                too_deep = True
                issues.add(
                    "meta.too_deep",
                    pointer(*where),
                    f"meta is nested more than {META_MAX_DEPTH} levels deep",
                    "keep meta.extra a shallow record of facts about the method",
                )
            if not too_deep:
                items = value.items() if isinstance(value, dict) else enumerate(value)
                for k, v in items:
                    if isinstance(k, str):
                        chars += len(k)
                    stack.append((v, (*where, k)))
        if (values > META_MAX_VALUES or chars > META_MAX_CHARS) and not too_big:
            too_big = True
            issues.add(
                "meta.too_large",
                "/meta",
                f"meta holds more than {META_MAX_VALUES:,} values or {META_MAX_CHARS:,} characters",
                "meta describes the method; put long material behind meta.url or meta.paper",
            )
            break


def validate(
    source: str | os.PathLike | LoadedJson, options: ValidationOptions | None = None, **fields: Any
) -> ValidatedSubmission:
    """Read and validate one submission: a path, or a document already read from memory
    (`jsonio.load_document`). Raises `InvalidSubmission` with every issue, or `UsageError`."""
    options = options_of(options, fields)
    issues = IssueList(limit=options.max_errors)
    with gc_paused():
        if isinstance(source, LoadedJson):
            loaded, name = source, IN_MEMORY
        else:
            loaded, name = load_submission_file(source, issues, options.max_bytes, options.max_decompressed), str(source)
        if loaded is None:
            raise InvalidSubmission(issues, name)
        try:
            fmt = _format_of(loaded.data, options)
            if fmt is None:
                sub = validate_document(loaded.data, options, submission_sha256=loaded.sha256, issues=issues)
            else:
                sub = _validate_foreign(loaded, fmt, options, issues)
            if options.strict:
                issues.extend(sub.tolerated)
                if issues:
                    raise InvalidSubmission(issues)
        except InvalidSubmission as exc:
            exc.source = name
            raise
    return sub


def validate_document(
    doc: Any,
    options: ValidationOptions | None = None,
    *,
    submission_sha256: str = "",
    issues: IssueList | None = None,
    **fields: Any,
) -> ValidatedSubmission:
    """Validate a parsed document in vlbench's own format (envelope, or bare with a benchmark).
    Raises `InvalidSubmission` with every issue, or returns it parsed."""
    options = options_of(options, fields)
    issues = IssueList() if issues is None else issues
    reg, benchmark_id = _registry(options)
    if benchmark_id is not None:
        reg.benchmark(benchmark_id)  # an unknown --benchmark is a usage error, before anything else
    env, bare = _envelope(doc, benchmark_id, reg, issues)
    if env is None:
        raise InvalidSubmission(issues)
    schema_issues(env, ENVELOPE_SCHEMA, issues)
    meta_issues(env.get("meta"), issues)

    claimed = env.get("benchmark")
    benchmark: Benchmark | None = None
    if isinstance(claimed, str):
        benchmark = reg.benchmarks.get(claimed)
        if benchmark is None:
            issues.add(
                "unknown_benchmark",
                "/benchmark",
                f"unknown benchmark {shorten(claimed)}",
                "known benchmarks: " + ", ".join(sorted(reg.benchmarks)) + " (vlbench tasks)",
            )
    if benchmark is not None and benchmark_id is not None and claimed != benchmark_id:
        issues.add(
            "benchmark_mismatch",
            "/benchmark",
            f"the file says benchmark {shorten(claimed)} but {benchmark_id!r} was asked for",
            "drop --benchmark, or fix the envelope",
        )
    if benchmark is None:
        raise InvalidSubmission(issues)
    task = reg.tasks[benchmark.task]
    if isinstance(env.get("task"), str) and env["task"] != benchmark.task:
        issues.add(
            "task_mismatch",
            "/task",
            f"benchmark {benchmark.id} is a {benchmark.task} benchmark, not {shorten(env['task'])}",
            f"set \"task\": \"{benchmark.task}\"",
        )
    if "predictions" not in env:
        raise InvalidSubmission(issues)
    predictions = env["predictions"]
    structure = task.fast_structure(predictions, benchmark)
    if not structure.ok:
        schema_issues(predictions, task.schema_path(), issues, prefix=("predictions",), only=structure.suspects)

    ground_truth, files = load_ground_truth(benchmark, options.data_dir, task)
    parsed = task.check(predictions, ground_truth, benchmark, issues, structure)
    if issues:
        raise InvalidSubmission(issues)
    meta = env.get("meta") if isinstance(env.get("meta"), dict) else {}
    return ValidatedSubmission(
        benchmark=benchmark,
        task=task,
        meta=meta,
        parsed=parsed,
        ground_truth=ground_truth,
        submission_sha256=submission_sha256,
        ground_truth_sha256=files.combined_sha256,
        bare=bare,
        tolerated=task.strict_issues(parsed, ground_truth, benchmark),
    )


def _registry(options: ValidationOptions) -> tuple[Registry, str | None]:
    """The registry (with the ad-hoc benchmark, if any) and the benchmark asked for."""
    reg = registry()
    override = options.benchmark_override
    if override is None:
        return reg, options.benchmark_id
    return Registry(reg.tasks, {**reg.benchmarks, override.id: override}), override.id


def _format_of(doc: object, options: ValidationOptions) -> str | None:
    benchmark_id, override = options.benchmark_id, options.benchmark_override
    if options.input_format == "vlbench":
        return None
    if options.input_format is not None:
        if benchmark_id is None or override is not None:
            raise UsageError(f"--format {options.input_format} reads a bare predictions file: give "
                             "--benchmark ID too")
        return options.input_format
    if benchmark_id is None or override is not None or (isinstance(doc, dict) and "vlbench" in doc):
        return None
    reg = registry()
    benchmark = reg.benchmark(benchmark_id)
    return reg.task_of(benchmark).detect_format(doc, benchmark)


def _validate_foreign(
    loaded: LoadedJson, fmt: str, options: ValidationOptions, issues: IssueList
) -> ValidatedSubmission:
    reg = registry()
    benchmark = reg.benchmark(str(options.benchmark_id))
    task = reg.task_of(benchmark)
    if fmt not in task.foreign_formats:
        known = ", ".join(("vlbench", *task.foreign_formats))
        raise UsageError(f"{benchmark.id} is a {task.name} benchmark: --format is one of {known}, "
                         f"not {fmt!r}")
    ground_truth, files = load_ground_truth(benchmark, options.data_dir, task)
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
        input_format=fmt,
        tolerated=task.strict_issues(parsed, ground_truth, benchmark),
    )
