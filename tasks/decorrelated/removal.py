"""Which classes an object-removed query image removes: the paper's tau rules on pixel masks.

Kim et al. 2023, section 3.1 (see `../shared/reference/odmap_paper.md`). Areas are areas of unions
of boxes, computed on a boolean pixel mask of the image, so overlapping boxes count once.

For a chosen class c_r with box union B_r:
- C+ (tau2): every other class c whose boxes are mostly inside B_r,
  area(B_r & B_c) / area(B_c) > tau2, is removed too. The removed region B' is the union of the
  boxes of {c_r} and C+.
- size (tau3): area(B') / area(image) < tau3.
- survival (tau1): every class that is kept must stay visible,
  area(B' & B_c) / area(B_c) < tau1. The paper states this for single-class removals with B_r;
  we apply it with B' (the region actually erased) to multi-class removals too, since a kept class
  that is mostly erased would make the "present" label false. A kept class with a ratio in
  [tau1, tau2] is neither removed nor surviving, so that removal is not used.
- at least one class must remain present (the image had at least two distinct classes).
Box coordinates are COCO-style [x, y, w, h] in pixels; the mask covers every pixel the box
touches, columns floor(x) .. ceil(x + w) - 1 (rows likewise), clipped to the image, so the erased
region never leaves a sliver of a removed object.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

TAU1 = 0.4
TAU2 = 0.8
TAU3 = 0.7

BoxXYWH = tuple[float, float, float, float]


@dataclass(frozen=True)
class Removal:
    target_class: str
    removed_classes: tuple[str, ...]
    present_classes: tuple[str, ...]
    removed_boxes: tuple[BoxXYWH, ...]
    removed_area_fraction: float


def box_mask(boxes: Sequence[BoxXYWH], width: int, height: int) -> np.ndarray:
    mask = np.zeros((height, width), dtype=bool)
    for x, y, w, h in boxes:
        x0 = max(0, math.floor(x))
        y0 = max(0, math.floor(y))
        x1 = min(width, math.ceil(x + w))
        y1 = min(height, math.ceil(y + h))
        if x1 > x0 and y1 > y0:
            mask[y0:y1, x0:x1] = True
    return mask


def plan_removal(
    objects: Sequence[tuple[str, BoxXYWH]],
    width: int,
    height: int,
    target_class: str,
    tau1: float = TAU1,
    tau2: float = TAU2,
    tau3: float = TAU3,
) -> Removal | None:
    """The removal that starts from `target_class`, or None when the rules reject it."""
    return plan_joint_removal(objects, width, height, (target_class,), tau1, tau2, tau3)


def plan_joint_removal(
    objects: Sequence[tuple[str, BoxXYWH]],
    width: int,
    height: int,
    targets: Sequence[str],
    tau1: float = TAU1,
    tau2: float = TAU2,
    tau3: float = TAU3,
) -> Removal | None:
    """The removal that starts from several classes at once (B_r the union of their boxes; the
    same tau rules), or None when the rules reject it. One target is `plan_removal`. Used to
    remove a class together with another (the mini experiment's co-occurrence-keeping D')."""
    by_class: dict[str, list[BoxXYWH]] = {}
    for cls, box in objects:
        by_class.setdefault(cls, []).append(box)
    if not targets or any(t not in by_class for t in targets) or len(by_class) < 2:
        return None
    masks = {c: box_mask(b, width, height) for c, b in by_class.items()}
    areas = {c: int(m.sum()) for c, m in masks.items()}
    target = np.logical_or.reduce([masks[t] for t in targets])
    removed = set(targets)
    for c, m in masks.items():
        if c not in removed and areas[c] > 0 and (target & m).sum() / areas[c] > tau2:
            removed.add(c)
    erased = np.logical_or.reduce([masks[c] for c in removed])
    fraction = float(erased.sum()) / float(width * height)
    if not fraction < tau3:
        return None
    kept = sorted(set(by_class) - removed)
    if not kept:
        return None
    for c in kept:
        if areas[c] == 0 or (erased & masks[c]).sum() / areas[c] >= tau1:
            return None
    return Removal(
        target_class=targets[0],
        removed_classes=tuple(sorted(removed)),
        present_classes=tuple(kept),
        removed_boxes=tuple(b for c in sorted(removed) for b in by_class[c]),
        removed_area_fraction=fraction,
    )


def candidate_removals(
    objects: Sequence[tuple[str, BoxXYWH]],
    width: int,
    height: int,
    tau1: float = TAU1,
    tau2: float = TAU2,
    tau3: float = TAU3,
) -> list[Removal]:
    """Every accepted removal of an image, one per target class, duplicates (same removed set) merged."""
    seen: set[tuple[str, ...]] = set()
    out: list[Removal] = []
    for cls in sorted({c for c, _ in objects}):
        r = plan_removal(objects, width, height, cls, tau1, tau2, tau3)
        if r is not None and r.removed_classes not in seen:
            seen.add(r.removed_classes)
            out.append(r)
    return out
