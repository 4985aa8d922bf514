"""The submission pipeline: read -> envelope -> layer 1 (schema) -> layer 2 (semantic) -> parsed.

Every stage adds to one `IssueList`, so a user sees all problems at once. A submission reaches
scoring only with zero issues.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from vlbench.errors import InvalidSubmission, IssueList, UsageError
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

    claimed = env.get("benchmark")
    benchmark: Benchmark | None = None
    if isinstance(claimed, str):
        benchmark = reg.benchmarks.get(claimed)
        if benchmark is None:
            issues.add(
                "unknown_benchmark",
                "/benchmark",
                f"unknown benchmark {claimed[:100]!r}",
                "known benchmarks: " + ", ".join(sorted(reg.benchmarks)) + " (vlbench tasks)",
            )
    if benchmark is not None and benchmark_id is not None and claimed != benchmark_id:
        issues.add(
            "benchmark_mismatch",
            "/benchmark",
            f"the file says benchmark {claimed!r} but {benchmark_id!r} was asked for",
            "drop --benchmark, or fix the envelope",
        )
    if benchmark is None:
        raise InvalidSubmission(issues)
    task = reg.tasks[benchmark.task]
    if isinstance(env.get("task"), str) and env["task"] != benchmark.task:
        issues.add(
            "task_mismatch",
            "/task",
            f"benchmark {benchmark.id} is a {benchmark.task} benchmark, not {env['task']!r}",
            f"set \"task\": \"{benchmark.task}\"",
        )
    if "predictions" not in env:
        raise InvalidSubmission(issues)
    predictions = env["predictions"]
    if not task.fast_structure_ok(predictions, benchmark):
        schema_issues(predictions, task.schema_path(), issues, prefix=("predictions",))

    files = locate_ground_truth(benchmark, data_dir)
    ground_truth = task.load_ground_truth(benchmark, files)
    parsed = task.check(predictions, ground_truth, benchmark, issues)
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
