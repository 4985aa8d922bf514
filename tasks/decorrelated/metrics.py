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

    Captions are grouped by their distinct mention mask (tens of thousands of patterns for 616k
    captions) and masks are compared 8 bytes at a time, so the cost is queries x patterns x words.
    """
    n_bytes = caption_masks.shape[1]
    as_void = np.ascontiguousarray(caption_masks).view(np.dtype((np.void, n_bytes))).ravel()
    unique, counts = np.unique(as_void, return_counts=True)
    patterns = _words(np.frombuffer(unique.tobytes(), dtype=np.uint8).reshape(-1, n_bytes))
    removed, present = _words(removed_masks), _words(present_masks)
    columns = [np.ascontiguousarray(patterns[:, j]) for j in range(patterns.shape[1])]
    out = np.zeros(len(removed), dtype=np.int64)
    for q in range(len(removed)):
        hit_removed = np.zeros(len(counts), dtype=bool)
        hit_present = np.zeros(len(counts), dtype=bool)
        for j, col in enumerate(columns):
            if removed[q, j]:
                hit_removed |= (col & removed[q, j]) != 0
            if present[q, j]:
                hit_present |= (col & present[q, j]) != 0
        out[q] = counts[hit_present & ~hit_removed].sum()
    return out


def _words(masks: np.ndarray) -> np.ndarray:
    """Byte masks padded to whole uint64 words, viewed as (rows, words)."""
    pad = (-masks.shape[1]) % 8
    padded = np.pad(masks, ((0, 0), (0, pad))) if pad else np.ascontiguousarray(masks)
    return padded.view(np.uint64)


def expected_average_precision_at_k(n_relevant: np.ndarray, n_gallery: int, k: int) -> np.ndarray:
    """E[AP@k] of random ranking: the top k are k gallery captions drawn uniformly without
    replacement (what `random_predictions` submits), R of the N captions correct.

    By linearity, with P(rank i correct) = R/N and P(ranks i and j correct) = R(R-1)/(N(N-1)):
    E[P(i) rel(i)] = (R/N) (1 + (i-1)(R-1)/(N-1)) / i, summed over i <= k and divided by min(k, R).
    Exact (no sampling): the chance row is this expectation, not one random draw.
    """
    r = np.asarray(n_relevant, dtype=np.float64)
    n = float(n_gallery)
    if k > n_gallery:
        raise ValueError(f"a gallery of {n_gallery} captions has no top {k}")
    i = np.arange(1, k + 1, dtype=np.float64)
    pair = (r - 1.0) / (n - 1.0) if n > 1 else np.zeros_like(r)
    per_rank = (r / n)[:, None] * (1.0 + (i - 1.0)[None, :] * pair[:, None]) / i[None, :]
    denom = np.minimum(float(k), r)
    total = per_rank.sum(axis=1)
    return np.divide(total, denom, out=np.zeros_like(total), where=denom > 0)
