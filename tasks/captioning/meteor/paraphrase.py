"""A per-run paraphrase table for Meteor 1.5: the entries of `paraphrase-en.gz` that can match
anything in this run's captions, so the JVM loads a few thousand entries instead of 5.27 million.

Why dropping the other entries changes nothing (read from the Meteor 1.5 bytecode: classes
`ParaphraseTransducer`, `ParaphraseMatcher`, `Aligner`, `MeteorScorer`, `Normalizer`):
- The table is read as line triples (probability, phrase, paraphrase); the probability line is read
  and discarded, and every paraphrase match gets the same fixed weight.
- Matching is by table membership only: for each position of one line of a segment, the phrases
  starting there are looked up in a trie, and a match is recorded where the paraphrase occurs in the
  other line (both directions). So an entry produces a match only if its phrase **and** its
  paraphrase occur, as contiguous token sequences, in the hypothesis or a reference of the segment.
  (An empty paraphrase "occurs" everywhere; an empty phrase is never looked up; both are kept.)
- The matches of an entry are appended in file order, and a filtered file keeps the relative order
  of the kept entries, so every match list, hence the beam search and the 23 statistics, is the
  same. Word ids differ between tables but are only compared for equality; words missing from the
  smaller table map to -1, which no table word has.
- The tokens are what `-norm` makes of each `|||`-separated part of a SCORE line:
  `Normalizer.normalizeLine(part.trim(), LANG_EN, keepPunctuation=true)`, then `toLowerCase()`,
  then `StringTokenizer` (splits on " \\t\\n\\r\\f"). `normalize_line` below reimplements it and is
  tested against the jar's own `edu.cmu.meteor.util.Normalizer` on adversarial strings.
- Lower-casing: Python's `str.lower` and Java's `toLowerCase` (English locale) can only differ on
  characters cased in one Unicode version and not the other, or by context rules (final sigma,
  dotted I) whose results (sigma, U+0307) do not occur in the table; the table's 86 distinct
  characters all have long-standing case mappings, so a caption token equals a table word under
  one lower-casing exactly when it does under the other.

The keys: a phrase's key mixes its first and last 8 UTF-8 bytes and its byte length (`span_keys`),
the tokens joined by single spaces (the table's own form). `paraphrase_index.py` keys every line of
the table so; a run keys every n-gram (up to the longest table phrase) of its normalised captions
the same way (`ngram_keys`) and keeps the entries whose phrase and paraphrase keys are both among
them; a key collision can only keep an extra entry.

One module, though long: the normaliser and the keys decide together which table entries can
match this run's tokens (the keys must come from exactly the normaliser's tokens);
`python_meteor.py` reads its tokens from the same normaliser.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable, Sequence
from functools import cache

import numpy as np

# The Meteor 1.5 jar that pycocoevalcap 1.2 ships: the argument above was checked on its bytecode,
# so the filtered table is only used with this exact jar.
METEOR_15_SHA256 = "1e57b4c72c0830ebe68558f1c799a624e96cbc1b6045c9f6330e26dcff6eafc2"

# --------------------------------------------------------------------------- normaliser (English)
# Character classes copied from the jar's constant pool (Normalizer 1.5).
_ALPHA = (
    "A-Za-z\u0160\u017d\u0161\u017e\u0178\xc0-\xd6\xd8-\xf6\xf8-\u017e\u0400-\u04ff\u0500-\u0527"
    "\ua640-\ua66e\ua67e-\ua697\u1d00-\u1d7f"
)
_ALNUM = "0-9" + _ALPHA
_JAVA_SPACE = " \\t\\n\\x0b\\x0c\\r"  # java.util.regex \s (ASCII only by default)
_SEP_OTHER = re.compile(f"([^{_ALNUM}{_JAVA_SPACE}.'`,\\-\u2018\u2019])")
_MULTI_DOT = re.compile(r"\.([.]+)")
_MULTI_DOT2 = re.compile(r"DOTMULTI\.([^.])")
_COMMA = re.compile(r"([^0-9]),([^0-9])")  # \p{Digit} is [0-9] in java.util.regex
_COMMA2 = re.compile(r"([0-9]),([^0-9])")
_COMMA3 = re.compile(r"([^0-9]),([0-9])")
_QUOTE = re.compile("[`\u2018\u2019]")
_QUOTE2 = re.compile("[\u201c\u201d]|''")
_RM_DASH = re.compile(f"([{_ALNUM}.])-([{_ALNUM}])")
_CONT1 = re.compile(f"([^{_ALPHA}])'([^{_ALPHA}])")
_CONT2 = re.compile(f"([^{_ALPHA}0-9])'([{_ALPHA}])")
_CONT3 = re.compile(f"([{_ALPHA}])'([^{_ALPHA}])")
_CONT4 = re.compile(f"([{_ALPHA}])'([{_ALPHA}])")
_CONT5 = re.compile(r"([0-9])'([s])")
_NBP_ALPHA = re.compile(f"[{_ALPHA}]")
_LOWER_START = re.compile("[a-z]")  # ^[\p{Lower}]: ASCII
_DIGIT_START = re.compile("[0-9]")
_WHITE = re.compile("[ \u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000\xa0]+")
_TOKEN_DELIMS = re.compile("[ \t\n\r\f]+")  # java.util.StringTokenizer's default delimiters


_JAVA_TRIMMED = "".join(map(chr, range(33)))


def java_trim(s: str) -> str:
    """String.trim(): strips every character <= U+0020 at both ends."""
    return s.strip(_JAVA_TRIMMED)


def string_tokens(s: str) -> list[str]:
    return [t for t in _TOKEN_DELIMS.split(s) if t]


@cache
def nonbreaking_prefixes(jar: str) -> dict[str, int]:
    """The jar's nonbreaking/english.prefixes: 1 = always nonbreaking, 2 = before a number only."""
    with zipfile.ZipFile(jar) as z:
        text = z.read("nonbreaking/english.prefixes").decode("utf-8")
    out: dict[str, int] = {}
    for line in re.split(r"\r\n|\r|\n", text):
        toks = string_tokens(line)
        if not toks or toks[0].startswith("#"):
            continue
        out[toks[0]] = 2 if len(toks) > 1 and toks[1] == "#NUMERIC_ONLY#" else 1
    return out


