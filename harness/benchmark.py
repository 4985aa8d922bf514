"""Declarative benchmark records: data only, no behaviour.

A `Benchmark` is an id, task, version, ground-truth files with sha256, metrics, main score,
citation, licence and protocol options. All behaviour lives once per task type, in a
`vlbench.task_type.TaskType` subclass under `tasks/<name>/`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PACKAGE = "package"
DATA_DIR = "data_dir"


@dataclass(frozen=True)
class Metric:
    key: str
    description: str
    higher_is_better: bool = True
    # Display: "percent" shows x100 with one decimal (fractions in [0, 1]); "float" shows `decimals`.
    display: str = "percent"
    decimals: int = 1
    # A metric made of others: their sum in percent points (RSUM is the six recalls'). Papers often
    # print only the parts; the leaderboard derives the sum from them.
    sum_of: tuple[str, ...] = ()

    def format(self, value: float | None) -> str:
        if value is None:
            return "n/a"
        if self.display == "percent":
            return f"{100.0 * value:.{self.decimals}f}"
        return f"{value:.{self.decimals}f}"


@dataclass(frozen=True)
class DataFile:
    """A ground-truth file.

    `location` is PACKAGE (shipped inside the installed package; `path` relative to the package
    root given by `Benchmark.package_data`) or DATA_DIR (written by `vlbench data prepare` under
    `<data dir>/<benchmark id>/`). `sha256` pins the bytes; None means the file cannot be pinned
    in advance (it is derived from data we do not ship) and its hash is recorded at score time.
    """

    name: str
    path: str
    sha256: str | None = None
    location: str = DATA_DIR


@dataclass(frozen=True)
class TradeOff:
    """A plot of one benchmark's `y_key` against `x_key` on the benchmark `against`."""

    against: str
    x_key: str
    y_key: str


@dataclass(frozen=True)
class Benchmark:
    id: str
    task: str
    version: str
    description: str
    files: tuple[DataFile, ...]
    metrics: tuple[Metric, ...]
    main_score: str
    citation: str = ""
    license: str = ""
    homepage: str = ""
    # Where `vlbench data prepare` gets its source by default (a hub id or a description).
    source_hint: str = ""
    # Python package holding PACKAGE files (e.g. "vlbench.tasks.mini").
    package_data: str = ""
    # Task-specific protocol settings (folds, captions per image, IoU threshold, ...).
    options: Mapping[str, Any] = field(default_factory=dict)
    # The leaderboard plots this benchmark against another one of the same images (e.g. a
    # decorrelated benchmark's ODmAP@1 against its retrieval benchmark's i2t R@1).
    trade_off: TradeOff | None = None

    def metric(self, key: str) -> Metric:
        for m in self.metrics:
            if m.key == key:
                return m
        raise KeyError(key)

    def option(self, key: str, default: Any = None) -> Any:
        return self.options.get(key, default)
