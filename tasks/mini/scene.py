"""Scenes of the mini world: sampling a layout, and rendering it exactly (with or without objects).

Shapes are rasterised with numpy on pixel centres (no anti-aliasing, no fonts, no dependence on
Pillow's polygon filler), so an object's pixels are known exactly: its box is the tight box of its
visible pixels, and an image rendered without some objects is exactly the scene they were never
drawn in (the "perfect fill" of the decorrelated task).

Colours are chosen so that no object pixel can equal a background pixel: every background channel
is >= 140, and every object colour has a channel <= 130.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from vlbench.tasks.mini.world import CLASSES, partner_of

# Object colours: caption word -> RGB.
OBJECT_COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (215, 35, 35),
    "green": (40, 160, 60),
    "blue": (40, 80, 210),
    "yellow": (235, 200, 30),
    "orange": (240, 130, 30),
    "purple": (130, 50, 170),
    "black": (25, 25, 25),
    "brown": (125, 75, 35),
}
# Pale background colours: caption words -> RGB.
BACKGROUND_COLOURS: dict[str, tuple[int, int, int]] = {
    "grey": (200, 200, 200),
    "beige": (235, 220, 190),
    "pale blue": (190, 210, 240),
    "pale green": (200, 235, 200),
    "lavender": (220, 205, 240),
    "cream": (248, 242, 215),
}
BACKGROUND_KINDS = ("solid", "gradient", "noise")
NOISE_AMPLITUDE = 12
GRADIENT_DIRECTIONS = ("horizontal", "vertical", "diagonal")


@dataclass(frozen=True)
class DependentRule:
    """mini-decorrelated v3's shortcut (tasks/mini/README.md, pre-registration): a cue brings its
    dependent, and a dependent never appears without a cue. `twin`: the unbiased twin's rule, the
    same coin flips, but a coin adds the dependent of a uniformly drawn pair, not the cue's own."""

    pairs: tuple[tuple[str, str], ...]  # (cue, dependent)
    prob: float  # P(a dependent is added | a cue is drawn with room for it)
    twin: bool = False


@dataclass(frozen=True)
class SplitSpec:
    name: str
    first_id: int
    count: int
    # P(partner present | class present) in images with two or more objects.
    partner_prob: float | None
    # v3 worlds: the cue -> dependent rule replaces the symmetric partner mechanism.
    dependents: DependentRule | None = None


@dataclass(frozen=True)
class LayoutConfig:
    width: int = 128
    height: int = 128
    min_objects: int = 1
    max_objects: int = 4
    # At most this many distinct classes per image.
    max_classes: int = 3
    # Probability of adding one more distinct class after each one (when there is room).
    more_classes_prob: float = 0.5
    # Object extent as a fraction of the image side.
    min_size: float = 0.16
    max_size: float = 0.34
    # Probability that a multi-object image nests one small object on top of a large one
    # (the case the paper's tau2 rule is for).
    nested_prob: float = 0.15
    # Two objects' extents may overlap by at most this fraction of the smaller one.
    max_overlap: float = 0.25
    # Every object keeps at least this fraction of its pixels visible.
    min_visible: float = 0.5
    # Probability that all objects of one class share a colour.
    same_colour_prob: float = 0.7
    # Classes drawn smaller than the others (v3: the dependents, harder to see than their cues).
    small_classes: tuple[str, ...] = ()
    small_scale: float = 1.0


@dataclass(frozen=True)
class Background:
    kind: str
    colour: str
    colour2: str  # gradient end colour (== colour for the other kinds)
    direction: str  # gradient direction ("" for the other kinds)
    noise_seed: int  # seed of the noise field (0 for the other kinds)


@dataclass(frozen=True)
class Obj:
    cls: str
    colour: str
    cx: float
    cy: float
    sx: float  # half extent, x
    sy: float  # half extent, y
    variant: int  # orientation of arrows, triangles, moons


@dataclass(frozen=True)
class Scene:
    image_id: int
    split: str
    width: int
    height: int
    background: Background
    objects: tuple[Obj, ...]  # in drawing order
    boxes: tuple[
        tuple[int, int, int, int], ...
    ]  # tight [x, y, w, h] of each object's visible pixels
    areas: tuple[int, ...]  # visible pixel count of each object

    @property
    def file_name(self) -> str:
        return f"mini_{self.image_id:06d}.png"

    def present_classes(self) -> list[str]:
        """Distinct classes in order of first appearance in the drawing order."""
        seen: list[str] = []
        for o in self.objects:
            if o.cls not in seen:
                seen.append(o.cls)
        return seen


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
    return [p for pair in zip(outer, inner, strict=True) for p in pair]


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


