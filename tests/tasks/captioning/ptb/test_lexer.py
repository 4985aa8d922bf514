"""The whole PTB lexer in Python (`ptb_lexer`) against the CoreNLP 3.4.1 jar, the oracle: captions
generated from every rule family of PTBLexer.flex (`ptb_grammar_cases`), each family alone and all
mixed, in pycocoevalcap's file setting (each caption followed by the next line, which the lexer
may look at); the real captions of ../shared/realdata that the fast path leaves; and, without
Java, captions of rare shapes that must score (answers established with the jar)."""

from __future__ import annotations

import random

import pytest
import realdata
from conftest import needs_java
from ptb_grammar_cases import FAMILIES, grammar_caption, grammar_captions

from vlbench.backports import strict_zip
from vlbench.errors import UsageError
from vlbench.tasks.captioning.ptb import jar_tokenize, tokenize
from vlbench.tasks.captioning.ptb import lexer as ptb_lexer
from vlbench.tasks.captioning.ptb.lines import (
    clean_line_breaks,
    pycoco_successors,
    strip_punctuation,
)


def _lexer(captions: list[str], successors: list[str | None]) -> list[str]:
    return [strip_punctuation(" ".join(ptb_lexer.tokenize_line(clean_line_breaks(c), s)))
            for c, s in strict_zip(captions, successors)]


def _assert_equal_to_jar(captions: list[str]) -> None:
    successors = pycoco_successors([captions])
    mine = _lexer(captions, successors)
    theirs = jar_tokenize(captions, successors)
    bad = [(c, m, t) for c, m, t in strict_zip(captions, mine, theirs) if m != t]
    assert not bad, f"{len(bad)} of {len(captions)} differ, e.g. {bad[:3]}"


@needs_java
def test_every_rule_family_alone_equals_the_jar():
    rng = random.Random(11)
    captions = [grammar_caption(rng, [family]) for family in FAMILIES for _ in range(60)]
    _assert_equal_to_jar(captions)


@needs_java
def test_mixed_grammar_captions_equal_the_jar():
    _assert_equal_to_jar(grammar_captions(1500, seed=0))


@needs_java
def test_every_piece_alone_and_before_each_kind_of_next_line():
    """Each piece by itself, at a line's end (the look-ahead rules see the next line) and on a
    file's last line."""
    pieces = sorted({p for family in FAMILIES.values() for p in family if p.strip()})
    rng = random.Random(5)
    nexts = [p for p in FAMILIES["word"] if p[:1].isupper()] + ["<b>", "5", "a", "", "\u00a0"]
    captions = [x for p in pieces for x in (f"a {p}", p, rng.choice(nexts))]
    _assert_equal_to_jar(captions)
    _assert_equal_to_jar(pieces[-20:] + ["x i."])


@needs_java
@pytest.mark.skipif(not realdata.available(), reason="../shared/realdata is absent")
def test_real_captions_outside_the_fast_path_equal_the_jar():
    captions, successors, _ = realdata.outside_fast_path()
    assert len(captions) > 300
    assert _lexer(captions, successors) == jar_tokenize(captions, successors)


