"""Phrase-grounding recall as pure, vectorised functions (MDETR's arithmetic).

MDETR's evaluator loops over phrases and calls a numpy port of torchvision's `box_iou` on the
(ranked predictions x chain GT boxes) matrix. Here every (predicted box, GT box) pair of the whole
submission is one row of flat arrays, so the IoU is computed once with the same float64
operations in the same order (area without +1, intersection clipped at 0,
union = area_pred + area_gt - inter, iou = inter / union): results are bit-identical.
"""

from __future__ import annotations

import numpy as np

# Protocol k values: 1, 5, 10 and the upper bound (any box of the whole list, MDETR's k = -1).
KS: tuple[int, ...] = (1, 5, 10)
NO_HIT = np.iinfo(np.int64).max


def pairwise_iou(pred: np.ndarray, gt: np.ndarray) -> np.ndarray:
    """IoU of matched columns: pred[:, i] with gt[:, i], both (4, N) rows x1, y1, x2, y2.

    Coordinate-major layout keeps every operand contiguous. torchvision's formula, same order of
    float operations as MDETR's numpy port.
    """
    area_p = (pred[2] - pred[0]) * (pred[3] - pred[1])
    area_g = (gt[2] - gt[0]) * (gt[3] - gt[1])
    w = np.minimum(pred[2], gt[2]) - np.maximum(pred[0], gt[0])
    h = np.minimum(pred[3], gt[3]) - np.maximum(pred[1], gt[1])
    inter = np.maximum(w, 0.0) * np.maximum(h, 0.0)  # clip(min=0)
    union = area_p + area_g - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return inter / union


def box_best_iou(
    pred_boxes: np.ndarray,
    pred_phrase: np.ndarray,
    gt_boxes: np.ndarray,
    gt_start: np.ndarray,
    gt_count: np.ndarray,
) -> np.ndarray:
    """For each predicted box, the max IoU over its phrase's GT boxes, shape (M,).

    Boxes are coordinate-major, (4, M) and (4, G). `pred_phrase[m]` is the phrase row of
    predicted box m; phrase p's GT boxes are
    `gt_boxes[gt_start[p] : gt_start[p] + gt_count[p]]` (gt_count >= 1). A NaN IoU propagates
    into the max, as `ndarray.max` does in MDETR.
    """
    m = pred_boxes.shape[1]
    if m == 0:
        return np.zeros(0)
    counts = gt_count[pred_phrase]
    first_gt = gt_start[pred_phrase]
    single = counts == 1
    if single.all():  # MERGED-BOX, or only single-box chains: one pair per box
        return pairwise_iou(pred_boxes, gt_boxes[:, first_gt])
    out = np.empty(m)
    one = np.flatnonzero(single)
    out[one] = pairwise_iou(pred_boxes[:, one], gt_boxes[:, first_gt[one]])
    many = np.flatnonzero(~single)
    counts = counts[many]
    total = int(counts.sum())
    pair_start = np.cumsum(counts) - counts
    pair_pred = np.repeat(many, counts)
    pair_gt = np.repeat(first_gt[many] - pair_start, counts) + np.arange(total)
    iou = pairwise_iou(pred_boxes[:, pair_pred], gt_boxes[:, pair_gt])
    out[many] = np.maximum.reduceat(iou, pair_start)
    return out


def first_rank(flags: np.ndarray, rank: np.ndarray, entry_starts: np.ndarray) -> np.ndarray:
    """Smallest rank with a True flag in each entry (NO_HIT if none).

    Boxes are stored entry after entry, each entry's boxes in rank order, and every entry listed
    in `entry_starts` is non-empty, so a min-reduce over each contiguous segment does it (O(M)).
    """
    if not len(entry_starts):
        return np.zeros(0, dtype=np.int64)
    return np.minimum.reduceat(np.where(flags, rank, NO_HIT), entry_starts)


def phrase_hits(
    best_iou: np.ndarray,
    rank: np.ndarray,
    entry_rows: np.ndarray,
    entry_starts: np.ndarray,
    n_phrases: int,
    iou_threshold: float = 0.5,
    ks: tuple[int, ...] = KS,
) -> np.ndarray:
    """Hit matrix (n_phrases, len(ks) + 1): R@k for each k, then the upper bound.

    MDETR: hit@k iff `max(ious[:k]) >= threshold`; with a NaN among the first k the max is NaN
    and the phrase misses. A phrase without boxes misses everywhere.
    """
    hit_rank = np.full(n_phrases, NO_HIT, dtype=np.int64)
    nan_rank = np.full(n_phrases, NO_HIT, dtype=np.int64)
    hit_rank[entry_rows] = first_rank(best_iou >= iou_threshold, rank, entry_starts)
    nan_rank[entry_rows] = first_rank(np.isnan(best_iou), rank, entry_starts)
    out = np.empty((n_phrases, len(ks) + 1), dtype=bool)
    for j, k in enumerate(ks):
        out[:, j] = (hit_rank < k) & (nan_rank >= k)
    out[:, -1] = (hit_rank != NO_HIT) & (nan_rank == NO_HIT)
    return out


def recall(hits: np.ndarray, member: np.ndarray | None = None) -> float | None:
    """Micro recall over phrases (optionally those with `member`); None when there are none."""
    if member is not None:
        hits = hits[member]
    return float(hits.mean()) if hits.size else None
