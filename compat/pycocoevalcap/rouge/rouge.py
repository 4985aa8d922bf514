"""pycocoevalcap 1.2's `Rouge`: ROUGE-L (LCS on single-space tokens, beta 1.2), on vlbench's
bit-parallel LCS (`vlbench.tasks.captioning.rouge`)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from vlbench.compat._captioning import ROUGE_BETA, rouge
from vlbench.compat.pycocoevalcap._inputs import image_lists


class Rouge:
    """`compute_score(gts, res)` -> (mean ROUGE-L as numpy float64, per-image numpy array in `gts`
    order); `calc_score([candidate], refs)` -> one image's float. `beta` is read at each call."""

    def __init__(self) -> None:
        self.beta = ROUGE_BETA

    def calc_score(self, candidate: Sequence[str], refs: Sequence[str]) -> float:
        if len(candidate) != 1:
            raise AssertionError(f"calc_score takes a list holding one candidate, not {len(candidate)}")
        if len(refs) == 0:
            raise AssertionError("calc_score needs at least one reference")
        return float(rouge([candidate[0]], [list(refs)], self.beta)[0])

    def compute_score(self, gts: Mapping[Hashable, Any], res: Mapping[Hashable, Any]) -> tuple[Any, np.ndarray]:
        _, cands, refs = image_lists(gts, res)
        score = rouge(cands, refs, self.beta)
        return np.mean(score), score

    def method(self) -> str:
        return "Rouge"
