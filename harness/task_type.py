"""The task-type interface: behaviour of one task type, implemented once under `tasks/<name>/`."""

from __future__ import annotations

import abc
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from vlbench.benchmark import Benchmark
from vlbench.errors import Issue, IssueList, UsageError
from vlbench.ground_truth import GroundTruthFiles
from vlbench.item_table import ItemTable


@dataclass(frozen=True)
class Structure:
    """What a task's fast structure check learnt about one predictions document.

    Returned by `TaskType.fast_structure` and handed back, for the same document, to
    `TaskType.check`: work is passed along the call, never kept in the task, so two
    submissions validated in one process cannot see each other's state.
    """

    ok: bool  # the JSON Schema certainly accepts the document: the schema pass is skipped
    memo: Any = None  # what the check may reuse (e.g. numbers already converted to arrays)
    # When not ok: the only places where the schema may fail, as paths into the predictions (the
    # value there and the key leading to it); only these are validated. None: anywhere.
    suspects: tuple[tuple[str | int, ...], ...] | None = None


@dataclass
class TaskScores:
    """What a task's scorer returns."""

    scores: dict[str, float | None]
    # Population name -> per-item table; empty when the task has no per-item decomposition.
    items: dict[str, ItemTable] = field(default_factory=dict)
    n: dict[str, int] = field(default_factory=dict)
    # Free-form facts for the result record (coverage, warnings, unavailable metrics and why).
    extra: dict[str, Any] = field(default_factory=dict)


class TaskType(abc.ABC):
    """Behaviour of one task type. Subclasses live in `tasks/<name>/` and hold no benchmark data.

    The harness calls, in order: `load_ground_truth` (trusted files), `check` (layer-2 semantic
    validation of predictions that passed the JSON Schema, adding issues; returns whatever
    `score` needs, e.g. index arrays), then `score`.
    """

    name: ClassVar[str]
    # File name of the prediction JSON Schema, relative to the task package.
    prediction_schema: ClassVar[str]
    # Whether a bare predictions document (no envelope) is accepted with --benchmark.
    accepts_bare: ClassVar[bool] = True
    # What a machine needs to compute every metric of the task: a sentence ending in the command
    # that installs it, which the leaderboard's refusal gives when a metric could not be computed
    # (empty when the core computes them all).
    metrics_install_hint: ClassVar[str] = ""

    @abc.abstractmethod
    def load_ground_truth(self, benchmark: Benchmark, files: GroundTruthFiles) -> Any:
        """Parse verified ground-truth files into the task's in-memory form."""

    def fast_structure(self, predictions: Any, benchmark: Benchmark) -> Structure:
        """Cheap conservative pre-check of the predictions against the task's JSON Schema.

        `ok` only if the schema certainly accepts the document: the schema pass (slow on large
        documents) is then skipped. What it learnt travels to `check` in `memo`. The default
        never skips."""
        return Structure(False)

    @abc.abstractmethod
    def check(
        self, predictions: Any, ground_truth: Any, benchmark: Benchmark, issues: IssueList,
        structure: Structure | None = None,
    ) -> Any:
        """Layer-2 checks against the ground truth. Add every problem to `issues` with pointers
        under `/predictions`. Must not raise on schema-invalid input (skip what is malformed: the
        schema layer reports it). `structure`: what `fast_structure` returned for these same
        predictions (None when it was not run). Returns the parsed form `score` takes."""

    @abc.abstractmethod
    def score(self, parsed: Any, ground_truth: Any, benchmark: Benchmark) -> TaskScores:
        """Compute metrics. Deterministic: identical inputs give identical numbers."""

    def metrics_from_means(
        self, benchmark: Benchmark, means: Mapping[str, Mapping[str, np.ndarray]]
    ) -> dict[str, np.ndarray]:
        """Metric values from per-population column means, vectorised over bootstrap replicates.

        `means[population][column]` is an array of shape (B,). The default maps each column to the
        metric of the same name; override for derived (RSUM) or corpus-level (BLEU) metrics.
        """
        out: dict[str, np.ndarray] = {}
        for table in means.values():
            for column, value in table.items():
                out[column] = value
        return out

    def point_scores(self, benchmark: Benchmark, items: Mapping[str, ItemTable]) -> dict[str, float]:
        """Metric values of the whole sample: `metrics_from_means` of every column's mean."""
        means = {name: table.column_means() for name, table in items.items()}
        return {key: float(np.asarray(v)[0]) for key, v in self.metrics_from_means(benchmark, means).items()}

    # Other tools' prediction files the task reads as they are (`vlbench score --format NAME`).
    foreign_formats: ClassVar[tuple[str, ...]] = ()

    def detect_format(self, document: Any, benchmark: Benchmark) -> str | None:
        """The foreign format of a bare document given with --benchmark, or None for the task's
        own predictions format."""
        return None

    def check_foreign(
        self, fmt: str, document: Any, ground_truth: Any, benchmark: Benchmark, issues: IssueList
    ) -> Any:
        """`check` for a whole document in one of `foreign_formats` (it has no schema layer:
        report structural problems here too). Returns the parsed form `score` takes."""
        raise UsageError(f"{self.name} reads no other tool's format (asked for {fmt!r})")

    # Whether `references_benchmark` scores against a reference file named on the command line
    # (`--references`); the engine asks the task that does, never a task by name.
    reads_references: ClassVar[bool] = False

    def references_benchmark(self, path: Path, subset: bool = False) -> Benchmark:
        """An ad-hoc benchmark scoring against the reference file `path` (`--references`);
        `subset`: only the items the predictions cover."""
        raise UsageError(f"{self.name} reads no reference file")

    def strict_issues(self, parsed: Any, ground_truth: Any, benchmark: Benchmark) -> list[Issue]:
        """Problems the default scoring tolerates in a conservative way (e.g. left-out items
        scored as misses): recorded as warnings, and refused under `--strict`."""
        return []

    def random_predictions(self, ground_truth: Any, benchmark: Benchmark, seed: int = 0) -> Any:
        """A valid chance-level `predictions` document (the floor submissions in submissions/)."""
        raise NotImplementedError(f"{self.name} has no random baseline")

    def prepare(self, benchmark: Benchmark, source: str, data_dir: Path, force: bool = False) -> list[Path]:
        """Build the benchmark's DATA_DIR ground-truth files from official sources. A source that
        is not what the benchmark is defined on is refused (`check_source`) unless `force`."""
        raise UsageError(f"benchmark {benchmark.id} has no prepare step")

    def schema_path(self) -> Path:
        module = importlib.import_module(type(self).__module__)
        return Path(module.__file__).parent / self.prediction_schema
