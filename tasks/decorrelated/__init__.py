"""Decorrelated retrieval (Kim et al. 2023): ODmAP@1/5/10 over object-removed query images.

Importing this package needs numpy only; the inpainting fill (`tasks.decorrelated.fill`) imports
torch and diffusers lazily.
"""

from vlbench.registry import lazy_exports
from vlbench.tasks.decorrelated.benchmarks import BENCHMARKS

# the task type, imported when one of its benchmarks is first used (vlbench.registry)
TASK_MODULE = "vlbench.tasks.decorrelated.task"
__getattr__ = lazy_exports(TASK_MODULE, "DecorrelatedRetrievalTask")

__all__ = ["BENCHMARKS", "TASK", "DecorrelatedRetrievalTask"]
