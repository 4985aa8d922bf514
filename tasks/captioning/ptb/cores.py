"""The tokens of a chunk's core (what is left of a chunk once its openers and closers are
taken off: `chunks.py`): words and numbers joined by - _ / or internal periods, acronyms, <tag>,
clitics after words or numbers, apostrophes inside words, capital AT&T, @user and #tag, and the
symbols the lexer splits off; and of runs of the marks . , ; : ! ? after a word or alone.

Each function appends the tokens it recognises to `out` and returns False for a shape that was
not measured with the jar (the caption then goes to the whole lexer).
"""

from __future__ import annotations

import re

from vlbench.tasks.captioning.ptb.chars import LETTER, char_class
from vlbench.tasks.captioning.ptb.fast import SPLIT_WORDS

# Letters whose lower case Java and Python agree on: Unicode letters (L*), except the few with
# special or context-dependent lower-casing (dotted I, capital sigma) and titlecase digraphs.
ODD_LETTERS = frozenset("\u0130\u03a3\u01c4\u01c5\u01c6\u01c7\u01c8\u01c9\u01ca\u01cb\u01cc\u01f1\u01f2\u01f3")


def is_letter(c: str) -> bool:
    if c.isascii():
        return c.isalpha()
    return char_class(c) == LETTER and c not in ODD_LETTERS and len(c.lower()) == 1


def is_alnum(c: str) -> bool:
    return (c.isascii() and c.isdigit()) or is_letter(c)


_WHOLE_APOSTROPHE_WORDS = frozenset(["o'clock"])
CLITICS = ("'s", "'re", "'ve", "'ll", "'d", "'m")
NUMBER = re.compile(r"[0-9]+(?:[.:,][0-9]+)*\Z")
ACRONYM = re.compile(r"[a-z](?:\.[a-z])+\Z")
_TAG = re.compile(r"<[a-z]+>\Z")
# a number with separators, then letters: "6:40pm" is "6:40" "pm" (while "5pm" is one word)
_NUMBER_THEN_LETTERS = re.compile(r"([0-9]+(?:[.:,][0-9]+)+)([a-z]+)\Z")
# "black'blue", "it'sx": the lexer splits at the apostrophe, except after the words and before
# the starts below, which its apostrophe-word rules keep whole ("ma'am", "o'brien", "'em", "'til")
_APOSTROPHE_SPLIT = re.compile(r"[a-z]{2,}(?:'[a-z]+)+\Z")
_APOSTROPHE_KEEPERS = ("em", "til", "cause", "tw", "n", "t")
_APOSTROPHE_WORD_STEMS = frozenset(["nor", "ev", "li", "nat", "cont", "cap", "somethin", "ol", "dunkin"])


def _word_tokens(word: str, out: list[str]) -> bool:
    """Tokens of a core without symbols: letters/digits joined by - _ / or internal periods."""
    low = word.lower()
    if not low:
        return True
    if low in SPLIT_WORDS:
        out.extend(SPLIT_WORDS[low])
        return True
    # the split words split only as whole tokens ("gonnax", "x-cannot", "advertising" stay whole)
    if NUMBER.match(low):
        out.append(low)
        return True
    if ACRONYM.match(low):
        out.append(low)
        return True
    m = _NUMBER_THEN_LETTERS.match(low)
    if m is not None:
        out.append(m.group(1))
        return _word_tokens(m.group(2), out)
    # runs of alnum joined by single - _ /; or letter runs joined by periods (one token)
    parts = re.split(r"([-_/.])", low)
    if any(p == "" for p in parts):
        return False  # doubled or edge joiner: not a shape measured here
    seps = set(parts[1::2])
    runs = parts[0::2]
    if not all(all(is_alnum(c) for c in r) for r in runs):
        return False
    # letters only around periods ("pole.a", "blanket.cake"); digits there split in odd ways
    if "." in seps and (seps != {"."} or not all(all(is_letter(c) for c in r) for r in runs)):
        return False
    if "." in seps and (runs[0] == "www" or runs[-1] in ("com", "net", "org", "edu")):
        return False  # URLs: the lexer's URL rules were not measured
    out.append(low)
    return True



_UPPER_JOINED = re.compile(r"[A-Z]+(?:[+&][A-Z]+)+")
_HANDLE = re.compile(r"@[A-Za-z][A-Za-z0-9]*|#[A-Za-z]+")


def _apostrophe_split(word: str, out: list[str]) -> bool:
    """Letters joined by apostrophes ("black'blue"): the words, the quotes being dropped, or
    False where one of the lexer's apostrophe-word rules may keep a piece whole."""
    pieces = word.split("'")
    for left, right in zip(pieces, pieces[1:]):
        low_right = right.lower()
        if left.lower() in _APOSTROPHE_WORD_STEMS or low_right.startswith(_APOSTROPHE_KEEPERS):
            return False
        if left[-1] in "aeiouyAEIOUY" and (right[0] in "aeiou" or right[0].isupper()):
            return False  # "ma'am": a vowel, the apostrophe, a vowel or a capital
    for k, piece in enumerate(pieces):
        if k:
            out.append("'")  # dropped with the punctuation; its direction does not matter
        if not _word_tokens(piece, out):
            return False
    return True


