"""Caption scoring: the COCO caption metrics of pycocoevalcap, faster and line-safe.

See README.md in this folder (the metric card)."""

from tasks.captioning.benchmarks import BENCHMARKS
from tasks.captioning.task import CaptioningTask

TASK = CaptioningTask()

__all__ = ["TASK", "BENCHMARKS"]
