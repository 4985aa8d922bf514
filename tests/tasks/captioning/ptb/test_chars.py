"""The character tables of `ptb/chars.py` against the CoreNLP 3.4.1 jar: every non-ASCII BMP character
that the tables classify, and a sample of supplementary ones, in the contexts the classes promise.
On a mismatch the test prints the characters that differ, so the tables can be measured again."""

from __future__ import annotations

import random
import unicodedata

from conftest import needs_java

from vlbench.backports import strict_zip
from vlbench.tasks.captioning.ptb import jar_tokenize
from vlbench.tasks.captioning.ptb.chars import (
    DELETE,
    DELETED,
    DROPPED,
    DROPPED_TOKENS,
    LETTER,
    LETTERS,
    SPACE,
    SPACES,
    SYMBOL,
    SYMBOLS,
    UNKNOWN,
    char_class,
)
from vlbench.tasks.captioning.ptb.lines import PUNCTUATIONS


def _members(table: tuple[tuple[int, ...], tuple[int, ...]]) -> list[str]:
    return [chr(cp) for a, b in strict_zip(*table) for cp in range(a, b + 1)]


def _drop(line: str) -> str:
    return " ".join(w for w in line.split(" ") if w not in PUNCTUATIONS)


# A context per class, and what the jar gives there ({c}: the character; {lc}: its lower case).
SYMBOL_CONTEXT = ("{c}{c} a{c}{c}b 5{c}5 {c}5 5{c} x{c}y I.{c}The {c}'s dog{c}. {c}-{c} dog{c}s don{c}t",
                  "{c} {c} a {c} {c} b 5 {c} 5 {c} 5 5 {c} x {c} y i. {c} the {c} 's dog {c} {c} {c} dog {c} s don {c} t")
# (not an apostrophe: "dog{c}s" is not "dog 's")
DELETED_CONTEXT = ("{c}{c} a{c}{c}b 5{c}5 {c}5 5{c} x{c}y I.{c}The {c}'s dog{c}. {c}-{c} dog{c}s don{c}t",
                   "a b 5 5 5 5 x y i. the 's dog dog s don t")
# as DELETED, but not doubled: two quote characters in a row are one token, kept ("````"),
# which the tokenizer leaves to the jar
DROPPED_CONTEXT = ("a{c}b 5{c}5 {c}5 5{c} x{c}y I.{c}The {c}'s dog{c}. {c}-{c} dog{c}s don{c}t",
                   "a b 5 5 5 5 x y i. the 's dog dog s don t")
SPACE_CONTEXT = ("a{c}b I.{c}The x.{c}y", "a b i the x. y")
LETTER_CONTEXT = ("a{c}b {c}", "a{lc}b {lc}")


def _check(chars: list[str], context: tuple[str, str]) -> list[tuple[str, str, str]]:
    """(character, expected, jar) for every character whose context the jar tokenizes otherwise."""
    text, want = context
    lines = [text.format(c=c) for c in chars]
    got = jar_tokenize(lines)
    bad = []
    for c, line in strict_zip(chars, got):
        expected = _drop(want.format(c=c, lc=c.lower()))
        if _drop(line) != expected:
            bad.append((f"U+{ord(c):04X} {unicodedata.name(c, '?')}", expected, line))
    return bad


@needs_java
def test_symbols_deleted_and_blank_characters_as_the_jar():
    rng = random.Random(0)
    astral = [chr(rng.randrange(0x10000, 0x30000)) for _ in range(300)] + ["\U0001f600", "\U0001f3fd", "\U0001f44d"]
    bad = (_check(_members(SYMBOLS), SYMBOL_CONTEXT)
           + _check(_members(DELETED) + astral, DELETED_CONTEXT)
           + _check(sorted(SPACES), SPACE_CONTEXT)
           + _check(list(DROPPED_TOKENS), DROPPED_CONTEXT))
    assert not bad, bad[:20]


@needs_java
def test_letters_as_the_jar():
    """48,408 letters: word characters to the lexer, lower-cased as Python does."""
    bad = _check(_members(LETTERS), LETTER_CONTEXT)
    assert not bad, bad[:20]


def test_classes():
    assert [char_class(c) for c in "é東ж❤©°\u200b\U0001f600\u3000\u00a0—…«"] == [
        LETTER, LETTER, LETTER, SYMBOL, SYMBOL, SYMBOL, DELETE, DELETE, SPACE, SPACE, DROPPED, DROPPED, DROPPED]
    # rewritten by the lexer (fractions, soft hyphen), in-word marks, unassigned: left to the jar
    assert [char_class(c) for c in "½\u00ad\u0301\u0378"] == [UNKNOWN] * 4
    # controls are deleted, but for those the lexer reads as Windows-1252 (euro sign, quotes)
    assert char_class("\x00") == char_class("\x7f") == DELETE
    assert [char_class(c) for c in "\x80\x91\x92\x93\x94"] == [UNKNOWN] * 5
    # a letter Unicode added after the lexer's tables (Cyrillic, Unicode 7.0) is deleted by it
    assert unicodedata.category("\u0528") == "Lu" and char_class("\u0528") == DELETE
    # each table is sorted (the lookup bisects), and the tables do not overlap
    for starts, ends in (LETTERS, SYMBOLS, DELETED):
        assert all(a <= b for a, b in strict_zip(starts, ends))
        assert all(e < s for e, s in zip(ends, starts[1:]))
    seen: set[str] = set()
    for table in (LETTERS, SYMBOLS, DELETED):
        members = set(_members(table))
        assert not members & seen
        seen |= members
    assert not seen & (SPACES | set(DROPPED_TOKENS))
