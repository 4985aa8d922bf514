"""The Python tokenizer for captions outside the fast path (`ptb_chunks`) against the CoreNLP
3.4.1 jar: on every real caption of ../shared/realdata that the fast path leaves, in
pycocoevalcap's file order (so each caption is followed by the line the jar really sees), and on
generated hard cases. Chunks the module does not recognise are allowed (they go to the jar);
every answer it does give must equal the jar's."""

from __future__ import annotations

import random

import pytest
import realdata
from conftest import needs_java

from vlbench.tasks.captioning.ptb import (
    clean_line_breaks,
    fast_tokenize_many,
    jar_tokenize,
    pycoco_successors,
)
from vlbench.tasks.captioning.ptb_chunks import extended_tokenize

HARD_PIECES = [
    '"quoted"', '"the', 'end."', "(all", "cats)", "[x]", "{y}", "<unk>", "<UNK>.", "<b>", "dog!!", "dog?!",
    "field..", "wow...", "dog....", "dog.,", "dog,", "dog;", "a:b", "1:20", "5:55,", "1,000", "3.5", "1,000.50",
    "10.5%", "$5", "#1", "50%", "a&b", "&", "&amp", "a&ampm", "AT&T", "i=on", "a+b", "c++", "tub/shower", "up/",
    "1/2", "50/50", "4-way", "-bed", "a--b", "--", "---", "a_b", "3rd", "1950s", "2x4.", "mp3", "pole.a",
    "t.v.", "s.u.v", "d.c.", "U.S.", "st.", "St.", "Mr.", "inc.", "no.", "No.", "prop.", "sun.", "ark.", "Ark.",
    "n.", "L.", "I.", "x.", "The", "THE", "Now", "now", "Minow", "But", "Butter", "It", "5", "dog's", "don't",
    "can't", "Can't", "won't", "dogs'", "'one", "'red'", "'s", "o'clock", "gonna", "cannot", "wanna", "café",
    "naïve", "Über", "ÉCOLE", "Ñandú", "東京", "“quoted”", "‘single’", "dog’s", "don’t", "a–b", "—", "e-mail",
    "black-and-white", "20-year-old", "well-known.", "x-ray", "co-op", "A", "a", "dog", "man", "in", "of",
    "rotten,crap", "dressmaker;s", "it;s", "leave!!!", "Thanks.\"", "e.\"", "ave.", "blvd.", "ore.", "ky.",
    "12 345 678", "1 1/2", "$ 37 000", "9 11", "555-1234", "(555)", "road``", "up/", "Wrong?'.", '".', "''", "``",
    "blanket.cake.", "x.jpg.", "ph.d.", "St...", "I..", "70's", "o'", "6:40PM.", "?travel", ",man", "'", "-", "--.",
    "www.example.com", "http://x.org/a", "me@x.org", "😀", "a\u00a0b", "e\u0301", "\u200b", "@user", "#tag",
]


def _hard_caption(rng: random.Random) -> str:
    return " ".join(rng.choice(HARD_PIECES) for _ in range(rng.randint(1, 9)))


def _check(captions: list[str], successors: list[str | None]) -> tuple[int, int]:
    """(checked, left to the jar); asserts equality with the jar on every checked caption."""
    ref = jar_tokenize(captions, successors)
    checked = left = 0
    for c, s, r in zip(captions, successors, ref, strict=True):
        mine = extended_tokenize(clean_line_breaks(c), None if s is None else clean_line_breaks(s))
        if mine is None:
            left += 1
            continue
        checked += 1
        assert mine == r, (c, s)
    return checked, left


@needs_java
@pytest.mark.skipif(not realdata.available(), reason="../shared/realdata is absent")
def test_real_captions_outside_the_fast_path_equal_the_jar():
    captions: list[str] = []
    successors: list[str | None] = []
    total = 0
    for name in realdata.SETS:
        cands, refs = realdata.pycoco_files(name)
        total += len(cands) + len(refs)
        flat = cands + refs
        succ = pycoco_successors([cands, refs])
        for c, s, t in zip(flat, succ, fast_tokenize_many(flat), strict=True):
            if t is None:
                captions.append(c)
                successors.append(s)
    checked, left = _check(captions, successors)
    # 42,657 captions; the fast path takes all but 360; this module takes all of those
    assert total == 42_657 and checked + left == len(captions)
    assert left == 0, left


@needs_java
def test_generated_hard_cases_equal_the_jar():
    rng = random.Random(3)
    captions = [_hard_caption(rng) for _ in range(1500)]
    successors: list[str | None] = [rng.choice([None, "", "The dog", "now", "5 cats", '"x', c]) for c in captions]
    checked, left = _check(captions, successors)
    assert checked > 550, (checked, left)


def test_unrecognised_shapes_are_left_to_the_jar():
    for caption in ["an emoji 😀", "e\u0301cole", "zero\u200bwidth", "a www.example.com site", "AT&T store"]:
        assert extended_tokenize(caption, "") is None, caption
    assert extended_tokenize('A "quoted" (word) [x] café', "") == "a quoted -lrb- word -rrb- -lsb- x -rsb- café"
