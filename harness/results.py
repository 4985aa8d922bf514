"""Result records: what `vlbench score --out` writes, typed and round-trippable."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from vlbench.jsonio import atomic_write_json
from vlbench.registry import ItemTable

RESULT_FORMAT = 1


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
    bootstrap: dict[str, int] = field(default_factory=dict)
    per_item: str | None = None
    elapsed_s: float = 0.0
    created_utc: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    format: int = RESULT_FORMAT

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ResultRecord:
        known = {f.name for f in fields(cls)}
        missing = {"benchmark", "task", "benchmark_version", "scores"} - set(d)
        if missing:
            raise ValueError(f"not a vlbench result record: missing {sorted(missing)}")
        return cls(**{k: v for k, v in d.items() if k in known})

    def save(self, path: str | os.PathLike) -> None:
        atomic_write_json(path, self.to_dict())

    @classmethod
    def load(cls, path: str | os.PathLike) -> ResultRecord:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


def per_item_path(result_path: str | os.PathLike) -> Path:
    p = Path(result_path)
    name = p.name[: -len(".json")] if p.name.endswith(".json") else p.name
    return p.with_name(name + ".per_item.json")


def save_items(path: str | os.PathLike, items: dict[str, ItemTable]) -> None:
    atomic_write_json(path, {name: t.to_dict() for name, t in items.items()}, indent=None)


def load_items(path: str | os.PathLike) -> dict[str, ItemTable]:
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    return {name: ItemTable.from_dict(t) for name, t in raw.items()}
