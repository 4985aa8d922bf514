"""The names the grounding protocol is made of, for the benchmark records: the entity types scored
per column, the recall measures, the two box protocols and the ground-truth file's name.

Apart from the modules that use them so that discovering the benchmarks (`benchmarks.py`, read at
every command's start) does not import the loaders, checks and scoring."""

from __future__ import annotations

from vlbench.tasks.grounding.metrics import KS

# The eight entity types scored per column (the ninth, notvisual, never has a box).
TYPES: tuple[str, ...] = (
    "people", "clothing", "bodyparts", "animals", "vehicles", "instruments", "scene", "other",
)

MEASURES: tuple[str, ...] = tuple(f"R@{k}" for k in KS) + ("UB",)

PROTOCOLS: tuple[str, ...] = ("", "merged_")  # ANY-BOX, MERGED-BOX

GT_FILE = "ground_truth.json"