def normalize_line(line: str, nbp: dict[str, int]) -> str:
    """Normalizer.normalizeLine(line, LANG_EN, true) of Meteor 1.5, step by step. A step is skipped
    when the text lacks the character that every match of its pattern needs (it would change
    nothing): most captions have no dot, comma, quote or dash."""
    s = _SEP_OTHER.sub(r" \1 ", " " + line + " ")
    if ".." in s:
        s = _MULTI_DOT.sub(r" DOTMULTI\1", s)
    while "DOTMULTI." in s:
        s = _MULTI_DOT2.sub(r"DOTDOTMULTI \1", s)
        s = s.replace("DOTMULTI.", "DOTDOTMULTI")
    if "," in s:
        s = _COMMA.sub(r"\1 , \2", s)
        s = _COMMA2.sub(r"\1 , \2", s)
        s = _COMMA3.sub(r"\1 , \2", s)
    if "`" in s or "\u2018" in s or "\u2019" in s:
        s = _QUOTE.sub("'", s)
    if "''" in s or "\u201c" in s or "\u201d" in s:
        s = _QUOTE2.sub(' " ', s)
    if "-" in s or "\u2013" in s:
        s = s.replace("\u2013", "-").replace("--", "-")
        s = _RM_DASH.sub(r"\1 \2", s)
    if "'" in s:
        s = _CONT1.sub(r"\1 ' \2", s)
        s = _CONT2.sub(r"\1 ' \2", s)
        s = _CONT3.sub(r"\1 ' \2", s)
        s = _CONT4.sub(r"\1 '\2", s)
        s = _CONT5.sub(r"\1 '\2", s)
    words = string_tokens(s)
    if "." not in s:  # the loop below only changes words that end in a dot
        s = "".join(w + " " for w in words)
    else:
        parts: list[str] = []
        last = len(words) - 1
        for i, w in enumerate(words):
            if len(w) > 1 and w.endswith("."):
                pre = w[:-1]
                kind = nbp.get(pre)
                if "." in pre and _NBP_ALPHA.search(pre):
                    parts.append(w.replace(".", ""))
                elif kind == 1 or (i < last and _LOWER_START.match(words[i + 1])):  # noqa: SIM114 (the jar's branches)
                    parts.append(w)
                elif kind == 2 and i < last and _DIGIT_START.match(words[i + 1]):
                    parts.append(w)
                else:
                    parts.append(pre + " .")
            else:
                parts.append(w)
            parts.append(" ")
        s = "".join(parts)
    while "DOTDOTMULTI" in s:
        s = s.replace("DOTDOTMULTI", "DOTMULTI.")
    s = s.replace("DOTMULTI", ".")
    return java_trim(_WHITE.sub(" ", s))


