"""pycocoevalcap 1.2's `Spice`, run only where it can run.

SPICE 1.0 parses captions with Stanford CoreNLP 3.6.0, whose two jars pycocoevalcap downloads at
first use from the Stanford site (no package registry carries them). Where they, the SPICE jar or
Java are missing, `Spice()` raises `SpiceUnavailable`, naming what is missing: it never returns a
number it did not compute. Where they are present, the jar runs as pycocoevalcap runs it and the
results are read the same way, quirks included: per-image scores come in sorted image id order."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from vlbench.compat._captioning import run_spice_jar, spice_jar_or_reason
from vlbench.compat.pycocoevalcap._inputs import image_lists


class SpiceUnavailable(RuntimeError):
    """SPICE cannot run on this machine; the message says what is missing."""


class Spice:
    """`compute_score(gts, res)` -> (mean of the images' `All.f` as numpy float64, NaN if any image
    has none; [per-image {category: {"pr", "re", "f", ...}}] in sorted image id order)."""

    def __init__(self) -> None:
        jar, reason = spice_jar_or_reason()
        if jar is None:
            raise SpiceUnavailable(f"SPICE cannot run here: {reason}")
        self._jar = jar

    def float_convert(self, obj: Any) -> float:
        try:
            return float(obj)
        except (TypeError, ValueError):
            return np.nan

    def compute_score(self, gts: Mapping[Hashable, Any], res: Mapping[Hashable, Any]) -> tuple[Any, list[dict]]:
        if sorted(gts.keys()) != sorted(res.keys()):  # type: ignore[type-var]
            raise AssertionError("gts and res must have the same image ids")
        ids = sorted(gts.keys())  # type: ignore[type-var]
        _, cands, refs = image_lists({i: gts[i] for i in ids}, {i: res[i] for i in ids})
        records = [{"image_id": i, "test": c, "refs": r} for i, c, r in zip(ids, cands, refs)]
        results = run_spice_jar(self._jar, records)
        by_image: dict[Any, dict] = {}
        all_f: list[float] = []
        for item in results:
            by_image[item["image_id"]] = item["scores"]
            all_f.append(self.float_convert(item["scores"]["All"]["f"]))
        scores = [
            {category: {k: self.float_convert(v) for k, v in values.items()}
             for category, values in by_image[i].items()}
            for i in ids
        ]
        return np.mean(np.array(all_f)), scores

    def method(self) -> str:
        return "SPICE"
