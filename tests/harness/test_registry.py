"""`vlbench.registry`: discovery of task types, benchmarks and command-line plugins, and the
benchmark records' cross-references that the engine relies on instead of task names."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from vlbench.errors import UsageError
from vlbench.registry import TaskTypes, cli_plugins, registry
from vlbench.task_type import TaskType


def test_every_task_package_is_discovered_with_its_benchmarks() -> None:
    reg = registry()
    assert set(reg.tasks) == {"retrieval", "decorrelated_retrieval", "grounding", "captioning"}
    assert all(isinstance(t, TaskType) and t.name == name for name, t in reg.tasks.items())
    for benchmark in reg.benchmarks.values():
        assert reg.task_of(benchmark).name == benchmark.task
        assert benchmark.main_score in {m.key for m in benchmark.metrics}


def test_an_unknown_benchmark_names_the_known_ones() -> None:
    with pytest.raises(UsageError) as exc:
        registry().benchmark("coco-6k")
    assert "unknown benchmark 'coco-6k'" in str(exc.value) and "coco-5k" in str(exc.value)


def test_the_references_task_is_found_by_its_hook() -> None:
    reg = registry()
    readers = [t.name for t in reg.tasks.values() if t.reads_references]
    assert readers == ["captioning"] and reg.references_task() is reg.tasks["captioning"]


def test_trade_off_records_name_registered_benchmarks_and_their_metrics() -> None:
    reg = registry()
    pairs = {b.id: b.trade_off for b in reg.benchmarks.values() if b.trade_off is not None}
    assert {k: v.against for k, v in pairs.items()} == {
        "coco-5k-decorrelated": "coco-5k",
        "flickr30k-1k-decorrelated": "flickr30k-1k",
        "mini-decorrelated": "mini-shapes-retrieval",
    }
    for benchmark_id, trade_off in pairs.items():
        reg.benchmarks[benchmark_id].metric(trade_off.y_key)
        reg.benchmarks[trade_off.against].metric(trade_off.x_key)
        # the plot pairs one model on two benchmarks of one world: the same mini world, or none
        assert (reg.benchmarks[benchmark_id].option("mini_world")
                == reg.benchmarks[trade_off.against].option("mini_world")), benchmark_id


def test_sums_are_made_of_the_benchmark_s_own_metrics() -> None:
    for benchmark in registry().benchmarks.values():
        keys = {m.key for m in benchmark.metrics}
        for metric in benchmark.metrics:
            assert set(metric.sum_of) <= keys
            if metric.key == "RSUM":
                assert metric.sum_of == ("i2t_R@1", "i2t_R@5", "i2t_R@10", "t2i_R@1", "t2i_R@5", "t2i_R@10")


def test_cli_plugins_export_add_cli() -> None:
    names = [m.__name__ for m in cli_plugins()]
    assert "vlbench.baselines" in names and "vlbench.tasks.grounding" in names
    assert all(callable(m.add_cli) for m in cli_plugins())


def test_a_plugin_package_with_add_cli_speaks_for_its_modules() -> None:
    """The baselines package adds its commands itself: none of its subpackages is imported."""
    code = ("import sys\nfrom vlbench.registry import cli_plugins\nnames = [m.__name__ for m in cli_plugins()]\n"
            "print(names.count('vlbench.baselines'), sorted(m for m in sys.modules if m.startswith('vlbench.baselines.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1 []"


def test_discovery_reads_records_and_imports_a_task_type_on_first_use() -> None:
    """A command on one benchmark imports that benchmark's task type only (start-up time)."""
    code = (
        "import sys\n"
        "from vlbench.registry import registry\n"
        "reg = registry()\n"
        "assert len(reg.benchmarks) > 10 and len(reg.tasks) == 4\n"
        "before = sorted(m for m in sys.modules if m.startswith('vlbench.tasks.') and m.endswith('.task'))\n"
        "reg.task_of(reg.benchmark('mini-retrieval'))\n"
        "after = sorted(m for m in sys.modules if m.startswith('vlbench.tasks.') and m.endswith('.task'))\n"
        "print(before, after)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "['vlbench.tasks.retrieval.task']"]


def test_the_package_s_task_is_the_registry_s() -> None:
    import vlbench.tasks.grounding as grounding
    from vlbench.tasks.grounding.task import GroundingTask

    assert grounding.TASK is registry().tasks["grounding"] and grounding.GroundingTask is GroundingTask
    with pytest.raises(AttributeError, match="has no attribute 'add_cli_x'"):
        grounding.add_cli_x  # noqa: B018 (the attribute read is the test)
    assert not hasattr(importlib.import_module("vlbench.tasks.retrieval"), "add_cli")


def test_a_task_module_holding_another_task_is_refused() -> None:
    tasks = TaskTypes({"retrieval": "vlbench.tasks.captioning.task"})
    assert list(tasks) == ["retrieval"] and len(tasks) == 1
    with pytest.raises(RuntimeError, match="holds task captioning, registered as retrieval"):
        tasks["retrieval"]