def score_parts(line: str) -> list[str]:
    """The hypothesis and references the jar reads from one SCORE line: String.split("\\|\\|\\|")
    (trailing empty strings removed), every part after the first, trimmed. (A literal separator
    splits left to right without overlaps, as Java's regex split does here.)"""
    parts = line.split("|||")
    while parts and parts[-1] == "":
        parts.pop()
    return [p.strip(_JAVA_TRIMMED) for p in parts[1:]]


PLAIN_PART = re.compile("[A-Za-z0-9 ]*")


def meteor_tokens(text: str, nbp: dict[str, int]) -> list[str]:
    """The words Meteor aligns for one hypothesis or reference under `-norm`."""
    if PLAIN_PART.fullmatch(text) and "DOTMULTI" not in text:
        # Only ASCII letters, digits and spaces: no rule of the normaliser applies (each needs a
        # character outside this set: punctuation, a quote, a dash, a dot or a non-ASCII letter;
        # except the final un-escaping, which turns a literal "DOTMULTI" into "."), so it only
        # collapses the spaces. Most PTB-tokenized captions take this path.
        return text.lower().split()
    return string_tokens(normalize_line(text, nbp).lower())


# --------------------------------------------------------------------------- keys
# A phrase's key mixes its first 8 bytes, its last 8 bytes (zero where the phrase is shorter) and
# its byte length. Why not a hash of every byte: the first use on a machine keys all 10.5 million
# phrase lines of the table (272 MB), and gathering 16 bytes per line costs a small fraction of
# reading every byte as uint64 (`_paraphrase_scan.c` computes the same keys). Two different phrases share a key
# only when they agree on all three, which, like any hash collision, can only keep an extra entry
# (harmless: an entry matches only where its phrase and paraphrase occur).
_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xC2B2AE3D27D4EB4F)
_M3 = np.uint64(0x165667B19E3779F9)
_FMIX = np.uint64(0xFF51AFD7ED558CCD)
KEY_BITS = 40  # the index packs a key and a 24-bit line number into one uint64 to sort them
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def _padded(buf: np.ndarray) -> np.ndarray:
    """`buf` with 8 zero bytes before and 16 after: every span's first and last 8 bytes are then
    one row of a strided view."""
    padded = np.zeros(len(buf) + 24, dtype=np.uint8)
    padded[8 : 8 + len(buf)] = buf
    return padded


