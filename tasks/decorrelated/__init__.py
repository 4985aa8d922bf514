"""Decorrelated retrieval (Kim et al. 2023): ODmAP@1/5/10 over object-removed query images.

Importing this package needs numpy only; the inpainting fill (`tasks.decorrelated.fill`) imports
torch and diffusers lazily.
"""

from vlbench.tasks.decorrelated.benchmarks import BENCHMARKS
from vlbench.tasks.decorrelated.task import DecorrelatedRetrievalTask

TASK = DecorrelatedRetrievalTask()

__all__ = ["BENCHMARKS", "TASK", "DecorrelatedRetrievalTask"]
