"""Captions of a mini scene, with their noun phrases known (Flickr30k Entities style).

A caption is a list of segments: plain words, or a `Phrase` that names one entity chain (all the
objects of one class in the image, or the background). From the segments come the raw sentence
(Karpathy `raw`), its tokens, and the `[/EN#chain/type words]` markup of Flickr30k Entities.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Union

import numpy as np

from vlbench.tasks.mini.scene import Scene
from vlbench.tasks.mini.world import CLASS_WORDS, ENTITY_TYPES, SCENE_TYPE

COUNT_WORDS = {2: "two", 3: "three", 4: "four"}


@dataclass(frozen=True)
class Phrase:
    chain: int
    entity_type: str
    words: tuple[str, ...]
    cls: str | None  # None for the background phrase


Segment = Union[str, Phrase]  # a runtime alias: Union, not |, for Python 3.9


@dataclass(frozen=True)
class Caption:
    segments: tuple[Segment, ...]

    def words(self) -> list[str]:
        out: list[str] = []
        for s in self.segments:
            out.extend(s.words if isinstance(s, Phrase) else s.split())
        return out

    @property
    def raw(self) -> str:
        text = " ".join(self.words()).replace(" ,", ",")
        return text[0].upper() + text[1:] + "."

    @property
    def tokens(self) -> list[str]:
        """Karpathy-style tokens: lower case, punctuation dropped."""
        return [w.lower() for w in self.words() if w != ","]

    @property
    def phrases(self) -> list[Phrase]:
        return [s for s in self.segments if isinstance(s, Phrase)]

    def entities_line(self) -> str:
        """The Flickr30k Entities `Sentences/<id>.txt` line: tokens separated by spaces."""
        parts: list[str] = []
        first = True
        for s in self.segments:
            words = list(s.words) if isinstance(s, Phrase) else s.split()
            if first and words:
                words[0] = words[0][0].upper() + words[0][1:]
                first = False
            if isinstance(s, Phrase):
                parts.append(f"[/EN#{s.chain}/{s.entity_type} {' '.join(words)}]")
            elif words:
                parts.append(" ".join(words))
        return " ".join(parts) + " ."


@dataclass(frozen=True)
class Group:
    """All objects of one class in a scene: one entity chain."""

    cls: str
    chain: int
    count: int
    colour: str | None  # shared colour, or None when the objects differ
    cx: float
    cy: float


def groups_of(scene: Scene) -> list[Group]:
    out = []
    for chain, cls in enumerate(scene.present_classes(), start=1):
        idx = [i for i, o in enumerate(scene.objects) if o.cls == cls]
        colours = {scene.objects[i].colour for i in idx}
        centres = [(x + w / 2, y + h / 2) for x, y, w, h in (scene.boxes[i] for i in idx)]
        out.append(
            Group(
                cls=cls,
                chain=chain,
                count=len(idx),
                colour=next(iter(colours)) if len(colours) == 1 else None,
                cx=sum(c[0] for c in centres) / len(centres),
                cy=sum(c[1] for c in centres) / len(centres),
            )
        )
    return out


def scene_chain(scene: Scene) -> int:
    """Chain id of the background phrase: after the object chains."""
    return len(scene.present_classes()) + 1


def _pick(rng: np.random.Generator, options: list[str] | tuple[str, ...]) -> str:
    return options[int(rng.integers(len(options)))]


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _noun_phrase(rng: np.random.Generator, g: Group) -> Phrase:
    words = CLASS_WORDS[g.cls]
    # CLASS_WORDS lists (singular, plural) pairs.
    k = int(rng.integers(len(words) // 2))
    noun = words[2 * k] if g.count == 1 else words[2 * k + 1]
    body = [noun]
    if g.colour is not None and rng.random() < 0.75:
        body.insert(0, g.colour)
    det = _article(body[0]) if g.count == 1 else COUNT_WORDS[g.count]
    return Phrase(g.chain, ENTITY_TYPES[g.cls], (det, *body), g.cls)


def _background_phrase(rng: np.random.Generator, scene: Scene) -> Phrase:
    bg = scene.background
    colour = bg.colour.split()
    if bg.kind == "solid":
        body = [*colour, "background"]
    elif bg.kind == "gradient":
        body = (
            ["gradient", "background"]
            if rng.random() < 0.5
            else [*colour, "and", *bg.colour2.split(), "gradient"]
        )
    else:
        body = [_pick(rng, ("speckled", "noisy", "grainy")), *colour, "background"]
    return Phrase(scene_chain(scene), SCENE_TYPE, (_article(body[0]), *body), None)


def _relation(a: Group, b: Group) -> str:
    """Where a is relative to b, by the dominant axis of their centres (y grows downwards)."""
    dx, dy = a.cx - b.cx, a.cy - b.cy
    if abs(dy) >= abs(dx):
        return "above" if dy < 0 else "below"
    return "to the left of" if dx < 0 else "to the right of"


def _region(g: Group, width: int, height: int) -> str:
    h = ("left", "center", "right")[min(2, int(3 * g.cx / width))]
    v = ("top", "middle", "bottom")[min(2, int(3 * g.cy / height))]
    if v == "middle" and h == "center":
        return "in the middle of the picture"
    if v == "middle":
        return f"on the {h} side of the picture"
    if h == "center":
        return f"at the {v} of the picture"
    return f"in the {v} {h} corner of the picture"


def _listing(rng: np.random.Generator, groups: list[Group]) -> list[Segment]:
    order = [groups[int(i)] for i in rng.permutation(len(groups))]
    nps: list[Segment] = [_noun_phrase(rng, g) for g in order]
    if len(nps) == 1:
        return nps
    out: list[Segment] = []
    for i, np_ in enumerate(nps):
        if i == len(nps) - 1:
            out.append("and")
        elif i > 0:
            out.append(",")
        out.append(np_)
    return out


Template = Callable[[np.random.Generator, Scene, list[Group]], list[Segment]]


def _t_on_background(rng, scene, groups):
    return [*_listing(rng, groups), _pick(rng, ("on", "against")), _background_phrase(rng, scene)]


def _t_picture_of(rng, scene, groups):
    return [
        _pick(rng, ("a picture of", "a drawing of", "a simple drawing of")),
        *_listing(rng, groups),
    ]


def _t_there_are(rng, scene, groups):
    items = _listing(rng, groups)
    first = next(s for s in items if isinstance(s, Phrase))
    verb = "there is" if first.words[0] in ("a", "an") else "there are"
    return [verb, *items, _pick(rng, ("in this image", "here", "in the picture"))]


def _t_showing(rng, scene, groups):
    return [
        _pick(rng, ("an image showing", "an image with", "a scene with")),
        *_listing(rng, groups),
    ]


def _t_drawn_on(rng, scene, groups):
    return [*_listing(rng, groups), "drawn on", _background_phrase(rng, scene)]


def _two(rng, groups) -> tuple[Group, Group, list[Group]]:
    order = [groups[int(i)] for i in rng.permutation(len(groups))]
    return order[0], order[1], order[2:]


def _t_relation(rng, scene, groups):
    a, b, rest = _two(rng, groups)
    out: list[Segment] = [_noun_phrase(rng, a), _relation(a, b), _noun_phrase(rng, b)]
    for g in rest:
        out += [", and", _noun_phrase(rng, g)]
    return out


def _t_next_to(rng, scene, groups):
    a, b, rest = _two(rng, groups)
    out: list[Segment] = [
        _noun_phrase(rng, a),
        _pick(rng, ("next to", "near", "beside")),
        _noun_phrase(rng, b),
    ]
    for g in rest:
        out += ["and", _noun_phrase(rng, g)]
    return out


def _t_region(rng, scene, groups):
    return [_noun_phrase(rng, groups[0]), _region(groups[0], scene.width, scene.height)]


def _t_only(rng, scene, groups):
    return ["only", _noun_phrase(rng, groups[0]), "on", _background_phrase(rng, scene)]


def _t_only_here(rng, scene, groups):
    return ["only", _noun_phrase(rng, groups[0]), _pick(rng, ("here", "in this image", "in the picture"))]


def _templates(scene: Scene, groups: list[Group], shapes_only: bool = False) -> list[Template]:
    if shapes_only:  # v3: classes, counts and relations; no background (and no colour: make_captions)
        out: list[Template] = [_t_picture_of, _t_there_are, _t_showing]
        if len(groups) >= 2:
            return [*out, _t_relation, _t_relation, _t_next_to]
        return [*out, _t_only_here, *([_t_region] if groups[0].count == 1 else [])]
    out = [_t_on_background, _t_picture_of, _t_there_are, _t_showing, _t_drawn_on]
    if len(groups) >= 2:
        out += [_t_relation, _t_relation, _t_next_to]
    else:
        out.append(_t_only)
        if groups[0].count == 1:
            out.append(_t_region)
    return out


def make_captions(rng: np.random.Generator, scene: Scene, n: int = 5, shapes_only: bool = False) -> list[Caption]:
    """`n` distinct captions; templates are used in turn in a random order, repeating (with other
    words) only when the scene has fewer templates than captions. `shapes_only` (the v3 world):
    no colour words and no background phrases, so a caption is told apart by shapes, counts and
    positions only."""
    groups = groups_of(scene)
    if shapes_only:
        groups = [replace(g, colour=None) for g in groups]
    templates = _templates(scene, groups, shapes_only)
    order = [int(i) for i in rng.permutation(len(templates))]
    caps: list[Caption] = []
    seen: set[str] = set()
    attempt = 0
    while len(caps) < n:
        segs = templates[order[attempt % len(order)]](rng, scene, groups)
        attempt += 1
        cap = Caption(tuple(s for s in segs if not (isinstance(s, str) and not s.strip())))
        # Rare exact repeats are drawn again; after many tries a repeat is accepted.
        if cap.raw in seen and attempt < 20 * n:
            continue
        seen.add(cap.raw)
        caps.append(cap)
    return caps
