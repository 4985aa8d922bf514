"""pycocoevalcap 1.2's `Cider`, which computes CIDEr-D (clipping, Gaussian length penalty, x10),
on vlbench's n-gram index (`vlbench.tasks.captioning.cider`)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from vlbench.compat._captioning import CIDER_SIGMA, MAX_N, cider_d
from vlbench.compat.pycocoevalcap._inputs import image_lists


class Cider:
    """`compute_score(gts, res)` -> (mean CIDEr-D as numpy float64, per-image numpy array in `gts`
    order). Document frequencies come from the references passed in, as in pycocoevalcap, so a
    one-image call scores 0."""

    def __init__(self, test: Any = None, refs: Any = None, n: int = MAX_N, sigma: float = CIDER_SIGMA) -> None:
        # test and refs are accepted and ignored, as pycocoevalcap ignores them
        if n != MAX_N or sigma != CIDER_SIGMA:
            raise ValueError(f"vlbench.compat computes CIDEr-D with n={MAX_N} and sigma={CIDER_SIGMA} "
                             f"(pycocoevalcap's defaults, which COCO results use), not n={n!r}, sigma={sigma!r}")
        self._n = n
        self._sigma = sigma

    def compute_score(self, gts: Mapping[Hashable, Any], res: Mapping[Hashable, Any]) -> tuple[Any, np.ndarray]:
        _, cands, refs = image_lists(gts, res)
        if not any(r.split() for rs in refs for r in rs):
            # pycocoevalcap fails here too: max() of its empty document-frequency table
            raise ValueError("CIDEr needs at least one reference with a word: every reference is empty"
                             if refs else "CIDEr needs at least one image: gts and res are empty")
        score = cider_d(cands, refs)
        return np.mean(score), score

    def method(self) -> str:
        return "CIDEr"
