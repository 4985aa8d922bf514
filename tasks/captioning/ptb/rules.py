"""The chunk rules: PTB tokenization of the captions the fast paths leave (quotes, brackets,
accents, numbers, symbols, abbreviations, URLs, emoji, other scripts), in Python.

CoreNLP 3.4.1's PTBLexer is a JFlex grammar of a few hundred rules; the chunk rules do not port
it (`lexer.py` does, for what they leave). They recognise a closed set of shapes whose tokens were
established by running the jar, and return None for anything else. The tests check every answer
against the jar: all 42,657 real captions of `../shared/realdata`, generated hard cases,
realistic captions with users' edits (`tests/tasks/captioning/ptb/test_rules.py`), and the
character tables (`test_chars.py`).

A caption is first cut at blanks and at characters that stand alone (`_pieces`, using the
measured tables of `chars.py`: symbols are tokens, deleted characters and emoji cut tokens,
dashes, ellipses and guillemets are dropped tokens). Each remaining chunk is read as openers, core
and closers (`chunks.chunk_tokens`); a chunk of the fast path's shapes takes the fast path's
tokens (`fast.fast_chunk_tokens`: those shapes are context-free).
"""

from __future__ import annotations

import re

from vlbench.tasks.captioning.ptb.chars import (
    DELETE,
    DROPPED,
    DROPPED_TOKENS,
    LETTER,
    SPACE,
    SYMBOL,
    char_class,
)
from vlbench.tasks.captioning.ptb.chunks import URL_START, chunk_tokens
from vlbench.tasks.captioning.ptb.cores import ODD_LETTERS
from vlbench.tasks.captioning.ptb.fast import fast_chunk_tokens
from vlbench.tasks.captioning.ptb.lines import PUNCTUATIONS
from vlbench.tasks.captioning.ptb.periods import BLANKS

_FAST_CHUNK = re.compile(r"[A-Za-z0-9'.,;:!?\-]+\Z")  # the characters the fast path's shapes use

_NUMBER_PAIR = re.compile(
    r"(?<![0-9])[0-9]{1,4}[ \t\u00a0-][0-9]{1,4}/"  # 1 1/2
    r"|[0-9]{2,4}[ \t\u00a0-]+[0-9]{3,4}[ \t\u00a0-]+[0-9]"  # 12 345 678 (phone numbers)
    r"|\([0-9]+\)"
)
# Symbols the lexer rewrites into kept tokens (measured alone and between letters).
_REWRITTEN_SYMBOLS = {"\u20ac": "$", "\u20a0": "$", "\u00a4": "$", "\u00a3": "#", "\u00a2": "cents"}
# Two quote characters in a row are one token to the lexer ("`“" becomes "```", which the drop
# list does not remove): not handled here when one of them is not ASCII.
_QUOTE_PAIR = re.compile(
    "[\u2018-\u201f\u2039\u203a\u00ab\u00bb][`\u2018-\u201f\u2039\u203a\u00ab\u00bb]"
    "|`[\u2018-\u201f\u2039\u203a\u00ab\u00bb]"
)
_IN_CHUNK = frozenset("\u2018\u2019")  # curly apostrophes: the chunk rules decide


_RUNS = re.compile("[!-~\u2018\u2019]+|[ \t]+|.", re.DOTALL)  # chunk material, blanks, one other character


def _pieces(caption: str) -> list[tuple[int, int] | str] | None:
    """The caption cut into chunks (spans) and the tokens of characters that stand alone (a
    symbol, "--", "...", or "" for a deleted character); None for a character not classified.
    Printable ASCII and the curly apostrophes are chunk material (the chunk rules decide)."""
    out: list[tuple[int, int] | str] = []
    start = -1
    for m in _RUNS.finditer(caption):
        c = m.group()
        c0 = c[0]
        if len(c) > 1 or ("!" <= c0 <= "~") or c0 in _IN_CHUNK:
            if c0 == " " or c0 == "\t":
                kind = SPACE
            else:
                if start < 0:
                    start = m.start()
                continue
        elif c0 in _REWRITTEN_SYMBOLS:
            kind = SYMBOL
        elif c0 == " " or c0 == "\t":
            kind = SPACE
        else:
            kind = char_class(c0)  # a control character, or any other non-ASCII one
            if kind == LETTER:
                if c0 in ODD_LETTERS or len(c0.lower()) != 1:
                    return None
                if start < 0:
                    start = m.start()
                continue
        if start >= 0:
            out.append((start, m.start()))
            start = -1
        if kind == SPACE:
            continue
        if kind == SYMBOL:
            out.append(_REWRITTEN_SYMBOLS.get(c0, c0))
        elif kind == DROPPED:
            out.append(DROPPED_TOKENS[c0])
        elif kind == DELETE:
            out.append("")
        else:
            return None
    if start >= 0:
        out.append((start, len(caption)))
    return out


def extended_tokenize(caption: str, next_line: str | None) -> str | None:
    """The punctuation-stripped PTB tokens of one (line-break-free) caption, or None when a chunk
    is not a recognised shape. `next_line`: the line after it in the jar's input (None: end)."""
    if _QUOTE_PAIR.search(caption):
        return None
    # numbers on both sides of a blank can be one token to the lexer (phone numbers, "5 1/2")
    if _NUMBER_PAIR.search(caption):
        return None
    pieces = _pieces(caption)
    if pieces is None:
        return None
    tokens: list[str] = []
    for piece in pieces:
        if isinstance(piece, str):
            if piece:
                tokens.append(piece)
            continue
        a, b = piece
        if URL_START.search(caption, a, b) and (caption[a - 1 : a] not in ("", " ", "\t") or caption[b : b + 1] not in ("", " ", "\t")):
            # the URL rules take in the characters cut off here: wide blanks, emoji, symbols
            # ("\u00abwww.x.com" is one token to the lexer)
            return None
        chunk = caption[a:b]
        if _FAST_CHUNK.match(chunk) and fast_chunk_tokens(chunk.lower(), tokens):
            continue  # the fast path's shapes are context-free (their marks are dropped anyway)
        rest = caption[b:]
        following = rest + "\n" + next_line if next_line is not None else (rest if rest.strip(BLANKS) else None)
        toks = chunk_tokens(chunk, following)
        if toks is None:
            return None
        tokens.extend(toks)
    return " ".join(t for t in tokens if t not in PUNCTUATIONS)
