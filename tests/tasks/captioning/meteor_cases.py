"""Generated METEOR segments that meet every matcher and the beam's ties and pruning, shared by
the tests of the Python METEOR (against the jar) and of the C aligner (against the Python one)."""

from __future__ import annotations

import random

# Words chosen to meet each matcher: synonyms across stems (car/cars/automobile), irregular forms
# from WordNet's exception list (men/man, children/child, mice/mouse), suffix rules (boxes,
# dishes, ladies), paraphrase-table phrases that overlap exact matches and each other, function
# words, numbers, hyphens, accents, and words whose Java hash codes collide ("Aa"/"BB": the jar
# aligns words by hash code, so they are an exact match to it).
HARD_WORDS = [
    "a", "an", "the", "of", "on", "in", "and", "with", "is", "are", "to", "at", "man", "men", "woman", "women",
    "person", "people", "child", "children", "kid", "kids", "dog", "dogs", "puppy", "car", "cars", "automobile",
    "auto", "vehicle", "mouse", "mice", "box", "boxes", "dish", "dishes", "lady", "ladies", "bike", "bicycle",
    "riding", "rides", "ride", "rode", "sitting", "sits", "seated", "standing", "stands", "big", "large", "huge",
    "small", "little", "tiny", "street", "road", "photo", "picture", "image", "playing", "plays", "game",
    "frisbee", "tennis", "racket", "racquet", "next", "to", "beside", "near", "front", "of", "top", "a lot of",
    "many", "two", "2", "three", "3", "10", "1,000", "x-ray", "black-and-white", "t-shirt", "café", "naïve",
    "über", "Москва", "東京", "aa", "bb", "Aa", "BB", "cabinet", "cabinets", "kitchen", "kitchens", "do", "does",
    "n't", "'s", "fully", "handful", "glass", "grass", "bus", "buses", "sky", "skies", "is sitting", "sat",
]


def hard_caption(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(HARD_WORDS) for _ in range(n))


def hard_cases(rng: random.Random) -> tuple[list[str], list[list[str]]]:
    cands: list[str] = []
    refs: list[list[str]] = []
    for _ in range(400):  # short and medium: many matches of every module, ties between them
        cands.append(hard_caption(rng, rng.randint(1, 14)))
        refs.append([hard_caption(rng, rng.randint(1, 14)) for _ in range(rng.randint(1, 5))])
    for _ in range(60):  # repeated words: many equal-scoring alignments
        w = rng.sample(HARD_WORDS[:40], 3)
        cands.append(" ".join(rng.choice(w) for _ in range(rng.randint(4, 12))))
        refs.append([" ".join(rng.choice(w) for _ in range(rng.randint(4, 12))) for _ in range(3)])
    for _ in range(20):  # long: the beam (40) prunes
        cands.append(hard_caption(rng, rng.randint(40, 80)))
        refs.append([hard_caption(rng, rng.randint(40, 80)) for _ in range(2)])
    # empty and one-word hypotheses and references, identical segments
    cands += ["", "a", "man", "the", "dog", "", "a man on a bike", "a man on a bike"]
    refs += [["a man"], ["a"], ["men"], ["a man"], [""], [""], ["a man on a bike"], ["a man on a bike", "a bike"]]
    return cands, refs
