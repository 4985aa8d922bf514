"""Discovery: which task types, benchmarks and command-line plugins are installed.

Task packages are found, not listed here: a subpackage of `tasks` that exports `BENCHMARKS` (a
tuple of `vlbench.benchmark.Benchmark`, light records) and `TASK_MODULE` (the name of the module
that holds its `TASK`, a `vlbench.task_type.TaskType` instance) is registered. Discovery reads the
records only; a task type is imported when a benchmark of it is first used, so a command that
scores one benchmark imports no other task's code.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from vlbench.errors import UsageError

if TYPE_CHECKING:  # discovery needs neither at run time (and TaskType pulls in numpy)
    from vlbench.benchmark import Benchmark
    from vlbench.task_type import TaskType


class TaskTypes(Mapping[str, "TaskType"]):
    """Task name -> `TaskType`, each imported from its package's `TASK_MODULE` when first asked for."""

    def __init__(self, modules: Mapping[str, str]) -> None:
        self._modules = dict(modules)
        self._loaded: dict[str, TaskType] = {}

    def __getitem__(self, name: str) -> TaskType:
        if name not in self._loaded:
            task = importlib.import_module(self._modules[name]).TASK
            if task.name != name:
                raise RuntimeError(f"{self._modules[name]} holds task {task.name}, registered as {name}")
            self._loaded[name] = task
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)


@dataclass(frozen=True)
class Registry:
    tasks: Mapping[str, TaskType]
    benchmarks: dict[str, Benchmark]

    def benchmark(self, benchmark_id: str) -> Benchmark:
        try:
            return self.benchmarks[benchmark_id]
        except KeyError:
            import difflib

            known = ", ".join(sorted(self.benchmarks))
            near = difflib.get_close_matches(str(benchmark_id), list(self.benchmarks), n=1, cutoff=0.6)
            guess = f"did you mean {near[0]!r}? " if near else ""
            raise UsageError(f"unknown benchmark {benchmark_id!r}; {guess}known: {known}") from None

    def task_of(self, benchmark: Benchmark) -> TaskType:
        return self.tasks[benchmark.task]

    def references_task(self) -> TaskType | None:
        """The task that scores against a reference file given as `--references`, if installed."""
        return next((t for t in self.tasks.values() if t.reads_references), None)


@cache
def registry() -> Registry:
    """Discover task packages under `tasks/` (their records; their task types on first use)."""
    import vlbench.tasks as tasks

    task_modules: dict[str, str] = {}
    found_benchmarks: dict[str, Benchmark] = {}
    for info in sorted(pkgutil.iter_modules(tasks.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        package = importlib.import_module(f"vlbench.tasks.{info.name}")
        module = package.__dict__.get("TASK_MODULE")  # not getattr: that would import the task type
        if module is None:
            continue
        names = {b.task for b in package.BENCHMARKS}
        if len(names) != 1:
            raise RuntimeError(f"{package.__name__}'s benchmarks must name its one task; they name {sorted(names)}")
        name = names.pop()
        if name in task_modules:
            raise RuntimeError(f"task {name} registered twice")
        task_modules[name] = module
        for b in package.BENCHMARKS:
            if b.id in found_benchmarks:
                raise RuntimeError(f"benchmark {b.id} registered twice")
            found_benchmarks[b.id] = b
    return Registry(TaskTypes(task_modules), found_benchmarks)


def lazy_exports(module: str, *names: str) -> Callable[[str], Any]:
    """A task package's module `__getattr__`: `TASK` and `names`, taken from `module` when first
    read (`from vlbench.tasks.grounding import TASK` works, and discovery does not import it)."""
    exported = {"TASK", *names}

    def attribute(name: str) -> Any:
        if name not in exported:
            raise AttributeError(f"module {module.rpartition('.')[0]!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return attribute


# Packages that may extend the command line. The engine names them, never imports their modules
# statically: each may export `add_cli(commands, groups)`, see `cli_plugins`.
PLUGIN_PACKAGES = ("vlbench.tasks", "vlbench.baselines")


def cli_plugins() -> list[Any]:
    """Modules that export `add_cli`: a plugin package itself (the baselines package; its modules are
    then not imported), else each of its subpackages that does (task packages).

    `add_cli(commands, groups)` receives the top-level subparsers action and a dict of the engine's
    command groups' subparsers (e.g. `groups["data"]`); each parser it adds sets
    `func=handler(args) -> int` with `set_defaults`. Imports must stay light (no torch at import).
    """
    found: list[Any] = []
    for name in PLUGIN_PACKAGES:
        if importlib.util.find_spec(name) is None:
            continue
        package = importlib.import_module(name)
        if hasattr(package, "add_cli"):  # the package speaks for its modules (none is imported)
            found.append(package)
            continue
        for info in sorted(pkgutil.iter_modules(getattr(package, "__path__", [])), key=lambda i: i.name):
            if not info.ispkg:
                continue
            module = importlib.import_module(f"{name}.{info.name}")
            if hasattr(module, "add_cli"):
                found.append(module)
    return found
