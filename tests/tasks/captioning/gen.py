"""Seeded generators of realistic and adversarial captions for the captioning tests."""

from __future__ import annotations

import random

WORDS = ["a", "an", "the", "man", "woman", "dog", "cat", "bird", "people", "group", "two", "three", "of", "on", "in", "at", "with", "and", "is", "are", "sitting", "standing", "next", "to", "table", "plate", "food", "pizza", "bus", "street", "train", "tracks", "red", "blue", "white", "black", "large", "small", "young", "old", "holding", "riding", "bike", "horse", "field", "grass", "water", "beach", "surfboard", "wave", "kitchen", "sink", "bathroom", "toilet", "giraffe", "elephant", "zebra", "tennis", "racket", "ball", "frisbee", "skateboard", "snow", "skis", "sky", "kite", "flying", "it", "he", "she", "they", "we", "you", "i", "that", "what", "who", "let", "there", "this"]
TRICKY = ["cannot", "gonna", "gotta", "lemme", "gimme", "wanna", "Mr", "Mrs", "Dr", "St", "Inc", "Co", "etc", "vs", "a", "b", "x", "I", "U.S", "e-mail", "black-and-white", "20-year-old", "well-known", "t-shirt", "x-ray", "o'clock", "y'all", "'tis", "rock", "'n'", "roll", "10", "3.5", "1,000", "100", "2", "#1", "$5", "50%", "&", "@", "/", "*", "+", "=", "<", ">", "~", "^", "|", "\\", "a1", "b2", "co-op", "re-enter", "A.M.", "p.m.", "ph.d"]
CLITICS = ["'s", "'re", "'ve", "'ll", "'d", "'m", "n't", "'", "s'", "'S", "N'T"]
PUNCT = [".", ",", ";", ":", "!", "?", "...", "--", "-", "?!", "!!", "'", '"', "''", "``", "`", "(", ")", "[", "]", "{", "}", ":)", ";)"]
UNICODE = ["café", "naïve", "über", "東京", "\u00a0", "\u2013", "\u2014", "\u201c", "\u201d", "\u2019", "😀", "ﬁ", "Ω", "\t"]


def _case(rng: random.Random, w: str) -> str:
    r = rng.random()
    if r < 0.15:
        return w.capitalize()
    if r < 0.2:
        return w.upper()
    return w


def realistic_caption(rng: random.Random) -> str:
    """COCO-like: capitalised first word, mostly plain words, sometimes a clitic or a final period."""
    n = rng.randint(5, 16)
    words = [rng.choice(WORDS) for _ in range(n)]
    if rng.random() < 0.1:
        i = rng.randrange(n)
        words[i] += rng.choice(["'s", "n't", "'re"])
    if rng.random() < 0.1:
        words[rng.randrange(n)] += ","
    text = " ".join(words)
    text = text[0].upper() + text[1:]
    if rng.random() < 0.5:
        text += "."
    return text


def adversarial_caption(rng: random.Random) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(0, 12)):
        r = rng.random()
        if r < 0.45:
            w = _case(rng, rng.choice(WORDS))
        elif r < 0.65:
            w = _case(rng, rng.choice(TRICKY))
        elif r < 0.75:
            w = _case(rng, rng.choice(WORDS)) + rng.choice(CLITICS)
        elif r < 0.9:
            w = rng.choice(PUNCT)
        else:
            w = rng.choice(UNICODE)
        if rng.random() < 0.25:
            w += rng.choice([".", ",", "!", "?", ";", ":", ".", "..."])
        parts.append(w)
    sep = rng.choice([" ", " ", " ", "  ", ""])
    return (sep if sep else " ").join(parts) if rng.random() < 0.9 else "".join(parts)