# ---------------------------------------------------------------- sampling


def effective_partner_prob(p: float) -> float:
    """Coin-flip probability that makes P(partner present | class present) equal `p`.

    A paired class enters an image either by its own draw (then its partner follows with
    probability q) or as the partner of a draw (then the partner is certainly there), so by
    symmetry P(partner | class) = 2q / (1 + q); solving for q gives p / (2 - p).
    """
    return p / (2.0 - p)


def sample_classes(
    rng: np.random.Generator, n: int, partner_prob: float | None, cfg: LayoutConfig
) -> list[str]:
    """The distinct classes of an image with `n` objects, in order of drawing.

    `partner_prob` None: no partner mechanism, so a partner is drawn exactly like any other class
    and the pair carries no information (val and test)."""
    if n == 1:
        # Every class equally likely alone, in every split: "appears alone" is no shortcut.
        return [CLASSES[int(rng.integers(len(CLASSES)))]]
    q = effective_partner_prob(partner_prob) if partner_prob is not None else None
    k_max = min(n, cfg.max_classes)
    chosen: list[str] = []
    banned: set[str] = set()
    while True:
        room = k_max - len(chosen)
        allowed = [c for c in CLASSES if c not in chosen and c not in banned]
        if room == 1 and q is not None:
            # A paired class needs room for its partner's coin flip.
            allowed = [c for c in allowed if partner_of(c) is None]
        if not allowed:
            break
        c = allowed[int(rng.integers(len(allowed)))]
        chosen.append(c)
        p = partner_of(c) if q is not None else None
        if p is not None and p not in chosen and p not in banned:
            if rng.random() < q:
                chosen.append(p)
            else:
                banned.add(p)
        if len(chosen) >= k_max or rng.random() >= cfg.more_classes_prob:
            break
    return chosen


def sample_dependent_classes(
    rng: np.random.Generator, n: int, rule: DependentRule, cfg: LayoutConfig
) -> list[str]:
    """The distinct classes of an image with `n` objects under a cue -> dependent rule.

    Classes are drawn one at a time, uniformly among the cues and free classes (a dependent is
    never drawn for itself, so never alone and never without a cue); a drawn cue with room left
    brings a dependent with probability `rule.prob`: its own, or, in the twin, the dependent of a
    uniformly drawn pair (among those not yet in the image). The number of classes per image and
    each class's expected frequency are the same in both."""
    dependent_of = dict(rule.pairs)
    dependents = [d for _, d in rule.pairs]
    drawable = [c for c in CLASSES if c not in dependents]
    if n == 1:
        return [drawable[int(rng.integers(len(drawable)))]]
    k_max = min(n, cfg.max_classes)
    chosen: list[str] = []
    while True:
        room = k_max - len(chosen)
        allowed = [c for c in drawable if c not in chosen]
        if room == 1:
            # A cue needs room for its dependent's coin flip.
            allowed = [c for c in allowed if c not in dependent_of]
        if not allowed:
            break
        c = allowed[int(rng.integers(len(allowed)))]
        chosen.append(c)
        if c in dependent_of and rng.random() < rule.prob:
            if rule.twin:
                options = [d for d in dependents if d not in chosen]
                chosen.append(options[int(rng.integers(len(options)))])
            else:
                chosen.append(dependent_of[c])
        if len(chosen) >= k_max or rng.random() >= cfg.more_classes_prob:
            break
    return chosen


def _sample_background(rng: np.random.Generator) -> Background:
    names = list(BACKGROUND_COLOURS)
    kind = BACKGROUND_KINDS[int(rng.integers(len(BACKGROUND_KINDS)))]
    colour = names[int(rng.integers(len(names)))]
    if kind == "gradient":
        others = [c for c in names if c != colour]
        colour2 = others[int(rng.integers(len(others)))]
        direction = GRADIENT_DIRECTIONS[int(rng.integers(len(GRADIENT_DIRECTIONS)))]
        return Background(kind, colour, colour2, direction, 0)
    seed = int(rng.integers(1, 2**31)) if kind == "noise" else 0
    return Background(kind, colour, colour, "", seed)


def _extent_box(o: Obj) -> tuple[float, float, float, float]:
    return o.cx - o.sx, o.cy - o.sy, o.cx + o.sx, o.cy + o.sy


