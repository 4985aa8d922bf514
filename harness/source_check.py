"""Whether a `prepare` source is the one its benchmark is defined on."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from vlbench.benchmark import Benchmark
from vlbench.errors import UsageError


@dataclass(frozen=True)
class SourceMismatch:
    """One way a `prepare` source differs from what its benchmark is defined on."""

    what: str  # e.g. "images in split 'test'"
    expected: str
    found: str

    def __str__(self) -> str:
        return f"{self.what}: expected {self.expected}, found {self.found}"


class SourceDeviation(UserWarning):
    """A forced `prepare` from a source that differs from the benchmark's: the command line shows
    it as a warning (`warnings.catch_warnings`), deep code never prints."""


def check_source(
    benchmark: Benchmark | str, source: str, mismatches: list[SourceMismatch], force: bool, expected_source: str
) -> dict[str, Any] | None:
    """Refuse a source that is not the benchmark's (every difference listed), or, with `force`,
    return the record of the deviation that `prepare` stores in the ground truth's metadata.

    None when the source is as expected (the ground truth then carries no such record, so files
    prepared from the right source are byte-identical whether or not `--force` was given)."""
    if not mismatches:
        return None
    benchmark_id = benchmark if isinstance(benchmark, str) else benchmark.id
    listed = "\n".join(f"  - {m}" for m in mismatches)
    if not force:
        raise UsageError(
            f"--source {source} is not the source of {benchmark_id} (expected {expected_source}):\n{listed}\n"
            "  hint: give the official files; --force prepares from this source anyway and records "
            "the differences in the ground truth's metadata (its scores are then not comparable)"
        )
    warnings.warn(SourceDeviation(
        f"--force: preparing {benchmark_id} from a source that differs from {expected_source}:\n{listed}"),
        stacklevel=2)
    return {
        "forced": True,
        "source": str(source),
        "expected": expected_source,
        "deviations": [{"what": m.what, "expected": m.expected, "found": m.found} for m in mismatches],
    }
