"""Scenes of the mini world: the records (layout settings, background, objects, scene) and the
colour tables. `sampling.py` draws scenes, `render.py` draws their pixels.

Colours are chosen so that no object pixel can equal a background pixel: every background channel
is >= 140, and every object colour has a channel <= 130.
"""

from __future__ import annotations

from dataclasses import dataclass

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
