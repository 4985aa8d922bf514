"""Which classes a caption mentions: a word-level phrase matcher over a class-word table.

The paper matches noun phrases of a caption against a class-word table (its Table 4). We do not
run a statistical chunker: spaCy's English models are not on PyPI (they are GitHub release assets,
so not installable from the package registries this project may use), a chunker is version-
dependent, and 616k captions would take minutes. Instead every caption is lower-cased and split into
alphabetic tokens, and table phrases (one to three tokens) are matched leftmost-longest without
overlap. A class word is a noun in almost every COCO caption, so the noun-phrase restriction
changes little; the remaining differences (a verb "duck", "sign") are listed in the metric card.

A noun phrase never spans punctuation: a multi-word phrase matches only where its words are
separated by whitespace (a line break included: COCO captions wrap lines inside a phrase, "rolls
of\nToilet tissue") or by a hyphen inside a word ("hot-dog", "teddy-bear"). Any other character
between two words ends a phrase: a sentence end or comma ("The grill is hot. Dog sleeps" has no
hot dog, "red wine, glass of water" no wine glass), ; : ! ? quotes, brackets, slashes, &, a dash
(a spaced hyphen, "--", an en or em dash), an ellipsis, an apostrophe or a digit. (Before
coco-5k-decorrelated 1.1 phrases were matched across punctuation.)

Longest match settles compound ambiguities: "hot dog" is one match (class hot dog), so its "dog"
does not also count as the dog class; "teddy bear" is not the bear class. Whole-token matching
settles substring ones: "skateboard" is one token and never contains the token "board". A phrase
listed under several classes (Table 4 lists "board" under skateboard, surfboard and snowboard)
mentions every one of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

_TOKEN = re.compile(r"[a-z]+")
# What may stand between two words of one phrase: whitespace, or one hyphen (or the Unicode
# hyphens U+2010 and U+2011) with no space, as in "hot-dog". Anything else ends a phrase.
_JOINS = re.compile(r"\s+|[-\u2010\u2011]")

# Irregular plurals of the words in the COCO table (everything else: regular English rules).
_IRREGULAR = {
    "person": "people",
    "man": "men",
    "woman": "women",
    "child": "children",
    "policeman": "policemen",
    "knife": "knives",
    "calf": "calves",
    "mouse": "mice",
    "sheep": "sheep",
    "people": "people",
    "police": "police",
    "cattle": "cattle",
    "silverware": "silverware",
    "luggage": "luggage",
    "broccoli": "broccoli",
    "tv": "tvs",
    "ox": "oxen",
    "goose": "geese",
    "cycling": "cycling",
    "biking": "biking",
    "skating": "skating",
    "traffic": "traffic",
    "frosting": "frosting",
    "dough": "dough",
    "wine": "wine",
    "coffee": "coffee",
    "tea": "tea",
    "beer": "beers",
    "anyone": "anyone",
    "someone": "someone",
    "somebody": "somebody",
    "anybody": "anybody",
    "everyone": "everyone",
    "children": "children",
    "men": "men",
    "women": "women",
}


def plural(word: str) -> str:
    """English plural of the last word of `word` (a one- to three-word phrase)."""
    head, _, last = word.rpartition(" ")
    if last in _IRREGULAR:
        p = _IRREGULAR[last]
    elif last.endswith("s") and not last.endswith(("ss", "us")):
        p = last  # already a plural in the table ("boys", "skis")
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        p = last + "es"
    elif last.endswith("y") and last[-2:-1] not in ("a", "e", "i", "o", "u"):
        p = last[:-1] + "ies"
    else:
        p = last + "s"
    return f"{head} {p}" if head else p


def tokens(text: str) -> list[str]:
    """Lower-case alphabetic tokens: punctuation, digits and apostrophes split words."""
    return _TOKEN.findall(text.lower())


def phrase_runs(text: str) -> list[list[str]]:
    """The tokens of `text` in runs that a phrase may span: consecutive tokens separated only by
    whitespace or a word-internal hyphen (`_JOINS`); punctuation between two tokens starts a new run."""
    lower = text.lower()
    runs: list[list[str]] = []
    end = None
    for m in _TOKEN.finditer(lower):
        if end is None or not _JOINS.fullmatch(lower, end, m.start()):
            runs.append([])
        runs[-1].append(m.group())
        end = m.end()
    return runs


class MentionMatcher:
    """Leftmost-longest, non-overlapping matching of table phrases on caption tokens."""

    def __init__(self, classes: Sequence[str], words: Mapping[str, Iterable[str]]) -> None:
        self.classes = tuple(classes)
        index = {c: i for i, c in enumerate(self.classes)}
        self.phrases: dict[tuple[str, ...], frozenset[int]] = {}
        for cls, ws in words.items():
            for w in ws:
                key = tuple(tokens(w))
                if not key:
                    raise ValueError(f"class {cls!r}: word {w!r} has no alphabetic token")
                self.phrases[key] = self.phrases.get(key, frozenset()) | {index[cls]}
        self.max_len = max((len(k) for k in self.phrases), default=1)

    def spans(self, text: str) -> list[tuple[str, frozenset[int]]]:
        """The matched phrases of `text`, in order, each with the class indices it mentions; a
        phrase never spans punctuation (`phrase_runs`)."""
        out: list[tuple[str, frozenset[int]]] = []
        for toks in phrase_runs(text):
            i = 0
            while i < len(toks):
                for n in range(min(self.max_len, len(toks) - i), 0, -1):
                    hit = self.phrases.get(tuple(toks[i : i + n]))
                    if hit is not None:
                        out.append((" ".join(toks[i : i + n]), hit))
                        i += n
                        break
                else:
                    i += 1
        return out

    def mentions(self, text: str) -> list[int]:
        """Sorted class indices mentioned by `text`."""
        found: set[int] = set()
        for _, classes in self.spans(text):
            found |= classes
        return sorted(found)


# --- COCO ------------------------------------------------------------------------------------

COCO_CLASSES: tuple[str, ...] = (
    "person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat",
    "traffic light", "fire hydrant", "stop sign", "parking meter", "bench", "bird", "cat", "dog",
    "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe", "backpack", "umbrella",
    "handbag", "tie", "suitcase", "frisbee", "skis", "snowboard", "sports ball", "kite",
    "baseball bat", "baseball glove", "skateboard", "surfboard", "tennis racket", "bottle",
    "wine glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple", "sandwich", "orange",
    "broccoli", "carrot", "hot dog", "pizza", "donut", "cake", "chair", "couch", "potted plant",
    "bed", "dining table", "toilet", "tv", "laptop", "mouse", "remote", "keyboard", "cell phone",
    "microwave", "oven", "toaster", "sink", "refrigerator", "book", "clock", "vase", "scissors",
    "teddy bear", "hair drier", "toothbrush",
)  # fmt: skip

# Paper Table 4 (appendix A), English words from ../shared/reference/odmap_paper.md. Class names
# are added below; "truck" (listed under car) and "bear" (under teddy bear) are dropped there
# because each is another COCO class's own name: a caption about a truck or a brown bear mentions
# that class, not car or teddy bear.
PAPER_TABLE4: dict[str, tuple[str, ...]] = {
    "person": (
        "man", "woman", "player", "child", "girl", "boy", "boys", "people", "lady", "guy", "kid",
        "kids", "children", "surfer", "cowboy", "cowboys", "adult", "adults", "policeman",
        "soldier", "police", "catcher", "pitcher", "jockey", "baby", "men", "women", "cyclist",
        "spectators", "rider", "batter", "guys", "anyone", "someone", "reporter", "somebody",
        "anybody", "everyone", "worker", "workers",
    ),
    "airplane": ("plane", "jet", "aircraft"),
    "bicycle": ("bike", "cycling", "biking"),
    "motorcycle": ("motor", "motorbike"),
    "bus": ("trolley",),
    "car": ("van", "taxi", "trunk", "truck", "suv"),
    "train": ("tram", "subway"),
    "traffic light": ("traffic",),
    "stop sign": ("sign",),
    "parking meter": ("meter",),
    "fire hydrant": ("hydrant", "hydrate"),
    "bird": ("beak", "duck", "goose", "seagull", "pigeon", "chicken", "penguin"),
    "cat": ("kitten", "kitty"),
    "dog": ("puppy", "pup"),
    "sheep": ("lamb",),
    "horse": ("pony", "foal"),
    "cow": ("cattle", "ox", "bull", "herd", "calf", "bulls", "calves"),
    "handbag": ("bag",),
    "suitcase": ("bag", "luggage", "case"),
    "frisbee": ("disc", "disk", "frisbees"),
    "sports ball": ("ball",),
    "baseball bat": ("bat",),
    "baseball glove": ("glove",),
    "skateboard": ("board", "skating"),
    "surfboard": ("board",),
    "snowboard": ("board",),
    "skis": ("ski",),
    "tennis racket": ("racket", "racquet"),
    "wine glass": ("glass", "wine", "drink"),
    "bottle": ("thermos", "flask", "beer", "drink"),
    "cup": ("glass", "mug", "drink", "coffee", "tea"),
    "spoon": ("silverware",),
    "donut": ("doughnut", "dough"),
    "cake": ("dessert", "frosting"),
    "dining table": ("table", "desk", "tables"),
    "chair": ("stool",),
    "potted plant": ("plant", "flower"),
    "vase": ("pot",),
    "tv": ("television", "screen"),
    "laptop": ("computer", "monitor", "screen"),
    "cell phone": ("phone",),
    "refrigerator": ("fridge",),
    "book": ("novel",),
    "scissors": ("scissor",),
    "toothbrush": ("brush",),
    "hair drier": ("dryer",),
    "teddy bear": ("teddy", "toy", "bear", "doll"),
}  # fmt: skip

# Spelling variants of class names that COCO captions use (one-word compounds, British forms).
COCO_VARIANTS: dict[str, tuple[str, ...]] = {
    "airplane": ("aeroplane",),
    "motorcycle": ("motor bike",),
    "cell phone": ("cellphone",),
    "hair drier": ("hair dryer", "hairdryer"),
    "hot dog": ("hotdog",),
    "teddy bear": ("teddybear",),
    "potted plant": ("houseplant",),
}


def coco_class_words() -> dict[str, tuple[str, ...]]:
    """The completed COCO table: class names, Table 4 words, variants, and all their plurals.

    A word that is (the plural of) another class's own name is kept only for that class.
    """
    names = {w: c for c in COCO_CLASSES for w in (c, plural(c))}
    table: dict[str, tuple[str, ...]] = {}
    for cls in COCO_CLASSES:
        base = [cls, *PAPER_TABLE4.get(cls, ()), *COCO_VARIANTS.get(cls, ())]
        words: list[str] = []
        for w in base:
            for form in (w, plural(w)):
                if names.get(form, cls) != cls or form in words:
                    continue
                words.append(form)
        table[cls] = tuple(words)
    return table


def coco_matcher() -> MentionMatcher:
    return MentionMatcher(COCO_CLASSES, coco_class_words())


# The matcher's name in a prepared COCO manifest (`params.matcher`). "coco-table4" (coco-5k-decorrelated
# 1.0) matched phrases across punctuation; a manifest that names it is prepared again.
COCO_MATCHER = "coco-table4, phrases end at punctuation"


# --- Flickr30k Entities ------------------------------------------------------------------------

# The four boxed, removable entity types the paper's "4 classes on Flickr30k" most naturally are.
FLICKR_CLASSES: tuple[str, ...] = ("people", "animals", "vehicles", "instruments")