def _overlap_fraction(a: Obj, b: Obj) -> float:
    ax0, ay0, ax1, ay1 = _extent_box(a)
    bx0, by0, bx1, by1 = _extent_box(b)
    iw = min(ax1, bx1) - max(ax0, bx0)
    ih = min(ay1, by1) - max(ay0, by0)
    if iw <= 0 or ih <= 0:
        return 0.0
    smaller = min((ax1 - ax0) * (ay1 - ay0), (bx1 - bx0) * (by1 - by0))
    return iw * ih / smaller


def _place(
    rng: np.random.Generator,
    cls: str,
    colour: str,
    placed: list[Obj],
    cfg: LayoutConfig,
    nest_in: Obj | None,
) -> Obj | None:
    side = min(cfg.width, cfg.height)
    variant = int(rng.integers(4))
    for _ in range(200):
        scale = cfg.small_scale if cls in cfg.small_classes else 1.0
        if nest_in is not None:
            half = float(rng.uniform(0.06, 0.085)) * side * scale
            sx = half * float(rng.uniform(0.9, 1.1))
            sy = half * float(rng.uniform(0.9, 1.1))
            # Centre well inside the host, so the nested box lies inside the host's box.
            cx = float(rng.uniform(nest_in.cx - 0.35 * nest_in.sx, nest_in.cx + 0.35 * nest_in.sx))
            cy = float(rng.uniform(nest_in.cy - 0.35 * nest_in.sy, nest_in.cy + 0.35 * nest_in.sy))
            return Obj(cls, colour, cx, cy, sx, sy, variant)
        half = float(rng.uniform(cfg.min_size, cfg.max_size)) * side / 2 * scale
        sx = half * float(rng.uniform(0.88, 1.12))
        sy = half * float(rng.uniform(0.88, 1.12))
        cx = float(rng.uniform(sx + 1, cfg.width - sx - 1))
        cy = float(rng.uniform(sy + 1, cfg.height - sy - 1))
        o = Obj(cls, colour, cx, cy, sx, sy, variant)
        if all(_overlap_fraction(o, p) <= cfg.max_overlap for p in placed):
            return o
    return None


def sample_scene(
    rng: np.random.Generator, image_id: int, split: SplitSpec, cfg: LayoutConfig
) -> Scene:
    """One scene: the number of objects is drawn first, then the classes, then the layout."""
    n = int(rng.integers(cfg.min_objects, cfg.max_objects + 1))
    if split.dependents is not None:
        classes = sample_dependent_classes(rng, n, split.dependents, cfg)
    else:
        classes = sample_classes(rng, n, split.partner_prob, cfg)
    # One object per chosen class, the rest spread over the chosen classes.
    per_object = list(classes) + [
        classes[int(rng.integers(len(classes)))] for _ in range(n - len(classes))
    ]
    colour_names = list(OBJECT_COLOURS)
    class_colour = {c: colour_names[int(rng.integers(len(colour_names)))] for c in classes}
    same_colour = {c: bool(rng.random() < cfg.same_colour_prob) for c in classes}
    colours = [
        class_colour[c] if same_colour[c] else colour_names[int(rng.integers(len(colour_names)))]
        for c in per_object
    ]
    background = _sample_background(rng)
    order = [int(i) for i in rng.permutation(n)]
    nested = n >= 2 and bool(rng.random() < cfg.nested_prob)
    for _attempt in range(100):
        placed: list[Obj] = []
        for k, i in enumerate(order):
            host = None
            if nested and k == n - 1:
                big = [p for p in placed if min(p.sx, p.sy) >= 0.14 * min(cfg.width, cfg.height)]
                host = big[int(rng.integers(len(big)))] if big else None
            o = _place(rng, per_object[i], colours[i], placed, cfg, host)
            if o is None:
                break
            placed.append(o)
        if len(placed) < n:
            continue
        labels, full = label_map(placed, cfg.width, cfg.height)
        boxes: list[tuple[int, int, int, int]] = []
        areas: list[int] = []
        ok = True
        for i in range(len(placed)):
            visible = labels == i
            area = int(visible.sum())
            box = tight_box(visible)
            if box is None or area < cfg.min_visible * full[i]:
                ok = False
                break
            boxes.append(box)
            areas.append(area)
        if ok:
            return Scene(
                image_id,
                split.name,
                cfg.width,
                cfg.height,
                background,
                tuple(placed),
                tuple(boxes),
                tuple(areas),
            )
    raise ValueError(
        f"image {image_id}: no layout of {n} objects fits a {cfg.width}x{cfg.height} image "
        "under the overlap and visibility limits; use fewer or smaller objects"
    )
