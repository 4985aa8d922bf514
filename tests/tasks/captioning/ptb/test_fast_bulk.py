"""The bulk (numpy, whole-text) tokenizer path against the per-caption fast path, which
`test_fast.py` checks against the jar: every caption the bulk path takes must come
out exactly as `fast_tokenize` gives it. Strings are built from the pieces each bulk rule looks
at (clitics, trailing and stand-alone punctuation, abbreviations, single letters, split words,
case, tabs, digits, non-ASCII, line separators), so every rule meets its boundary cases."""

from __future__ import annotations

import random

import pytest
from gen import adversarial_caption, realistic_caption

from vlbench.backports import strict_zip
from vlbench.tasks.captioning.ptb.fast import bulk_tokenize, fast_tokenize, fast_tokenize_many

PIECES = [
    "a", "b", "n", "s", "t", "x", "dog", "man", "N", "S", "T", "A", "'", "'s", "n't", "N'T", "'S",
    ".", ",", ";", ":", "!", "?", "-", "--", "...", " ", " ", " ", "  ", "\t", "cannot", "gonna",
    "wanna", "Gimme", "mr", "St", "inc", "etc", "bancorp", "1", "\u00e9", "\r", "\u2028", "'re", "\x0c",
]


def _pieces_caption(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 8)))


@pytest.mark.parametrize("seed", [0, 1])
def test_bulk_path_equals_fast_path(seed):
    rng = random.Random(seed)
    caps = [_pieces_caption(rng) for _ in range(20_000)]
    caps += [realistic_caption(rng) for _ in range(2_000)] + [adversarial_caption(rng) for _ in range(2_000)]
    caps += ["", " ", "a's.", "xn't", "mann't", "don't's", "dog's,,", "-- - ...", "....", "wannabe", "A.", "b c."]
    bulk = bulk_tokenize(caps)
    taken = 0
    for c, b in strict_zip(caps, bulk):
        if b is not None:
            taken += 1
            assert b == fast_tokenize(c), repr(c)
    assert taken > 6_000  # the bulk path is exercised, not bypassed
    assert fast_tokenize_many(caps) == [fast_tokenize(c) for c in caps]


def test_bulk_path_takes_plain_captions_and_leaves_the_rest():
    caps = ["A dog's bone, on a table.", "He isn't here!", "two dogs . . .", "Mr. Smith", "a b.", "I cannot",
            "20 dogs", "well-known", "caf\u00e9", "tab\there", "they're", ""]
    assert bulk_tokenize(caps) == [
        "a dog 's bone on a table", "he is n't here", "two dogs", None, None, None,
        None, None, None, None, None, "",
    ]
