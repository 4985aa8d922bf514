"""Declarative benchmark records and the task-type interface (MTEB-style).

A `Benchmark` is data only: id, task, version, ground-truth files with sha256, metrics, main score,
citation, licence, and protocol options. All behaviour lives once per task type, in a `TaskType`
subclass under `tasks/<name>/`. Task packages are discovered, not listed here: a subpackage of
`tasks` that exports `TASK` (a `TaskType` instance) and `BENCHMARKS` (a tuple of `Benchmark`) is
registered.
"""

from __future__ import annotations

import abc
import importlib
import importlib.util
import os
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from vlbench.errors import Issue, IssueList, UsageError
from vlbench.jsonio import sha256_file

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

    def metric(self, key: str) -> Metric:
        for m in self.metrics:
            if m.key == key:
                return m
        raise KeyError(key)

    def option(self, key: str, default: Any = None) -> Any:
        return self.options.get(key, default)


def default_data_dir() -> Path:
    env = os.environ.get("VLBENCH_DATA")
    if env:
        return Path(env).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")).expanduser() / "vlbench"


def resolve_file(benchmark: Benchmark, f: DataFile, data_dir: str | os.PathLike | None) -> Path:
    if f.location == PACKAGE:
        module = importlib.import_module(benchmark.package_data)
        return Path(module.__file__).parent / f.path
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    return root / benchmark.id / f.path


def prepare_target(benchmark: Benchmark, f: DataFile, data_dir: str | os.PathLike) -> Path:
    """Where `prepare` writes a ground-truth file: `<data_dir>/<benchmark id>/<file name>`.

    DATA_DIR files are read back from there; PACKAGE files (the mini benchmarks, whose paths
    start with `data/`) are copied from there into the package by `python -m vlbench.tasks.mini.ship`.
    """
    relative = f.path[len("data/"):] if f.location == PACKAGE and f.path.startswith("data/") else f.path
    return Path(data_dir) / benchmark.id / relative


@dataclass(frozen=True)
class GroundTruthFiles:
    """Resolved, verified ground-truth paths and the combined sha256 recorded in results."""

    paths: dict[str, Path]
    sha256: dict[str, str]

    @property
    def combined_sha256(self) -> str:
        """sha256 of the single file, or of the sorted 'name:sha256' lines when there are several."""
        if len(self.sha256) == 1:
            return next(iter(self.sha256.values()))
        import hashlib

        lines = "\n".join(f"{k}:{v}" for k, v in sorted(self.sha256.items()))
        return hashlib.sha256(lines.encode()).hexdigest()


def data_status(benchmark: Benchmark, data_dir: str | os.PathLike | None) -> str:
    """'present', 'missing' or 'corrupt' (a pinned sha256 does not match)."""
    for f in benchmark.files:
        p = resolve_file(benchmark, f, data_dir)
        if not p.exists():
            return "missing"
        if f.sha256 and f.location == PACKAGE and sha256_file(p) != f.sha256:
            return "corrupt"
    return "present"


def locate_ground_truth(
    benchmark: Benchmark, data_dir: str | os.PathLike | None
) -> GroundTruthFiles:
    """Find and verify every ground-truth file; a missing or altered file is a usage error."""
    paths: dict[str, Path] = {}
    hashes: dict[str, str] = {}
    for f in benchmark.files:
        p = resolve_file(benchmark, f, data_dir)
        if not p.exists():
            where = "the installed package" if f.location == PACKAGE else str(p.parent)
            hint = (
                "reinstall vlbench"
                if f.location == PACKAGE
                else f"run: vlbench data prepare {benchmark.id} --source PATH_OR_HUB_ID"
                + (f" (e.g. {benchmark.source_hint})" if benchmark.source_hint else "")
                + ", or pass --data-dir"
            )
            raise UsageError(
                f"ground truth for {benchmark.id} not found: {f.path} in {where}\n  hint: {hint}"
            )
        digest = sha256_file(p)
        if f.sha256 and digest != f.sha256:
            raise UsageError(
                f"ground truth file {p} has sha256 {digest[:12]}..., but benchmark "
                f"{benchmark.id} v{benchmark.version} pins {f.sha256[:12]}...: the data changed; "
                "scores would not be comparable"
            )
        paths[f.name] = p
        hashes[f.name] = digest
    return GroundTruthFiles(paths, hashes)