# Answers established with the jar (`jar_tokenize`), one per family of rare shapes.
RARE = [
    ("a man is,'s riding a horse :) on the beach", "a man is 's riding a horse :-rrb- on the beach"),
    ("email me at john.doe@example.com please", "email me at john.doe@example.com please"),
    ("see http://www.example.com/a?b=1. now", "see http://www.example.com/a?b=1 now"),
    ("a photo.jpg of a cat.", "a photo.jpg of a cat"),
    ("he cannot go 'twas 'tis fine", "he can not go 't was 't is fine"),
    ("the U.S. flag and Mr. Smith at 5 1/2 inches \u00bd cup",
     "the u.s. flag and mr. smith at 5\u00a01/2 inches 1/2 cup"),
    ("call (555) 123-4567 today", "call -lrb-555-rrb-\u00a0123-4567 today"),
    ('a cat <b class="x"> here </b>', 'a cat <b\u00a0class="x"> here </b>'),
    ("prices \u00a35 and \u20ac10 and 10\u00a2", "prices # 5 and $ 10 and 10 cents"),
    ("a ph.d. student and c++ code", "a ph.d. student and c++ code"),
    ("\u201c\u201cdouble\u201d\u201d e\u0301cole \u0130stanbul \u039f\u0394\u039f\u03a3",
     "```` double '''' e\u0301cole i\u0307stanbul \u03bf\u03b4\u03bf\u03c2"),
    ("^_^ (^_^) :-D <3 x@y.org", "^_^ -lrb-^_^-rrb- :-d < 3 x@y.org"),
]


def test_rare_shapes_are_tokenized_without_java(monkeypatch):
    monkeypatch.setenv("VLBENCH_JAVA", "none")
    monkeypatch.delenv("VLBENCH_PTB", raising=False)
    captions = [c for c, _ in RARE]
    out, n_rare = tokenize(captions)
    assert out == [t for _, t in RARE]
    assert n_rare >= 9  # most are of none of the shapes the faster paths take


@needs_java
def test_rare_shape_answers_equal_the_jar():
    captions = [c for c, _ in RARE]
    assert jar_tokenize(captions) == [t for _, t in RARE]


def test_jar_switch_without_java_is_refused(monkeypatch):
    from conftest import refs_of

    from vlbench.tasks.captioning.scoring import score_captions

    monkeypatch.setenv("VLBENCH_JAVA", "none")
    monkeypatch.setenv("VLBENCH_PTB", "jar")
    with pytest.raises(UsageError, match=r"VLBENCH_PTB=jar sends 1 caption\(s\) .*'a smile :\)'"):
        score_captions(["a dog", "a smile :)"], refs_of([["a dog"], ["a cat"]]), meteor=False, spice=False)
    monkeypatch.setenv("VLBENCH_PTB", "perl")
    with pytest.raises(UsageError, match="VLBENCH_PTB must be 'python' or 'jar'"):
        tokenize(["a smile :)"])


def test_caseless_literals_and_case_sensitive_classes():
    """%caseless: literal letters match either case, character classes keep theirs."""
    classes = ptb_lexer._unicode_classes()
    assert ptb_lexer._translate("[A]bout", classes) == "[A][bB][oO][uU][tT]"
    assert ptb_lexer._translate("is", classes) == "[iI\u0130\u0131][sS\u017f]"
    assert ptb_lexer._translate("[^]{APOS}", classes).startswith("[\\s\\S](?:['\\u0092\\u2019]|&[aA]")
    # "i." keeps its period before a lower-case "about", loses it before "About" or "ABOUT"
    assert ptb_lexer.tokenize_line("i.", "about it") == ["i."]
    assert ptb_lexer.tokenize_line("i.", "About it") == ["i", "."]
    assert ptb_lexer.tokenize_line("i.", "ABOUT it") == ["i", "."]
    assert ptb_lexer.tokenize_line("i.", "Th\u0130s it") == ["i", "."]


@needs_java
def test_caseless_letters_beyond_ascii_equal_the_jar():
    """Literal i, k and s of the grammar also match İ ı, the Kelvin sign and the long s."""
    captions = []
    for word in ["Thİs x", "Thıs x", "Theſe x", "ſuch x", "ſince x", "Sİnce x", "It is", "İt is", "Tha\u212at"]:
        captions += ["x A.", word]
    captions += ["\u212ay. x", "ınc. x", "İnc. x", "x ſept. y", "ıll. x", "İLL. x", "dıdn't", "c\u212a", "co\u212a x",
                 "ca\u212a\u212aot", "\u017fo.", "ab\u0131d."]
    _assert_equal_to_jar(captions)
