"""Drawing mini-world scenes: which classes (with the world's partner or cue -> dependent rule),
where the objects go, the background; each object's box is the tight box of its visible pixels."""

from __future__ import annotations

import numpy as np

from vlbench.tasks.mini.render import label_map, tight_box
from vlbench.tasks.mini.scene import (
    BACKGROUND_COLOURS,
    BACKGROUND_KINDS,
    GRADIENT_DIRECTIONS,
    OBJECT_COLOURS,
    Background,
    DependentRule,
    LayoutConfig,
    Obj,
    Scene,
    SplitSpec,
)
from vlbench.tasks.mini.world import CLASSES, partner_of


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
