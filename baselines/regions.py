"""Candidate boxes for region ranking: a multi-scale sliding window, user proposals, NMS, crops.

Boxes are float64 `[x1, y1, x2, y2]` in pixels of the original image (the grounding submission's
coordinates), x1 < x2 and y1 < y2, inside `[0, width] x [0, height]`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.errors import UsageError


def window_starts(extent: float, size: float, stride: float) -> np.ndarray:
    """Window origins along one axis: every `stride` from 0, plus one flush with the far edge."""
    if size >= extent:
        return np.zeros(1)
    n = int(math.floor((extent - size) / stride + 1e-9)) + 1
    starts = np.arange(n) * stride
    if extent - size - starts[-1] > 1e-6:
        starts = np.append(starts, extent - size)
    return starts


def sliding_windows(width: float, height: float, scales: Sequence[float], stride: float) -> np.ndarray:
    """Windows of every (scale_w * width) x (scale_h * height) for scale_w, scale_h in `scales`
    (so wide and tall shapes too), moved by `stride` times the window's own size; (N, 4), unique."""
    if not scales or any(not 0 < s <= 1 for s in scales):
        raise UsageError(f"window scales must be fractions of the image side in (0, 1], got {list(scales)}")
    if not 0 < stride <= 1:
        raise UsageError(f"window stride must be a fraction of the window size in (0, 1], got {stride}")
    boxes = []
    for sw in scales:
        w = sw * width
        xs = window_starts(width, w, stride * w)
        for sh in scales:
            h = sh * height
            ys = window_starts(height, h, stride * h)
            gx, gy = np.meshgrid(xs, ys, indexing="ij")
            x1, y1 = gx.ravel(), gy.ravel()
            boxes.append(np.stack([x1, y1, x1 + w, y1 + h], axis=1))
    out = np.concatenate(boxes)
    return np.unique(np.round(out, 6), axis=0)


def _box_problem(box: Any, width: float, height: float) -> str | None:
    if not isinstance(box, list) or len(box) != 4 or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in box
    ):
        return "malformed"
    x1, y1, x2, y2 = box
    if not (x1 < x2 and y1 < y2):
        return "malformed"
    if x1 < 0 or y1 < 0 or x2 > width or y2 > height:
        return "outside"
    return None


def load_proposals(path: str | Path, sizes: Mapping[str, tuple[float, float]]) -> dict[str, np.ndarray]:
    """A proposals file: `{"<image id>": [[x1, y1, x2, y2], ...], ...}` in original-image pixels
    (e.g. a detector's boxes). Every problem is counted and reported in one UsageError (exit 2:
    the file is an input of the tool, not a submission): unknown image ids, malformed boxes (not
    four finite numbers with x1 < x2 and y1 < y2) and boxes outside the image."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read proposals file {p}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"proposals file {p} is not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise UsageError(f"proposals file {p}: expected an object mapping image ids to lists of [x1, y1, x2, y2] boxes")
    unknown = [k for k in doc if k not in sizes]
    not_lists = [k for k, v in doc.items() if k in sizes and not isinstance(v, list)]
    bad: dict[str, list[str]] = {"malformed": [], "outside": []}
    for image_id, boxes in doc.items():
        if image_id not in sizes or not isinstance(boxes, list):
            continue
        w, h = sizes[image_id]
        for i, box in enumerate(boxes):
            problem = _box_problem(box, w, h)
            if problem:
                bad[problem].append(f"{image_id}[{i}]")
    problems = []
    if unknown:
        problems.append(f"{len(unknown)} unknown image ids (e.g. {', '.join(map(repr, unknown[:3]))})")
    if not_lists:
        problems.append(f"{len(not_lists)} images whose value is not a list of boxes (e.g. {not_lists[0]!r})")
    if bad["malformed"]:
        problems.append(f"{len(bad['malformed'])} malformed boxes, not [x1, y1, x2, y2] numbers with x1 < x2 "
                        f"and y1 < y2 (e.g. {', '.join(bad['malformed'][:3])})")
    if bad["outside"]:
        problems.append(f"{len(bad['outside'])} boxes outside the image (e.g. {', '.join(bad['outside'][:3])})")
    if problems:
        raise UsageError(f"proposals file {p}: " + "; ".join(problems))
    return {k: np.asarray(v, dtype=np.float64).reshape(-1, 4) for k, v in doc.items()}


def nms_topk(boxes: np.ndarray, scores: np.ndarray, iou: float, k: int) -> np.ndarray:
    """Indices of the `k` best boxes that survive greedy NMS at `iou`, best first.

    torchvision's nms, whose IoU is the continuous (x2 - x1) * (y2 - y1) one the grounding metric
    uses; equal scores keep the lower index first (a stable sort beforehand) so results repeat.
    """
    import torch
    from torchvision.ops import nms

    if len(boxes) == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(-scores, kind="stable")
    kept = nms(torch.from_numpy(boxes[order]).double(), torch.from_numpy(scores[order]).double(), iou).numpy()
    return order[kept[:k]]


def render_region(image: Any, box: Sequence[float], masked: bool, fill: tuple[int, int, int]) -> Any:
    """The region as a PIL image: the crop, or (`masked`) the whole image with everything outside
    the box painted `fill` so that the encoder sees the region in its place and at its scale."""
    from PIL import Image

    x1, y1, x2, y2 = (float(v) for v in box)
    if not masked:
        return image.crop((x1, y1, x2, y2))
    out = Image.new("RGB", image.size, fill)
    left, top = int(math.floor(x1)), int(math.floor(y1))
    right, bottom = int(math.ceil(x2)), int(math.ceil(y2))
    out.paste(image.crop((left, top, right, bottom)), (left, top))
    return out
