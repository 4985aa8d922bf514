"""Phrase grounding on Flickr30k Entities (MDETR's evaluator protocol). See README.md."""

from tasks.grounding.benchmarks import BENCHMARKS
from tasks.grounding.task import GroundingTask

TASK = GroundingTask()

__all__ = ["BENCHMARKS", "TASK"]
