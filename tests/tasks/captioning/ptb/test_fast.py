"""The Python PTB fast paths (`ptb/fast.py`) and `ptb.tokenize` against the real CoreNLP 3.4.1 jar
on a few hundred generated and hand-written captions, and the line-separator decision."""

from __future__ import annotations

import random

import pytest
from conftest import needs_java
from gen import adversarial_caption, realistic_caption

from vlbench.backports import strict_zip
from vlbench.tasks.captioning.ptb import jar_tokenize, tokenize
from vlbench.tasks.captioning.ptb.fast import bulk_tokenize, fast_tokenize, fast_tokenize_many
from vlbench.tasks.captioning.ptb.jar import _run_jar
from vlbench.tasks.captioning.ptb.lines import LINE_BREAKS, strip_punctuation

pytestmark = needs_java

HAND = [
    "A man's dog (brown) runs [fast] {here}.",
    "He doesn't know; she can't -- won't!",
    "cannot gotta 'tis o'clock 20-year-old dogs' toys",
    "I'm gonna wanna y'all",
    "Cost is $1,000.50 & 50% off... wow?!",
    "A black-and-white photo of a 3.5 inch U.S. sign at 5:30 p.m.",
    "Mr. Smith ... St. Louis Inc.",
    "a.",
    "10.",
    "e-mail child/baby #1",
    "smile :) :-( ;)",
    "\u201cquoted\u201d \u2013 dash \u2014 em",
    "a\u00a0b",
    "",
    "   ",
    "dog , cat . bird ; x : y ! z ? w - v -- u",
    "well-known. black-and-white, e-mail!",
    "I'M HE'D I'd i'll we'Re CANNOT Gonna",
    "mann't inn't don't isn't",
    "The dog is ill. The cat is well.",
    "flying I.",
    "a b.",
    "emoji \U0001f600 here",
]


@pytest.fixture(scope="module")
def corpus():
    rng = random.Random(7)
    caps = HAND + [realistic_caption(rng) for _ in range(300)] + [adversarial_caption(rng) for _ in range(600)]
    return caps, jar_tokenize(caps)


def test_fast_path_equals_jar(corpus):
    caps, ref = corpus
    checked = 0
    for c, r in strict_zip(caps, ref):
        f = fast_tokenize(c)
        if f is not None:
            checked += 1
            assert f == r, c
    assert checked > 400  # the fast path is exercised, not bypassed


def test_bulk_path_equals_jar(corpus):
    caps, ref = corpus
    bulk = bulk_tokenize(caps)
    taken = [(c, b, r) for c, b, r in strict_zip(caps, bulk, ref) if b is not None]
    assert len(taken) > 250
    for c, b, r in taken:
        assert b == r, c


def test_bulk_fast_path_equals_single(corpus):
    caps, _ = corpus
    rng = random.Random(11)
    more = caps + [realistic_caption(rng) for _ in range(2000)] + ["Mr.", "a dog .", "I cannot.", "A.", "x\ry."]
    assert fast_tokenize_many(more) == [fast_tokenize(c) for c in more]


def test_fast_path_covers_realistic_captions():
    rng = random.Random(3)
    caps = [realistic_caption(rng) for _ in range(1000)]
    assert sum(fast_tokenize(c) is not None for c in caps) >= 950


def test_tokenize_uses_the_whole_lexer_for_the_rest(corpus, monkeypatch):
    caps, ref = corpus
    monkeypatch.delenv("VLBENCH_PTB", raising=False)
    out, n_rare = tokenize(caps)
    assert out == ref
    assert n_rare > 0
    monkeypatch.setenv("VLBENCH_PTB", "jar")  # the cross-check switch: the same answers from the jar
    assert tokenize(caps) == (out, n_rare)


def test_bracket_quirk_and_drop_list():
    out = jar_tokenize(["A man's dog (brown) runs [fast] {here}.", "He doesn't know; she can't -- won't!"])
    assert out == [
        "a man 's dog -lrb- brown -rrb- runs -lsb- fast -rsb- -lcb- here -rcb-",
        "he does n't know she ca n't wo n't",
    ]


@pytest.mark.parametrize("sep", list(LINE_BREAKS))
def test_line_separators_become_spaces(sep):
    """The jar splits lines on these; vlbench treats them as a space (as pycocoevalcap does \\n)
    on both paths, so no caption shifts."""
    caps = [f"a red{sep}bus.", "(a) second caption", f"third{sep}(one)", "last"]
    out, _ = tokenize(caps)
    assert out == ["a red bus", "-lrb- a -rrb- second caption", "third -lrb- one -rrb-", "last"]
    assert jar_tokenize(caps) == out


def test_fast_path_on_a_files_last_line():
    """pycocoevalcap's files end without a newline; the fast path must hold there too."""
    for c in ["a dog.", "it's.", "don't!", "well-known.", "10.", "he cannot.", "two dogs .", "x -"]:
        assert fast_tokenize(c) == strip_punctuation(_run_jar(c, None)[0]), c
