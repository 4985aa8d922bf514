"""Caption scoring: the COCO caption metrics of pycocoevalcap, faster and line-safe.

See README.md in this folder (the metric card)."""

from vlbench.registry import lazy_exports
from vlbench.tasks.captioning.benchmarks import BENCHMARKS

# the task type, imported when one of its benchmarks is first used (vlbench.registry)
TASK_MODULE = "vlbench.tasks.captioning.task"
__getattr__ = lazy_exports(TASK_MODULE, "CaptioningTask")

__all__ = ["TASK", "BENCHMARKS"]
