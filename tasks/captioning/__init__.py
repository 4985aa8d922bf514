"""Caption scoring: the COCO caption metrics of pycocoevalcap, faster and line-safe.

See README.md in this folder (the metric card)."""

from vlbench.tasks.captioning.benchmarks import BENCHMARKS
from vlbench.tasks.captioning.task import CaptioningTask

TASK = CaptioningTask()

__all__ = ["TASK", "BENCHMARKS"]
