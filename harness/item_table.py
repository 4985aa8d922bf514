"""Per-item statistics of one query population: what the bootstrap resamples."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class ItemTable:
    """Per-item statistics of one query population: rows are items, columns are named values.

    The task's `metrics_from_means` turns column means into metric values, so a bootstrap can
    resample rows and recompute every metric (including corpus-level ones such as BLEU, whose
    per-item columns are sufficient statistics rather than scores).
    """

    ids: list[str]
    columns: list[str]
    values: np.ndarray  # shape (len(ids), len(columns)), float64

    def column_means(self) -> dict[str, np.ndarray]:
        """Each column's mean as a length-1 array: the shape `metrics_from_means` takes."""
        # Per column, not values.mean(axis=0): the 1-D pairwise sum is the order the bootstrap
        # and every earlier score used, so point values stay bit-identical.
        return {c: self.values[:, j].mean(keepdims=True) for j, c in enumerate(self.columns)}

    def to_dict(self) -> dict:
        return {"ids": self.ids, "columns": self.columns, "values": self.values.tolist()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ItemTable:
        values = np.asarray(d["values"], dtype=np.float64).reshape(len(d["ids"]), len(d["columns"]))
        return cls(list(d["ids"]), list(d["columns"]), values)
