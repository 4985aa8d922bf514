"""Rendering a mini-world scene exactly, with or without some of its objects.

Shapes are rasterised with numpy on pixel centres (no anti-aliasing, no fonts, no dependence on
Pillow's polygon filler), so an object's pixels are known exactly: its box is the tight box of its
visible pixels, and an image rendered without some objects is exactly the scene they were never
drawn in (the "perfect fill" of the decorrelated task).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from vlbench.backports import strict_zip
from vlbench.tasks.mini.scene import (
    BACKGROUND_COLOURS,
    NOISE_AMPLITUDE,
    OBJECT_COLOURS,
    Background,
    Obj,
    Scene,
)

# ---------------------------------------------------------------- shapes (unit square [-1, 1]^2)


def _regular(n: int, r: float, phase: float) -> list[tuple[float, float]]:
    # Rounded so that platform differences in the last bit of sin/cos cannot move a pixel.
    return [
        (
            round(r * math.cos(phase + 2 * math.pi * k / n), 9),
            round(r * math.sin(phase + 2 * math.pi * k / n), 9),
        )
        for k in range(n)
    ]


def _star_vertices() -> list[tuple[float, float]]:
    outer = _regular(5, 1.0, -math.pi / 2)
    inner = _regular(5, 0.42, -math.pi / 2 + math.pi / 5)
    return [p for pair in strict_zip(outer, inner) for p in pair]


_POLYGONS: dict[str, list[tuple[float, float]]] = {
    "star": _star_vertices(),
    "square": [(-0.85, -0.85), (0.85, -0.85), (0.85, 0.85), (-0.85, 0.85)],
    "diamond": [(0.0, -1.0), (0.68, 0.0), (0.0, 1.0), (-0.68, 0.0)],
    "triangle": [(0.0, -0.92), (0.98, 0.85), (-0.98, 0.85)],
    # Pointing right; other directions by rotating the sample coordinates.
    "arrow": [
        (-1.0, -0.22),
        (0.15, -0.22),
        (0.15, -0.65),
        (1.0, 0.0),
        (0.15, 0.65),
        (0.15, 0.22),
        (-1.0, 0.22),
    ],
    "cross": [
        (-0.28, -1.0),
        (0.28, -1.0),
        (0.28, -0.28),
        (1.0, -0.28),
        (1.0, 0.28),
        (0.28, 0.28),
        (0.28, 1.0),
        (-0.28, 1.0),
        (-0.28, 0.28),
        (-1.0, 0.28),
        (-1.0, -0.28),
        (-0.28, -0.28),
    ],
}


def _in_polygon(u: np.ndarray, v: np.ndarray, verts: Sequence[tuple[float, float]]) -> np.ndarray:
    """Even-odd rule on sample points (vectorised crossing number)."""
    inside = np.zeros(u.shape, dtype=bool)
    n = len(verts)
    for i in range(n):
        x0, y0 = verts[i]
        x1, y1 = verts[(i + 1) % n]
        if y0 == y1:
            continue
        crosses = (v >= min(y0, y1)) & (v < max(y0, y1))
        x_at = x0 + (v - y0) * (x1 - x0) / (y1 - y0)
        inside ^= crosses & (u < x_at)
    return inside


def unit_mask(cls: str, variant: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Whether each sample point (u, v) in the object's unit square is inside the shape."""
    if cls in ("arrow", "triangle", "moon"):
        # variant 0..3: rotate by 90 degrees `variant` times (exact: swaps and sign flips).
        # Triangles only point up or down, so that none looks like an arrow head.
        turns = (variant % 2) * 2 if cls == "triangle" else variant % 4
        for _ in range(turns):
            u, v = v, -u
    r2 = u * u + v * v
    if cls == "disc":
        return r2 <= 0.95
    if cls == "ring":
        return (r2 <= 1.0) & (r2 >= 0.33)
    if cls == "heart":
        lobes = ((u - 0.46) ** 2 + (v + 0.42) ** 2 <= 0.27) | (
            (u + 0.46) ** 2 + (v + 0.42) ** 2 <= 0.27
        )
        return lobes | _in_polygon(u, v, [(-0.98, -0.3), (0.98, -0.3), (0.0, 0.98)])
    if cls == "moon":
        return (r2 <= 1.0) & ((u - 0.5) ** 2 + (v + 0.15) ** 2 > 0.72)
    return _in_polygon(u, v, _POLYGONS[cls])


