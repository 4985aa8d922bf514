"""Where a benchmark's ground-truth files are, whether they are the pinned bytes, and reading them
(`load_ground_truth`: the one way in, for validation, the recipes and the tools)."""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlbench.benchmark import PACKAGE, Benchmark, DataFile
from vlbench.errors import UsageError
from vlbench.hashing import sha256_bytes, sha256_file

if TYPE_CHECKING:
    from vlbench.task_type import TaskType


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
        lines = "\n".join(f"{k}:{v}" for k, v in sorted(self.sha256.items()))
        return sha256_bytes(lines.encode())


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


def load_ground_truth(
    benchmark: Benchmark, data_dir: str | os.PathLike | None, task: TaskType | None = None
) -> tuple[Any, GroundTruthFiles]:
    """A benchmark's ground truth, read by its task (`TaskType.load_ground_truth`) from the files
    `locate_ground_truth` finds and verifies, and those files. `task`: the benchmark's task when
    the caller has it (default: the registry's)."""
    files = locate_ground_truth(benchmark, data_dir)
    if task is None:
        from vlbench.registry import registry  # discovery, only when the caller has no task

        task = registry().task_of(benchmark)
    return task.load_ground_truth(benchmark, files), files
