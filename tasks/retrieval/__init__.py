"""Standard image-text retrieval: R@1/5/10 image->text and text->image, and RSUM."""

from vlbench.tasks.retrieval.benchmarks import BENCHMARKS
from vlbench.tasks.retrieval.task import RetrievalTask

TASK = RetrievalTask()

__all__ = ["BENCHMARKS", "TASK", "RetrievalTask"]
