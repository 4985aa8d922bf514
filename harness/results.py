"""Result records: what `vlbench score --out` writes, typed and round-trippable."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlbench.atomic_files import atomic_write_json
from vlbench.bounded_read import read_regular_capped
from vlbench.errors import UsageError, shorten
from vlbench.jsonio import DEFAULT_MAX_BYTES

if TYPE_CHECKING:
    from vlbench.item_table import ItemTable

RESULT_FORMAT = 1

# The fields later code reads, with the JSON types a record written by vlbench has.
_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    "benchmark": str, "task": str, "benchmark_version": str, "harness_version": str,
    "submission_sha256": str, "ground_truth_sha256": str, "meta": dict, "scores": dict,
    "main_score": str, "ci95": dict, "n": dict, "bootstrap": dict, "per_item": (str, type(None)),
    "extra": dict,
}


def _read_json(path: str | os.PathLike, what: str) -> Any:
    """A JSON file written by vlbench (still read with the size cap: it may be anyone's file)."""
    raw, size = read_regular_capped(path, DEFAULT_MAX_BYTES, what)
    if raw is None:
        raise UsageError(f"{path} is {size:,} bytes, too large for a {what}")
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "it cannot be parsed"
        raise UsageError(f"{path} is not a {what}: not valid JSON ({reason})") from None


@dataclass
class ResultRecord:
    benchmark: str
    task: str
    benchmark_version: str
    harness_version: str
    submission_sha256: str
    ground_truth_sha256: str
    meta: dict[str, Any]
    scores: dict[str, float | None]
    main_score: str
    ci95: dict[str, list[float]] = field(default_factory=dict)
    n: dict[str, int] = field(default_factory=dict)
    # resamples, seed, and units: the unit each population's bootstrap draws (e.g. "image")
    bootstrap: dict[str, Any] = field(default_factory=dict)
    per_item: str | None = None
    elapsed_s: float = 0.0
    created_utc: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    format: int = RESULT_FORMAT

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ResultRecord:
        """The record in `d`; ValueError (one sentence) if `d` is not a result record."""
        if not isinstance(d, dict):
            raise ValueError(f"not a vlbench result record: a JSON {type(d).__name__}, not an object")
        known = {f.name for f in fields(cls)}
        missing = {"benchmark", "task", "benchmark_version", "scores"} - set(d)
        if missing:
            raise ValueError(f"not a vlbench result record: missing {', '.join(sorted(missing))}")
        wrong = [
            f"{name} ({shorten(d[name], 40)})"
            for name, kinds in _FIELD_TYPES.items()
            if name in d and not isinstance(d[name], kinds)
        ]
        if wrong:
            raise ValueError(f"not a vlbench result record: wrong type of {', '.join(wrong)}")
        return cls(**{k: v for k, v in d.items() if k in known})

    def save(self, path: str | os.PathLike, force: bool = False) -> None:
        """Write the record as `path` (atomically). The output rule holds: an existing file there
        is replaced only if it is a result record vlbench wrote, unless `force`; its folder must exist."""
        from vlbench.output_rule import RESULT_RECORD, check_file_target

        atomic_write_json(check_file_target(path, RESULT_RECORD, force=force, option="path", force_hint="force=True"),
                          self.to_dict())

    @classmethod
    def load(cls, path: str | os.PathLike) -> ResultRecord:
        """Read a result record file; anything wrong with it is a UsageError naming the file."""
        try:
            return cls.from_dict(_read_json(path, "result record"))
        except ValueError as exc:
            raise UsageError(f"{path}: {exc}") from None


def per_item_path(result_path: str | os.PathLike) -> Path:
    p = Path(result_path)
    name = p.name[: -len(".json")] if p.name.endswith(".json") else p.name
    return p.with_name(name + ".per_item.json")


def items_document(items: dict[str, ItemTable]) -> dict[str, Any]:
    return {name: t.to_dict() for name, t in items.items()}


def save_items(path: str | os.PathLike, items: dict[str, ItemTable], force: bool = False) -> None:
    """Write per-item tables as `path`, under the output rule (as `ResultRecord.save`)."""
    from vlbench.output_rule import PER_ITEM, check_file_target

    atomic_write_json(check_file_target(path, PER_ITEM, force=force, option="path", force_hint="force=True"),
                      items_document(items), indent=None)


def load_items(path: str | os.PathLike) -> dict[str, ItemTable]:
    raw = _read_json(path, "per-item file")
    try:
        from vlbench.item_table import ItemTable  # numpy, only when per-item tables are read

        return {name: ItemTable.from_dict(t) for name, t in raw.items()}
    except (AttributeError, KeyError, TypeError, ValueError):
        raise UsageError(f"{path} is not a per-item file written by vlbench score (it is damaged "
                         "or something else); score the submission again with --out") from None
