"""Score a validated submission and build its result record."""

from __future__ import annotations

import datetime as dt
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vlbench import __version__
from vlbench.jsonio import DEFAULT_MAX_BYTES, DEFAULT_MAX_DECOMPRESSED, gc_paused
from vlbench.registry import Benchmark, ItemTable, TaskScores
from vlbench.results import ResultRecord, per_item_path, save_items
from vlbench.stats import bootstrap_ci
from vlbench.submission import ValidatedSubmission, validate_file


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
        bootstrap={"resamples": bootstrap, "seed": seed} if ci else {},
        elapsed_s=round(time.perf_counter() - started, 4),
        created_utc=dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        extra=dict(scored.extra),
    )
    return Evaluation(record, scored.items, sub)


def score_file(
    path: str | os.PathLike,
    *,
    benchmark_id: str | None = None,
    data_dir: str | os.PathLike | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
    max_errors: int = 50,
    benchmark_override: Benchmark | None = None,
) -> Evaluation:
    """Read, validate and score one submission file (raises InvalidSubmission / UsageError)."""
    started = time.perf_counter()
    with gc_paused():
        sub = validate_file(
            path,
            benchmark_id=benchmark_id,
            data_dir=data_dir,
            max_bytes=max_bytes,
            max_decompressed=max_decompressed,
            max_errors=max_errors,
            benchmark_override=benchmark_override,
        )
        return score_validated(sub, bootstrap=bootstrap, seed=seed, started=started)


def write_evaluation(evaluation: Evaluation, out: str | os.PathLike, with_items: bool = True) -> Path:
    """Write the result record (and its per-item file next to it), each atomically."""
    out = Path(out)
    if with_items and evaluation.items:
        items_path = per_item_path(out)
        save_items(items_path, evaluation.items)
        evaluation.result.per_item = items_path.name
    evaluation.result.save(out)
    return out
