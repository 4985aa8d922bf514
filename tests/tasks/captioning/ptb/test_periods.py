"""The lexer's look-ahead after a one-letter word and a period ("... video i."), against the
CoreNLP 3.4.1 jar run on the very file pycocoevalcap writes (captions joined by line ends, no
final newline): the period is split off only when the next non-blank text, on this line or any
later one, is a sentence starter of PTBLexer.flex (capital first letter, the rest in any case) or
an SGML tag, followed by a blank or a line end.

The oracle is one jar run over the whole file, so each caption has exactly the context it has in
pycocoevalcap; vlbench's Python path (`tokenize`) and its jar path (`jar_tokenize` with
`pycoco_successors`) must both give the same lines."""

from __future__ import annotations

import random

from conftest import needs_java

from vlbench.backports import strict_zip
from vlbench.tasks.captioning.ptb import jar_tokenize, pycoco_successors, tokenize
from vlbench.tasks.captioning.ptb.jar import _run_jar
from vlbench.tasks.captioning.ptb.lines import strip_punctuation
from vlbench.tasks.captioning.ptb.periods import SENTENCE_STARTERS
from vlbench.tasks.captioning.ptb.rules import extended_tokenize

ONE_LETTER_ENDINGS = ["a video i.", "the letter x.", "Plan B.", "vitamin A.", "row Z.", "I.", "said I.", "see u.",
                      "grade a. ", "type c.\t", "a note o.\u00a0"]


def _cases(word: str) -> list[str]:
    lower = word[0] + word[1:].lower()
    return [word, word.upper(), lower[0] + "".join(c.upper() if i % 2 else c for i, c in enumerate(lower[1:])),
            word[0].lower() + word[1:]]


def next_lines() -> list[str]:
    """Lines that can follow a one-letter ending: every starter in several cases and followed by
    blanks, punctuation or nothing; other capitalised words; lower case; digits; punctuation;
    tags; Unicode case variants; blank lines (the look-ahead runs over them)."""
    out: list[str] = []
    for w in SENTENCE_STARTERS:
        for v in _cases(w):
            out += [f"{v} small dog", f"{v}", f"{v},", f"{v}.", f"{v}\tcat", f"{v}\u3000cat", f"{v}'s dog", f"{v}-x"]
    out += ["Hello there", "Hi", "I am", "Mrs. Smith", "Dr. Who", "Mr Smith", "Ms x", "St. Louis", "Also the",
            "Anyway so", "Thereafter", "Them all", "Ours", "Whatever", "Ask me", "Atop it", "Butter", "Heres",
            "Théy are", "Éclair", "Über", "Ångström", "Σ x", "Москва", "東京 x", "Thıs x", "Thİs x", "Aſ x",
            "Sınce x", "\u212aelvin x",
            "however small", "the dog", "a", "an apple", "i", "x y",
            "5 dogs", "10", "3.5 cm", "1st", "'70s",
            '"The dog"', "(The dog)", "[The]", "'The'", "`The", "\u201cThe\u201d", "\u2014 The", "... The", ". The",
            ", The", "- The", "! The", "? x", "; x", ": x", "$5", "#1", "@The", "*The", "\U0001f600 The",
            "<b> bold", "<b>", "<a href='x'> link", "<unk>", "</i> x", "<!x> y", "<b", "< The", "<3 The",
            "", " ", "\t", "\u00a0", "  The dog", "\u00a0The dog", "\u2003The dog", "\tThe dog",
            "\u200bThe dog", "\u00adThe dog"]
    return out


def _jar_file(lines: list[str]) -> list[str]:
    """The jar's output for the file pycocoevalcap would write for these lines."""
    out = _run_jar("\n".join(lines), None)
    # the jar's output ends with the last line that has a token: blank last lines come back as ""
    assert len(out) <= len(lines) and all(not x.strip() for x in lines[len(out):])
    out += [""] * (len(lines) - len(out))
    return [strip_punctuation(x) for x in out]


def _file(rng: random.Random) -> list[str]:
    """A caption file: one-letter endings, each followed by one or more next lines (blank ones
    included, so the look-ahead runs over several lines), some at the very end of the file."""
    lines: list[str] = []
    following = next_lines()
    for nxt in following:
        lines.append(rng.choice(ONE_LETTER_ENDINGS))
        if not nxt.strip(" \t\u00a0\u3000\u2003") and rng.random() < 0.5:
            lines.append(nxt)  # a blank line, then a starter or not
            nxt = rng.choice(["The dog", "the dog", "However x", "However"])
        lines.append(nxt)
    # the same words on the caption's own line
    for nxt in following[::7]:
        lines.append(rng.choice(ONE_LETTER_ENDINGS).rstrip() + " " + nxt)
    return lines


@needs_java
def test_one_letter_period_lookahead_equals_the_jar():
    rng = random.Random(22)
    lines = _file(rng)
    files = [lines, [*lines[:40], "a video i.", "However"], [*lines[:40], "a video i.", "", "  ", "However small"],
             [*lines[:40], "a video i.", "", ""], ["a video i."], ["the letter x.", "Now"]]
    for f in files:
        expected = _jar_file(f)
        succ = pycoco_successors([f])
        python, _ = tokenize(f, succ)
        for line, got, want in strict_zip(f, python, expected):
            assert got == want, (line, got, want)
        # every one-letter ending is answered in Python (other shapes of the next lines may not be)
        for line, s in strict_zip(f, succ):
            if line in ONE_LETTER_ENDINGS:
                assert extended_tokenize(line, s) is not None, (line, s)
        jar = jar_tokenize(f, succ)
        for line, got, want in strict_zip(f, jar, expected):
            assert got == want, (line, got, want)


@needs_java
def test_references_and_candidates_files_keep_their_own_context():
    """pycocoevalcap tokenizes candidates and references in two jar runs: a candidate's last line
    is followed by nothing, not by the first reference."""
    cands = ["a man in row i.", "a woman holding a."]
    refs = ["However small the video i.", "a dog i.", "The cat", "a dog z."]
    want = _jar_file(cands) + _jar_file(refs)
    got, _ = tokenize(cands + refs, pycoco_successors([cands, refs]))
    assert got == want
    assert got[1] == "a woman holding a." and got[3] == "a dog i"


def test_one_letter_period_rule_without_the_jar():
    """Answers established with the jar (the issue's case first), checked here without Java."""
    assert extended_tokenize("a video i.", "However small the dog\n") == "a video i"
    assert extended_tokenize("a video i.", "however small the dog\n") == "a video i."
    assert extended_tokenize("a video i.", "HOWEVER small\n") == "a video i"
    assert extended_tokenize("a video i.", "However") == "a video i."  # the file ends after it
    assert extended_tokenize("a video i.", "However,\n") == "a video i."
    assert extended_tokenize("a video i.", "\n \nAdditionally x\n") == "a video i"
    assert extended_tokenize("a video i.", "Mr. x\n") == "a video i"
    assert extended_tokenize("a video i.", "<b> x\n") == "a video i"
    assert extended_tokenize("a video i.", "Hello x\n") == "a video i."
    assert extended_tokenize("a video i.", "5 x\n") == "a video i."
    assert extended_tokenize("a video i. Our dog", None) == "a video i our dog"
    assert extended_tokenize("a video i.", None) == "a video i."
