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
        if type(n) is not int or n < MAX_N:
            raise ValueError(f"Cider's n must be at least {MAX_N}, not {n!r}: pycocoevalcap 1.2 counts n-grams "
                             f"up to {MAX_N} whatever n is, and fails (IndexError) on a smaller n")
        if sigma != CIDER_SIGMA:
            raise ValueError(f"vlbench.compat computes CIDEr-D with pycocoevalcap's sigma={CIDER_SIGMA} (every "
                             f"published CIDEr uses it), not sigma={sigma!r}")
        self._n = n
        self._sigma = sigma

    def compute_score(self, gts: Mapping[Hashable, Any], res: Mapping[Hashable, Any]) -> tuple[Any, np.ndarray]:
        _, cands, refs = image_lists(gts, res)
        if not any(r.split() for rs in refs for r in rs):
            # pycocoevalcap fails here too: max() of its empty document-frequency table
            raise ValueError("CIDEr needs at least one reference with a word: every reference is empty"
                             if refs else "CIDEr needs at least one image: gts and res are empty")
        score = cider_d(cands, refs)
        if self._n > MAX_N:
            # pycocoevalcap's quirk: orders above 4 have no n-grams, so they add zeros to the mean
            # over its n orders
            score = score * (MAX_N / self._n)
        return np.mean(score), score

    def method(self) -> str:
        return "CIDEr"
