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
    # What the bootstrap resamples, e.g. "image": rows that share a unit (the captions of one
    # image, the queries made from one source image) are drawn together. `clusters` gives each
    # row's unit id; None means each row is its own unit, named by its id. Populations with the
    # same unit (other than "item") share one draw: the same images for every population.
    unit: str = "item"
    clusters: list[str] | None = None

    def __post_init__(self) -> None:
        if self.clusters is not None and len(self.clusters) != len(self.ids):
            raise ValueError(f"{len(self.clusters)} cluster ids for {len(self.ids)} rows")
        if self.clusters is not None and self.unit == "item":
            raise ValueError("rows grouped into clusters need the name of the unit (e.g. 'image')")

    def unit_ids(self) -> list[str]:
        """The resampled unit of each row."""
        return self.ids if self.clusters is None else self.clusters

    def column_means(self) -> dict[str, np.ndarray]:
        """Each column's mean as a length-1 array: the shape `metrics_from_means` takes."""
        # Per column, not values.mean(axis=0): the 1-D pairwise sum is the order the bootstrap
        # and every earlier score used, so point values stay bit-identical.
        return {c: self.values[:, j].mean(keepdims=True) for j, c in enumerate(self.columns)}

    def to_dict(self) -> dict:
        doc: dict[str, Any] = {"ids": self.ids, "columns": self.columns, "values": self.values.tolist()}
        if self.unit != "item":
            doc["unit"] = self.unit
        if self.clusters is not None:
            doc["clusters"] = self.clusters
        return doc

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ItemTable:
        """The table in `d` (a per-item file, a cache entry); files written before units were
        recorded read as one unit per row."""
        values = np.asarray(d["values"], dtype=np.float64).reshape(len(d["ids"]), len(d["columns"]))
        unit = d.get("unit", "item")
        clusters = d.get("clusters")
        if not isinstance(unit, str) or (clusters is not None and not isinstance(clusters, list)):
            raise ValueError("unit must be a string and clusters a list")
        return cls(list(d["ids"]), list(d["columns"]), values, unit,
                   None if clusters is None else [str(c) for c in clusters])