def core_tokens(core: str, out: list[str]) -> bool:
    """Tokens of the core of a chunk (no openers or closers left); False when unknown."""
    if not core:
        return True
    low = core.lower()
    if _TAG.match(low):
        out.append(low)
        return True
    if _UPPER_JOINED.fullmatch(core) or _HANDLE.fullmatch(core):
        out.append(low)  # "AT&T", "R&D", "AB+CD" (capitals only); "@user", "#tag"
        return True
    if "*" in core:
        # runs of asterisks are tokens of their own ("a*b" is "a" "*" "b", "**" one token)
        for piece in re.split(r"(\*+)", core):
            if piece.startswith("*"):
                out.append(piece)
            elif piece and not core_tokens(piece, out):
                return False
        return True
    # clitics after a letter word: dog's, don't, we're (’ is the lexer's apostrophe too)
    norm = low.replace("\u2019", "'")
    for clitic in CLITICS:
        if norm.endswith(clitic) and len(norm) > len(clitic):
            stem = norm[: -len(clitic)]
            # after letters or digits ("dog's", "70's", "x1's", "70're", "thàt's"); "'70s" keeps its quote
            if (all(is_alnum(ch) for ch in stem) or NUMBER.match(stem)) and stem not in SPLIT_WORDS:
                if not _word_tokens(stem, out):
                    return False
                out.append(clitic)
                return True
            return False
    if norm.endswith("n't") and len(norm) > 3:
        stem = norm[:-3]
        if stem.isascii() and stem.isalpha() and not stem.endswith("n") and stem not in SPLIT_WORDS:
            if not _word_tokens(stem, out):
                return False
            out.append("n't")
            return True
        if stem.isascii() and stem.isalpha() and stem.endswith("n") and stem not in SPLIT_WORDS:
            # the lexer's n't words cannot end in n: "mann't" is "mann" "'" "t"
            out.extend([stem + "n", "'", "t"])
            return True
        return False
    if norm in _WHOLE_APOSTROPHE_WORDS:
        out.append(low)  # "o’clock" keeps its curly apostrophe (only clitics are normalised)
        return True
    if norm in CLITICS:
        out.append(norm)
        return True
    if _NUMBER_THEN_LETTERS.match(low):
        return _word_tokens(core, out)
    if _APOSTROPHE_SPLIT.match(norm):
        return _apostrophe_split(core.replace("\u2019", "'"), out)
    if "'" in norm or '"' in norm:
        return False
    # symbols the lexer always splits off; a split between two lower-case-only letter runs for &
    for sym in ("=", ";", "%", "&", "$", "#", "+", ",", ":"):
        if sym in low:
            pieces = core.split(sym)
            if sym == "&" and not all(p == "" or p.islower() or p.isdigit() for p in pieces):
                return False  # AT&T, S&P: the lexer keeps some upper-case ones whole
            if sym == "#" and any(p[:1].isalpha() for p in pieces[1:]):
                return False  # hashtags
            if sym == "$" and any(p[-1:].isalpha() for p in pieces[:-1]):
                return False  # US$ and other currency prefixes
            if sym == "+" and "++" in low:
                return False  # c++
            if sym in ",:" and NUMBER.match(low.replace(",", "0").replace(":", "0")) is None:
                # between letters a comma or colon splits; next to digits it is a number (or odd)
                if any(p[:1].isdigit() for p in pieces[1:]) or any(p[-1:].isdigit() for p in pieces[:-1]):
                    return False
            elif sym in ",:":
                break  # a number: handled by the word rule below
            for k, p in enumerate(pieces):
                if k:
                    out.append(sym)
                if not core_tokens(p, out):
                    return False
            return True
    return _word_tokens(core, out)


def punct_run_tokens(run: str, out: list[str]) -> bool:
    """Tokens of a run of . , ; : ! ? (after a word, or standing alone)."""
    i = 0
    while i < len(run):
        c = run[i]
        if c in "!?":
            j = i
            while j < len(run) and run[j] in "!?":
                j += 1
            out.append(run[i:j])
            i = j
        elif c == ".":
            j = i
            while j < len(run) and run[j] == ".":
                j += 1
            n = j - i
            if n == 2:
                out.extend([".", "."])
            elif n >= 3 and j < len(run) and run[j] == ".":
                return False
            else:
                out.append("..." if n >= 3 else ".")
            i = j
        elif c in ",;:":
            out.append(c)
            i += 1
        else:
            return False
    return True