def _padded_span_keys(padded: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    return _span_key(_first_bytes(padded, starts), _last_bytes(padded, ends), ends - starts)


def _first_bytes(padded: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The 8 bytes from each start (little-endian uint64), for `_padded` text."""
    rows = np.lib.stride_tricks.sliding_window_view(padded, 8)  # one row gather per position
    return np.ascontiguousarray(rows[starts + 8]).view("<u8").reshape(-1)


def _last_bytes(padded: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The 8 bytes before each end."""
    rows = np.lib.stride_tricks.sliding_window_view(padded, 8)
    return np.ascontiguousarray(rows[ends]).view("<u8").reshape(-1)


def _span_key(first: np.ndarray, last: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The key of spans from their `_first_bytes`, `_last_bytes` and byte lengths (the inputs
    are left unchanged)."""
    first = first & _LOW_BYTES[np.minimum(length, 8)]  # a span's own bytes only
    final = last * _M2
    final[length < 8] = 0  # the first bytes already hold all of a short span
    key = first * _M1
    key ^= (final >> np.uint64(7)) | (final << np.uint64(57))
    key ^= length.astype(np.uint64) * _M3
    key ^= key >> np.uint64(33)
    key *= _FMIX
    key ^= key >> np.uint64(29)
    return key >> np.uint64(64 - KEY_BITS)


def span_keys(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The KEY_BITS-bit key of every byte span buf[start:end] (uint8 `buf`; spans within it)."""
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    if len(starts) == 0:
        return np.zeros(0, dtype=np.uint64)
    return _padded_span_keys(_padded(buf), starts, ends)


def bytes_key(b: bytes) -> int:
    """The key of one phrase's bytes (as `span_keys` computes it)."""
    buf = np.frombuffer(b, dtype=np.uint8)
    return int(span_keys(buf, np.array([0]), np.array([len(b)]))[0])


def ngram_keys(token_lists: Iterable[Sequence[str]], max_n: int) -> np.ndarray:
    """Keys of every n-gram (n = 0..max_n) of each token list, joined by single spaces, as
    `bytes_key` computes them (unsorted, with repeats)."""
    return np.concatenate(ngram_key_groups(token_lists, max_n))


def ngram_key_groups(token_lists: Iterable[Sequence[str]], max_n: int) -> list[np.ndarray]:
    """`ngram_keys` by length: item n holds the keys of the n-grams (item 0: the empty phrase);
    vectorised over positions.

    The lists are keyed in their own text form: tokens joined by spaces, lists by newlines
    (Meteor's tokens never hold either: StringTokenizer split them off), so the token spans are
    read off the separators' positions, with no per-token Python work."""
    text = "\n".join(" ".join(toks) for toks in token_lists) + "\n"
    buf = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    newline = buf == 10
    sep = np.flatnonzero(newline | (buf == 32))
    starts = np.empty(len(sep), dtype=np.int64)
    starts[:1] = 0
    starts[1:] = sep[:-1] + 1
    token = sep > starts  # an empty list leaves an empty span between two newlines
    line = np.cumsum(newline[sep]) - newline[sep]  # the list each span belongs to
    tok_start, tok_end, tok_line = starts[token], sep[token], line[token]
    padded = _padded(buf)
    zero = np.zeros(1, dtype=np.int64)
    out = [_padded_span_keys(padded, zero, zero)]  # the empty phrase
    # every n-gram starts at a token's start and ends at a token's end: their bytes are read once
    first_bytes, last_bytes = _first_bytes(padded, tok_start), _last_bytes(padded, tok_end)
    n = len(tok_start)
    for k in range(max_n):
        first = np.flatnonzero(tok_line[: max(n - k, 0)] == tok_line[k:])  # k+1 tokens of one list
        out.append(_span_key(first_bytes[first], last_bytes[first + k], tok_end[first + k] - tok_start[first]))
    return out


def run_token_lists(lines: Iterable[str], jar: str) -> list[list[str]]:
    """Meteor's words for every hypothesis and reference of the given SCORE lines."""
    nbp = nonbreaking_prefixes(jar)
    out: list[list[str]] = []
    memo: dict[str, list[str]] = {}
    for line in lines:
        for part in score_parts(line):
            toks = memo.get(part)
            if toks is None:
                toks = memo[part] = meteor_tokens(part, nbp)
            out.append(toks)
    return out
