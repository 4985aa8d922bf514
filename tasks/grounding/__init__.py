"""Phrase grounding on Flickr30k Entities (MDETR's evaluator protocol). See README.md."""

from vlbench.tasks.grounding.benchmarks import BENCHMARKS
from vlbench.tasks.grounding.task import GroundingTask

TASK = GroundingTask()

__all__ = ["BENCHMARKS", "TASK"]