@dataclass
class ItemTable:
    """Per-item statistics of one query population: rows are items, columns are named values.

    The task's `metrics_from_means` turns column means into metric values, so a bootstrap can
    resample rows and recompute every metric (including corpus-level ones such as BLEU, whose
    per-item columns are sufficient statistics rather than scores).
    """

    ids: list[str]
    columns: list[str]
    values: np.ndarray  # shape (len(ids), len(columns)), float64
    # What the bootstrap resamples, e.g. "image": rows that share a unit (the captions of one
    # image, the queries made from one source image) are drawn together. `clusters` gives each
    # row's unit id; None means each row is its own unit, named by its id. Populations with the
    # same unit (other than "item") share one draw: the same images for every population.
    unit: str = "item"
    clusters: list[str] | None = None

    def __post_init__(self) -> None:
        if self.clusters is not None and len(self.clusters) != len(self.ids):
            raise ValueError(f"{len(self.clusters)} cluster ids for {len(self.ids)} rows")
        if self.clusters is not None and self.unit == "item":
            raise ValueError("rows grouped into clusters need the name of the unit (e.g. 'image')")

    def unit_ids(self) -> list[str]:
        """The resampled unit of each row."""
        return self.ids if self.clusters is None else self.clusters

    def column_means(self) -> dict[str, np.ndarray]:
        """Each column's mean as a length-1 array: the shape `metrics_from_means` takes."""
        # Per column, not values.mean(axis=0): the 1-D pairwise sum is the order the bootstrap
        # and every earlier score used, so point values stay bit-identical.
        return {c: self.values[:, j].mean(keepdims=True) for j, c in enumerate(self.columns)}

    def to_dict(self) -> dict:
        doc: dict[str, Any] = {"ids": self.ids, "columns": self.columns, "values": self.values.tolist()}
        if self.unit != "item":
            doc["unit"] = self.unit
        if self.clusters is not None:
            doc["clusters"] = self.clusters
        return doc

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ItemTable:
        """The table in `d` (a per-item file, a cache entry); files written before units were
        recorded read as one unit per row."""
        values = np.asarray(d["values"], dtype=np.float64).reshape(len(d["ids"]), len(d["columns"]))
        unit = d.get("unit", "item")
        clusters = d.get("clusters")
        if not isinstance(unit, str) or (clusters is not None and not isinstance(clusters, list)):
            raise ValueError("unit must be a string and clusters a list")
        return cls(list(d["ids"]), list(d["columns"]), values, unit,
                   None if clusters is None else [str(c) for c in clusters])


@dataclass(frozen=True)
class Structure:
    """What a task's fast structure check learnt about one predictions document.

    Returned by `TaskType.fast_structure` and handed back, for the same document, to
    `TaskType.check_structured`: work is passed along the call, never kept in the task, so two
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

    @abc.abstractmethod
    def load_ground_truth(self, benchmark: Benchmark, files: GroundTruthFiles) -> Any:
        """Parse verified ground-truth files into the task's in-memory form."""

    def fast_structure_ok(self, predictions: Any, benchmark: Benchmark) -> bool:
        """Cheap conservative pre-check: True only if `predictions` certainly satisfies the schema.

        When it returns True, full JSON Schema validation of the predictions is skipped (it is
        slow on large documents). The default never skips.
        """
        return False

    def fast_structure(self, predictions: Any, benchmark: Benchmark) -> Structure:
        """`fast_structure_ok` with what it learnt; override to hand work on to `check_structured`."""
        return Structure(bool(self.fast_structure_ok(predictions, benchmark)))

    def check_structured(
        self, predictions: Any, ground_truth: Any, benchmark: Benchmark, issues: IssueList, structure: Structure
    ) -> Any:
        """`check`, given what `fast_structure` returned for these same predictions. The harness
        calls this; the default ignores `structure`."""
        return self.check(predictions, ground_truth, benchmark, issues)

    @abc.abstractmethod
    def check(self, predictions: Any, ground_truth: Any, benchmark: Benchmark, issues: IssueList) -> Any:
        """Layer-2 checks against the ground truth. Add every problem to `issues` with pointers
        under `/predictions`. Must not raise on schema-invalid input (skip what is malformed: the
        schema layer reports it). Returns the parsed form `score` takes."""

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