def object_mask(o: Obj, width: int, height: int) -> tuple[np.ndarray, tuple[int, int]]:
    """The object's pixel mask on its window, and the window's top-left (x0, y0)."""
    x0 = max(0, math.floor(o.cx - o.sx) - 1)
    y0 = max(0, math.floor(o.cy - o.sy) - 1)
    x1 = min(width, math.ceil(o.cx + o.sx) + 1)
    y1 = min(height, math.ceil(o.cy + o.sy) + 1)
    xs = (np.arange(x0, x1, dtype=np.float64) + 0.5 - o.cx) / o.sx
    ys = (np.arange(y0, y1, dtype=np.float64) + 0.5 - o.cy) / o.sy
    u, v = np.meshgrid(xs, ys, copy=False)
    return unit_mask(o.cls, o.variant, u, v), (x0, y0)


# ---------------------------------------------------------------- rendering


def render_background(bg: Background, width: int, height: int) -> np.ndarray:
    c0 = np.array(BACKGROUND_COLOURS[bg.colour], dtype=np.float64)
    if bg.kind == "gradient":
        c1 = np.array(BACKGROUND_COLOURS[bg.colour2], dtype=np.float64)
        xs = (np.arange(width) + 0.5) / width
        ys = (np.arange(height) + 0.5) / height
        if bg.direction == "horizontal":
            t = np.broadcast_to(xs[None, :], (height, width))
        elif bg.direction == "vertical":
            t = np.broadcast_to(ys[:, None], (height, width))
        else:
            t = (xs[None, :] + ys[:, None]) / 2
        img = c0 * (1 - t[..., None]) + c1 * t[..., None]
        return np.rint(img).astype(np.uint8)
    img = np.broadcast_to(c0, (height, width, 3)).astype(np.int16)
    if bg.kind == "noise":
        noise = np.random.default_rng(bg.noise_seed).integers(
            -NOISE_AMPLITUDE, NOISE_AMPLITUDE + 1, size=(height, width, 3)
        )
        img = img + noise
    return np.clip(img, 0, 255).astype(np.uint8)


def label_map(
    objects: Sequence[Obj], width: int, height: int, skip: Iterable[int] = ()
) -> tuple[np.ndarray, list[int]]:
    """Label map (H, W) int16: the index of the object whose pixel it is (later objects are drawn
    over earlier ones), or -1 for background; and each object's full pixel count (0 if skipped)."""
    skipped = set(skip)
    labels = np.full((height, width), -1, dtype=np.int16)
    full: list[int] = []
    for i, o in enumerate(objects):
        if i in skipped:
            full.append(0)
            continue
        m, (x0, y0) = object_mask(o, width, height)
        h, w = m.shape
        labels[y0 : y0 + h, x0 : x0 + w][m] = i
        full.append(int(m.sum()))
    return labels, full


def paint(background: Background, objects: Sequence[Obj], labels: np.ndarray) -> np.ndarray:
    """The RGB image (H, W, 3) uint8 of a label map."""
    height, width = labels.shape
    img = render_background(background, width, height)
    palette = np.array([OBJECT_COLOURS[o.colour] for o in objects] + [(0, 0, 0)], dtype=np.uint8)
    # Label -1 indexes the last palette row, which np.where never selects.
    return np.where((labels >= 0)[..., None], palette[labels], img)


def render(
    background: Background,
    objects: Sequence[Obj],
    width: int,
    height: int,
    skip: Iterable[int] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """RGB image (H, W, 3) uint8 and label map (H, W) int16 (see `label_map`). Objects whose index
    is in `skip` are not drawn at all: the exact image of the scene without them."""
    labels, _ = label_map(objects, width, height, skip)
    return paint(background, objects, labels), labels


def render_scene(scene: Scene, skip: Iterable[int] = ()) -> np.ndarray:
    return render(scene.background, scene.objects, scene.width, scene.height, skip)[0]


def tight_box(mask: np.ndarray) -> tuple[int, int, int, int] | None:
    """[x, y, w, h] of the pixels of `mask`: the box covers columns x .. x + w - 1."""
    cols = np.flatnonzero(mask.any(axis=0))
    rows = np.flatnonzero(mask.any(axis=1))
    if cols.size == 0:
        return None
    return int(cols[0]), int(rows[0]), int(cols[-1] - cols[0] + 1), int(rows[-1] - rows[0] + 1)
