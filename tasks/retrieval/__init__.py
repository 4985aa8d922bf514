"""Standard image-text retrieval: R@1/5/10 image->text and text->image, and RSUM."""

from vlbench.registry import lazy_exports
from vlbench.tasks.retrieval.benchmarks import BENCHMARKS

# the task type, imported when one of its benchmarks is first used (vlbench.registry)
TASK_MODULE = "vlbench.tasks.retrieval.task"
__getattr__ = lazy_exports(TASK_MODULE, "RetrievalTask")

__all__ = ["BENCHMARKS", "TASK", "RetrievalTask"]
