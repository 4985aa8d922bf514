"""ODmAP@k math (Kim et al. 2023, section 3.2) as pure functions on arrays.

Class sets are bit masks packed into bytes (`numpy.packbits` along the class axis), so relevance of
a (query, caption) pair is two byte-wise ANDs whatever the number of classes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

KS: tuple[int, ...] = (1, 5, 10)


def pack_classes(sets: Sequence[Sequence[int]], n_classes: int) -> np.ndarray:
    """(len(sets), ceil(n_classes / 8)) uint8 bit masks of class-index sets."""
    dense = np.zeros((len(sets), max(n_classes, 1)), dtype=bool)
    for row, s in enumerate(sets):
        dense[row, list(s)] = True
    return np.packbits(dense, axis=1)


def pack_csr(indptr: np.ndarray, indices: np.ndarray, n_classes: int) -> np.ndarray:
    """Bit masks from CSR arrays (row i holds classes indices[indptr[i]:indptr[i+1]])."""
    n_rows = len(indptr) - 1
    dense = np.zeros((n_rows, max(n_classes, 1)), dtype=bool)
    rows = np.repeat(np.arange(n_rows), np.diff(indptr))
    dense[rows, indices] = True
    return np.packbits(dense, axis=1)


def relevance(
    caption_masks: np.ndarray, removed_masks: np.ndarray, present_masks: np.ndarray
) -> np.ndarray:
    """Correctness of retrieved captions: rule (1) no removed class and rule (2) a present class.

    `caption_masks` is (Q, K, B) (the masks of each query's retrieved captions) and the class
    masks are (Q, B). Returns (Q, K) bool.
    """
    no_removed = ~np.any(caption_masks & removed_masks[:, None, :], axis=-1)
    some_present = np.any(caption_masks & present_masks[:, None, :], axis=-1)
    return no_removed & some_present


def average_precision_at_k(rel: np.ndarray, n_relevant: np.ndarray, k: int) -> np.ndarray:
    """AP@k = (1 / min(k, R)) * sum_{i<=k} P(i) rel(i), per row of `rel` (Q, >=k) bool.

    P(i) is the precision of the top i. A query with R = 0 has AP 0 (no caption can be correct;
    prepared manifests contain none).
    """
    top = rel[:, :k].astype(np.float64)
    hits = np.cumsum(top, axis=1)
    precision = hits / np.arange(1, top.shape[1] + 1)
    total = np.sum(precision * top, axis=1)
    denom = np.minimum(k, np.asarray(n_relevant, dtype=np.int64))
    return np.divide(total, denom, out=np.zeros_like(total), where=denom > 0)


def count_relevant(
    caption_masks: np.ndarray, removed_masks: np.ndarray, present_masks: np.ndarray
) -> np.ndarray:
    """R per query: the number of gallery captions correct for it.

    Captions are grouped by their distinct mention mask (a few thousand patterns for 616k COCO
    captions), so the cost is queries x patterns, not queries x captions.
    """
    patterns, counts = np.unique(caption_masks, axis=0, return_counts=True)
    out = np.zeros(len(removed_masks), dtype=np.int64)
    step = max(1, 2_000_000 // max(1, len(patterns)))
    for s in range(0, len(removed_masks), step):
        rm = removed_masks[s : s + step]
        pm = present_masks[s : s + step]
        ok = relevance(np.broadcast_to(patterns, (len(rm), *patterns.shape)), rm, pm)
        out[s : s + step] = ok.astype(np.int64) @ counts
    return out
