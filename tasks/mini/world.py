"""The vocabulary of the mini world: object classes, caption words, shortcut pairs, entity types.

Other packages depend on these names (the decorrelated task matches caption noun phrases against
`CLASS_WORDS`; grounding reports recall per `ENTITY_TYPES` value), so changing them changes the
benchmark and bumps the mini benchmarks' versions.

Word rules, checked by the tests: no word is used by two classes, and no word of one class is a
substring of a word of another class (so substring or token matching cannot confuse classes).
Every class word is a single token. Colour, count, position and background words never contain a
class word either (also checked by the tests).
"""

from __future__ import annotations

# Ten visually distinct shapes drawn with Pillow primitives (no fonts).
CLASSES: tuple[str, ...] = (
    "star",
    "ring",
    "heart",
    "arrow",
    "triangle",
    "disc",
    "square",
    "cross",
    "moon",
    "diamond",
)

# Every word a caption may use to name a class: singular, plural and synonyms (lower case).
CLASS_WORDS: dict[str, tuple[str, ...]] = {
    "star": ("star", "stars"),
    "ring": ("ring", "rings", "hoop", "hoops"),
    "heart": ("heart", "hearts"),
    "arrow": ("arrow", "arrows"),
    "triangle": ("triangle", "triangles", "wedge", "wedges"),
    "disc": ("disc", "discs", "dot", "dots", "ball", "balls"),
    "square": ("square", "squares", "block", "blocks"),
    "cross": ("cross", "crosses", "plus", "pluses"),
    "moon": ("moon", "moons", "crescent", "crescents"),
    "diamond": ("diamond", "diamonds", "rhombus", "rhombuses"),
}

# Shortcut pairs: in the train split, an image with two or more objects that contains one class of
# a pair contains its partner too with probability `MiniConfig.partner_prob` (default 0.9).
PARTNER_PAIRS: tuple[tuple[str, str], ...] = (
    ("star", "ring"),
    ("heart", "arrow"),
    ("triangle", "disc"),
)

# Flickr30k-Entities-style entity type of each class, by shape group.
ENTITY_TYPES: dict[str, str] = {
    "triangle": "polygons",
    "square": "polygons",
    "diamond": "polygons",
    "star": "polygons",
    "disc": "curves",
    "ring": "curves",
    "moon": "curves",
    "heart": "curves",
    "cross": "symbols",
    "arrow": "symbols",
}

# Background phrases ("a blue background") are entities of this type with no box, as Flickr30k
# Entities marks scene chains (`<scene>1</scene>` in the XML).
SCENE_TYPE = "scene"


def partner_of(cls: str) -> str | None:
    """The shortcut partner of `cls`, or None for an unpaired class."""
    for a, b in PARTNER_PAIRS:
        if cls == a:
            return b
        if cls == b:
            return a
    return None


def class_of_word(word: str) -> str | None:
    """The class a caption word or phrase names (case-insensitive), or None."""
    return _WORD_TO_CLASS.get(word.lower())


_WORD_TO_CLASS: dict[str, str] = {w: c for c, ws in CLASS_WORDS.items() for w in ws}
