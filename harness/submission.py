"""The submission pipeline: read -> envelope -> layer 1 (schema) -> layer 2 (semantic) -> parsed.

Every stage adds to one `IssueList`, so a user sees all problems at once. A submission reaches
scoring only with zero issues.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from vlbench.errors import InvalidSubmission, IssueList, UsageError, pointer, shorten
from vlbench.jsonio import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_DECOMPRESSED,
    gc_paused,
    load_submission_file,
)
from vlbench.registry import Benchmark, Registry, TaskType, locate_ground_truth, registry
from vlbench.schema import ENVELOPE_SCHEMA, schema_issues


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


def validate_document(
    doc: Any,
    *,
    submission_sha256: str = "",
    benchmark_id: str | None = None,
    data_dir: str | os.PathLike | None = None,
    issues: IssueList | None = None,
    reg: Registry | None = None,
    benchmark_override: Benchmark | None = None,
) -> ValidatedSubmission:
    """Validate a parsed document. Raises `InvalidSubmission` with every issue, or returns it parsed.

    `benchmark_override` scores against an ad-hoc benchmark (e.g. captions with --references).
    """
    issues = IssueList() if issues is None else issues
    reg = reg or registry()
    if benchmark_override is not None:
        reg = Registry(reg.tasks, {**reg.benchmarks, benchmark_override.id: benchmark_override})
        benchmark_id = benchmark_override.id
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

    files = locate_ground_truth(benchmark, data_dir)
    ground_truth = task.load_ground_truth(benchmark, files)
    parsed = task.check_structured(predictions, ground_truth, benchmark, issues, structure)
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
    )


def validate_file(
    path: str | os.PathLike,
    *,
    benchmark_id: str | None = None,
    data_dir: str | os.PathLike | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
    max_errors: int = 50,
    benchmark_override: Benchmark | None = None,
) -> ValidatedSubmission:
    issues = IssueList(limit=max_errors)
    with gc_paused():
        return _validate_file(path, issues, benchmark_id, data_dir, max_bytes, max_decompressed, benchmark_override)


def _validate_file(
    path: str | os.PathLike,
    issues: IssueList,
    benchmark_id: str | None,
    data_dir: str | os.PathLike | None,
    max_bytes: int,
    max_decompressed: int,
    benchmark_override: Benchmark | None,
) -> ValidatedSubmission:
    loaded = load_submission_file(path, issues, max_bytes, max_decompressed)
    if loaded is None:
        raise InvalidSubmission(issues, str(path))
    try:
        return validate_document(
            loaded.data,
            submission_sha256=loaded.sha256,
            benchmark_id=benchmark_id,
            data_dir=data_dir,
            issues=issues,
            benchmark_override=benchmark_override,
        )
    except InvalidSubmission as exc:
        exc.source = str(path)
        raise
