"""Discovery: which task types, benchmarks and command-line plugins are installed.

Task packages are found, not listed here: a subpackage of `tasks` that exports `TASK` (a
`vlbench.task_type.TaskType` instance) and `BENCHMARKS` (a tuple of `vlbench.benchmark.Benchmark`)
is registered.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from vlbench.errors import UsageError

if TYPE_CHECKING:  # discovery needs neither at run time (and TaskType pulls in numpy)
    from vlbench.benchmark import Benchmark
    from vlbench.task_type import TaskType


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

    def references_task(self) -> TaskType | None:
        """The task that scores against a reference file given as `--references`, if installed."""
        return next((t for t in self.tasks.values() if t.reads_references), None)


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
