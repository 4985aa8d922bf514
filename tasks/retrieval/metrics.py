"""Recall@K for image-text retrieval as pure functions over ranked index matrices.

A query is a hit at K when any of its ground-truth items is among its first K retrieved items
(the CLIP paper's definition; CLIP_benchmark binarises per-query recall the same way).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

KS: tuple[int, ...] = (1, 5, 10)
T = TypeVar("T", float, np.ndarray)


def hits_at_k(relevant: np.ndarray, ks: Sequence[int] = KS) -> np.ndarray:
    """Per-query hits: `relevant[q, r]` says whether the item at rank r is correct for query q.

    Returns a (n_queries, len(ks)) float array of 0/1.
    """
    first_hit = np.where(relevant.any(axis=1), relevant.argmax(axis=1), np.iinfo(np.int64).max)
    return (first_hit[:, None] < np.asarray(ks)[None, :]).astype(np.float64)


def image_to_text_hits(
    ranked_captions: np.ndarray, caption_image: np.ndarray, ks: Sequence[int] = KS
) -> np.ndarray:
    """`ranked_captions[q]`: caption indices retrieved for image q; `caption_image[c]`: image of c."""
    queries = np.arange(ranked_captions.shape[0])[:, None]
    return hits_at_k(caption_image[ranked_captions] == queries, ks)


def text_to_image_hits(
    ranked_images: np.ndarray, caption_image: np.ndarray, ks: Sequence[int] = KS
) -> np.ndarray:
    """`ranked_images[c]`: image indices retrieved for caption c."""
    return hits_at_k(ranked_images == caption_image[:, None], ks)


def rsum(recalls: Sequence[T]) -> T:
    """RSUM: the sum of the six recalls in percent points (floats, or arrays of bootstrap
    replicates, element-wise)."""
    return 100.0 * sum(recalls)  # type: ignore[return-value]


def expected_hit_at_k(n_relevant: np.ndarray, n_gallery: np.ndarray, k: int) -> np.ndarray:
    """P(hit at k) of random ranking (k of the N gallery items drawn uniformly without
    replacement, r of them correct): 1 - C(N - r, k) / C(N, k), as a product of k ratios."""
    r = np.asarray(n_relevant, dtype=np.float64)
    n = np.asarray(n_gallery, dtype=np.float64)
    miss = np.ones(np.broadcast(r, n).shape)
    for j in range(k):
        miss = miss * np.clip((n - r - j) / (n - j), 0.0, 1.0)
    return 1.0 - miss