@dataclass(frozen=True)
class SourceMismatch:
    """One way a `prepare` source differs from what its benchmark is defined on."""

    what: str  # e.g. "images in split 'test'"
    expected: str
    found: str

    def __str__(self) -> str:
        return f"{self.what}: expected {self.expected}, found {self.found}"


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
    import sys

    print(f"warning: --force: preparing {benchmark_id} from a source that differs from {expected_source}:\n{listed}",
          file=sys.stderr)
    return {
        "forced": True,
        "source": str(source),
        "expected": expected_source,
        "deviations": [{"what": m.what, "expected": m.expected, "found": m.found} for m in mismatches],
    }


@dataclass(frozen=True)
class Registry:
    tasks: dict[str, TaskType]
    benchmarks: dict[str, Benchmark]

    def benchmark(self, benchmark_id: str) -> Benchmark:
        try:
            return self.benchmarks[benchmark_id]
        except KeyError:
            known = ", ".join(sorted(self.benchmarks))
            raise UsageError(f"unknown benchmark {benchmark_id!r}; known: {known}") from None

    def task_of(self, benchmark: Benchmark) -> TaskType:
        return self.tasks[benchmark.task]


@cache
def registry() -> Registry:
    """Discover task packages under `tasks/`."""
    import vlbench.tasks as tasks

    found_tasks: dict[str, TaskType] = {}
    found_benchmarks: dict[str, Benchmark] = {}
    for info in sorted(pkgutil.iter_modules(tasks.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"vlbench.tasks.{info.name}")
        task = getattr(module, "TASK", None)
        if task is None:
            continue
        if task.name in found_tasks:
            raise RuntimeError(f"task {task.name} registered twice")
        found_tasks[task.name] = task
        for b in getattr(module, "BENCHMARKS", ()):
            if b.id in found_benchmarks:
                raise RuntimeError(f"benchmark {b.id} registered twice")
            if b.task != task.name:
                raise RuntimeError(f"benchmark {b.id} names task {b.task}, found in {task.name}")
            found_benchmarks[b.id] = b
    return Registry(found_tasks, found_benchmarks)


# Packages that may extend the command line. The engine names them, never imports their modules
# statically: each may export `add_cli(commands, groups)`, see `cli_plugins`.
PLUGIN_PACKAGES = ("vlbench.tasks", "vlbench.baselines")


def cli_plugins() -> list[Any]:
    """Modules (task packages, the baselines package) that export `add_cli`.

    `add_cli(commands, groups)` receives the top-level subparsers action and a dict of the engine's
    command groups' subparsers (e.g. `groups["data"]`); each parser it adds sets
    `func=handler(args) -> int` with `set_defaults`. Imports must stay light (no torch at import).
    """
    found: list[Any] = []
    for name in PLUGIN_PACKAGES:
        if importlib.util.find_spec(name) is None:
            continue
        package = importlib.import_module(name)
        if hasattr(package, "add_cli"):
            found.append(package)
        for info in sorted(pkgutil.iter_modules(getattr(package, "__path__", [])), key=lambda i: i.name):
            if not info.ispkg:
                continue
            module = importlib.import_module(f"{name}.{info.name}")
            if hasattr(module, "add_cli"):
                found.append(module)
    return found
