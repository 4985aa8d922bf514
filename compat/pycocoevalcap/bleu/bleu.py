"""pycocoevalcap 1.2's `Bleu`: BLEU-1..n with the "closest" reference length, on vlbench's
n-gram index (`vlbench.tasks.captioning.bleu`)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from vlbench.compat._captioning import MAX_N, bleu
from vlbench.compat.pycocoevalcap._inputs import image_lists

_TINY, _SMALL = 1e-15, 1e-9  # pycocoevalcap's smoothing of the length ratio


class Bleu:
    """`Bleu(n).compute_score(gts, res)` -> ([BLEU-1..n], [[per-image BLEU-k] for k in 1..n]),
    Python floats, images in `gts` order; prints the corpus statistics and length ratio as
    pycocoevalcap does (`verbose=1`, its default; `verbose=2` adds one line per image)."""

    def __init__(self, n: int = 4) -> None:
        if type(n) is not int or not 1 <= n <= MAX_N:
            # pycocoevalcap 1.2 counts n-grams up to 4 whatever n is, and fails (IndexError) above
            raise ValueError(f"Bleu's n must be 1 to {MAX_N} (pycocoevalcap 1.2 counts {MAX_N}-grams at most "
                             f"and fails on a larger n), not {n!r}")
        self._n = n
        self._hypo_for_image: dict[Any, Any] = {}
        self.ref_for_image: dict[Any, Any] = {}

    def compute_score(self, gts: Mapping[Hashable, Any], res: Mapping[Hashable, Any], verbose: int = 1
                      ) -> tuple[list[float], list[list[float]]]:
        _, cands, refs = image_lists(gts, res)
        n = self._n
        stats, score, per_image = bleu(cands, refs, n)
        if verbose > 1:
            # pycocoevalcap cooks each image with its default n = 4, whatever Bleu's n
            for row, c, rs in zip(stats.tolist(), cands, refs):
                comps = {"reflen": [len(r.split()) for r in rs], "testlen": len(c.split()),
                         "guess": [int(x) for x in row[MAX_N : 2 * MAX_N]],
                         "correct": [int(x) for x in row[:MAX_N]]}
                print(comps, int(row[2 * MAX_N + 1]))
        if verbose > 0:
            total = stats.sum(axis=0).tolist()
            testlen, reflen = int(total[2 * MAX_N]), int(total[2 * MAX_N + 1])
            print({"testlen": testlen, "reflen": reflen,
                   "guess": [int(x) for x in total[MAX_N : MAX_N + n]],
                   "correct": [int(x) for x in total[:n]]})
            print("ratio:", (testlen + _TINY) / (reflen + _SMALL))
        return score, [per_image[:, k].tolist() for k in range(n)]

    def method(self) -> str:
        return "Bleu"
