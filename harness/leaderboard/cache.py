"""Per-submission score cache: a rebuild scores only the files that changed.

An entry is keyed by sha256 over (submission sha256, benchmark id and version, ground-truth sha256,
harness version): any change to the bytes scored, the protocol, the data or the scorer misses.
Entries hold the canonical result record (no wall-clock fields and no machine's reason for a
metric it could not compute, so the bytes depend only on the inputs) and its per-item table (for the paired tests behind shared ranks), or the list of
validation errors of an invalid file. Stored as plain JSON, so committed caches diff and load on
any install.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlbench import __version__
from vlbench.atomic_files import atomic_write_bytes
from vlbench.benchmark import Benchmark
from vlbench.hashing import sha256_bytes
from vlbench.item_table import ItemTable
from vlbench.results import ResultRecord

CACHE_FORMAT = 1


def cache_key(submission_sha256: str, benchmark: Benchmark, ground_truth_sha256: str,
              harness_version: str = __version__) -> str:
    text = "\n".join([f"format {CACHE_FORMAT}", submission_sha256, benchmark.id, benchmark.version,
                      ground_truth_sha256, harness_version])
    return sha256_bytes(text.encode("utf-8"))


@dataclass
class CachedScore:
    """A cache entry: a scored result with its items, or the errors of an invalid file."""

    result: ResultRecord | None
    items: dict[str, ItemTable]
    errors: list[dict[str, str]]
    error_count: int = 0

    def to_json(self) -> bytes:
        doc: dict[str, Any] = {"format": CACHE_FORMAT}
        if self.result is not None:
            doc["result"] = self.result.to_dict()
            doc["items"] = {name: t.to_dict() for name, t in sorted(self.items.items())}
        else:
            doc["errors"] = self.errors
            doc["error_count"] = self.error_count
        return (json.dumps(doc, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, raw: bytes) -> CachedScore:
        doc = json.loads(raw)
        if doc.get("format") != CACHE_FORMAT:
            raise ValueError("cache format changed")
        if "result" in doc:
            items = {name: ItemTable.from_dict(t) for name, t in doc["items"].items()}
            return cls(ResultRecord.from_dict(doc["result"]), items, [])
        return cls(None, {}, list(doc["errors"]), int(doc["error_count"]))


# What the cache and the published board say of a metric the scoring machine could not compute;
# the machine's own reason ("no java", a path) is the build's output, not the board's.
NOT_COMPUTED = "not computed where this submission was scored"


def canonical(result: ResultRecord) -> ResultRecord:
    """The record without the fields that change from run to run or machine to machine (time
    taken, time of day, why a metric could not be computed here)."""
    result.elapsed_s = 0.0
    result.created_utc = ""
    result.per_item = None
    unavailable = result.extra.get("unavailable")
    if isinstance(unavailable, dict):
        result.extra["unavailable"] = {str(metric): NOT_COMPUTED for metric in unavailable}
    return result


class ScoreCache:
    """Reads entries from `source` (the published cache, may be absent) and keeps the ones a
    build uses, so that `write_used` prunes entries of files that left the board."""

    def __init__(self, source: Path | None, enabled: bool = True) -> None:
        self.source = source
        self.enabled = enabled
        self.used: dict[str, CachedScore] = {}
        self.hits = 0
        self.misses = 0

    @staticmethod
    def _name(benchmark: Benchmark, key: str) -> str:
        return f"{benchmark.id}/{key}.json"

    def get(self, benchmark: Benchmark, key: str) -> CachedScore | None:
        if not self.enabled or self.source is None:
            return None
        path = self.source / self._name(benchmark, key)
        try:
            entry = CachedScore.from_json(path.read_bytes())
        except (OSError, ValueError, KeyError, TypeError):
            return None  # absent or unreadable: score again
        self.hits += 1
        self.used[self._name(benchmark, key)] = entry
        return entry

    def put(self, benchmark: Benchmark, key: str, entry: CachedScore) -> None:
        self.misses += 1
        self.used[self._name(benchmark, key)] = entry

    def write_used(self, folder: str | os.PathLike) -> list[Path]:
        written = []
        for name in sorted(self.used):
            path = Path(folder) / name
            atomic_write_bytes(path, self.used[name].to_json())
            written.append(path)
        return written
