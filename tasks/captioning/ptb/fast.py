"""The fast tiers of PTB tokenization: the caption shapes whose tokens are known and context-free,
per caption (`fast_tokenize`) and for all captions at once with numpy (`bulk_tokenize`).

* The fast path (`fast_tokenize`) accepts a caption only when every whitespace-separated chunk
  has a shape whose PTB tokenization is known and context-free: ASCII letters (optionally joined
  by hyphens), digit runs, the clitics 's 're 've 'll 'd 'm n't, the six words the lexer splits
  (cannot, gonna, gotta, lemme, gimme, wanna), one trailing , ; : ! ? or . (a period only after a
  word that is not one of the lexer's abbreviations, nor a single letter), and stand-alone
  punctuation tokens of the drop list. It returns None for anything else. Each rule is checked
  against the real jar by `tests/tasks/captioning/ptb/test_fast.py`.
* The bulk path (`bulk_tokenize`) does the commonest of those shapes (letters, 's, n't, one
  trailing mark, stand-alone drop-list chunks) for all captions at once with numpy over the bytes
  of the joined text, and hands every other caption to `fast_tokenize`; a test checks that it
  agrees with `fast_tokenize` (and so with the jar) on everything it takes.

`fast_tokenize_many` runs both. The chunk rules (`rules.py`) reuse `fast_chunk_tokens` for the
chunks of these shapes inside captions the fast path leaves.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from vlbench.tasks.captioning.ptb.lines import LINE_BREAKS, clean_line_breaks

# Words the PTB lexer splits in two (found by running the jar; any case).
SPLIT_WORDS = {
    "cannot": ("can", "not"),
    "gonna": ("gon", "na"),
    "gotta": ("got", "ta"),
    "lemme": ("lem", "me"),
    "gimme": ("gim", "me"),
    "wanna": ("wan", "na"),
}

# Words after which a period may stay attached (PTB abbreviations), in any case. The union of the
# words the jar treated as abbreviations in any of three contexts over a 92k-word vocabulary, and
# the abbreviation lists of the PTB lexer grammar. A caption with "<word>." for one of them goes to
# the chunk rules (`rules.py`), which decide the period in context, as do single letters.
ABBREVIATIONS = frozenset(
    ["adj", "adm", "adv", "al", "ala", "alex", "apr", "ark", "asst", "aug", "ave", "az", "bldg", "brig", "bros", "calif", "capt", "cf", "cmdr", "co", "col", "comdr", "conn", "corp", "cos", "cpl", "ct", "dak", "dec", "del", "dr", "drs", "ens", "esq", "est", "fri", "ft", "ga", "gen", "gov", "hon", "ill", "inc", "insp", "jan", "jr", "kan", "ky", "la", "lt", "maj", "mar", "mass", "md", "messrs", "miss", "mlle", "mme", "mo", "mon", "mont", "mr", "mrs", "ms", "msgr", "mt", "neb", "nov", "oct", "ore", "pa", "penn", "pfc", "ph", "pres", "prof", "pvt", "rep", "reps", "rev", "rt", "sen", "sens", "sep", "sept", "sfc", "sgt", "sq", "sr", "st", "supt", "tel", "tues", "va", "vs", "vt", "wash", "wed", "feb", "jun", "jul", "thu", "thurs", "tue", "sat", "sun", "ariz", "colo", "fla", "ind", "kans", "mich", "minn", "okla", "tenn", "tex", "wis", "wyo", "nev", "attys", "atty", "govs", "lieut", "pfc", "spc", "supts", "det", "mm", "mmes", "mlles", "ltd", "plc", "bancorp", "dept", "bhd", "assn", "univ", "intl", "sys", "nos", "no", "prop", "ext", "seq", "etc", "wm", "jos", "cie", "treas", "blvd", "rd", "profs", "ste", "ed", "pty", "ptys", "pte", "ptes", "mdr", "cmdr", "comdr"]
)

_ALLOWED = re.compile(r"[A-Za-z0-9 \t'.,;:!?\-]*\Z")
_CHUNK = re.compile(
    r"(?P<body>[a-z]+(?:-[a-z]+)*|[0-9]+)"
    r"(?P<clitic>'s|'re|'ve|'ll|'d|'m)?"
    r"(?P<punct>[,;:!?.])?\Z"
)
_STANDALONE_DROPPED = frozenset([".", ",", ";", ":", "!", "?", "-", "--", "..."])


def _chunk_tokens(chunk: str, out: list[str]) -> bool:
    """Append the kept tokens of one lower-cased chunk; False when the chunk is not a known shape."""
    if chunk in _STANDALONE_DROPPED:
        return True
    m = _CHUNK.match(chunk)
    if m is None:
        return False
    body, clitic, punct = m.group("body", "clitic", "punct")
    alpha = body[0].isalpha()
    if punct == "." and alpha and (len(body) == 1 or body in ABBREVIATIONS) and not clitic:
        return False
    if clitic and (not alpha or "-" in body):
        return False
    if alpha and "-" not in body:
        split = SPLIT_WORDS.get(body)
        if split is not None:
            if clitic:
                return False
            out.extend(split)
        else:
            out.append(body)
    else:
        out.append(body)
    if clitic:
        out.append(clitic)
    return True


_NT = re.compile(r"([a-z]+)n't([,;:!?.])?\Z")


def fast_chunk_tokens(chunk: str, out: list[str]) -> bool:
    """Append the kept tokens of one lower-cased chunk of the fast path's shapes; False when the
    chunk is not one of them. The shapes are context-free, so the chunk rules use this too."""
    if "n't" in chunk:
        m = _NT.match(chunk)
        # "mann't" is not split the usual way by the lexer: the chunk rules take stems ending in n
        if m is None or m.group(1).endswith("n"):
            return False
        out.append(m.group(1))
        out.append("n't")
        return True
    return _chunk_tokens(chunk, out)


def fast_tokenize(caption: str) -> str | None:
    """The PTB-tokenized, punctuation-stripped caption, or None when a slower tier is needed."""
    caption = clean_line_breaks(caption)
    if not _ALLOWED.match(caption):
        return None
    out: list[str] = []
    for chunk in caption.lower().split():
        if not fast_chunk_tokens(chunk, out):
            return None
    return " ".join(out)


def fast_tokenize_many(captions: Sequence[str]) -> list[str | None]:
    """`fast_tokenize` of every caption: the bulk path first, `fast_tokenize` for the rest."""
    out = bulk_tokenize(captions)
    for i in [i for i, t in enumerate(out) if t is None]:
        out[i] = fast_tokenize(captions[i])
    return out


# ---------------------------------------------------------------------------------------------
# The bulk path: the commonest chunk shapes for all captions at once, with numpy over the bytes
# of the joined text (a Python loop over 30,000 captions cost more than all the metrics).
#
# A caption is taken here only when every chunk is: letters; letters + 's; letters + n't (stem
# not ending in n); any of those + one trailing , ; : ! ? or . (a period not after a single
# letter or an abbreviation); or one of the stand-alone drop-list chunks . , ; : ! ? - -- ...;
# and it contains none of the split words (cannot, gonna...) even inside a word. These are
# shapes `fast_tokenize` accepts with the same tokens (a test checks the two agree); every other
# caption goes through `fast_tokenize`, then the slower tiers.

_ABBREV_MAX = max(map(len, ABBREVIATIONS))


def _tail_key(word: bytes) -> int:
    """A word's bytes packed last byte lowest (the order the bulk path reads them backwards)."""
    return sum(c << (8 * k) for k, c in enumerate(reversed(word)))


_ABBREV_KEYS = np.array(sorted(_tail_key(a.encode()) for a in ABBREVIATIONS), dtype=np.int64)
# every split word has a doubled letter (caNNot, goNNa, goTTa, leMMe, giMMe, waNNa): found from those
_SPLIT_DOUBLES = [(w.encode(), next(i for i in range(len(w) - 1) if w[i] == w[i + 1])) for w in SPLIT_WORDS]
_DOUBLED = sorted({w[d] for w, d in _SPLIT_DOUBLES})
_PAD = _ABBREV_MAX + 1  # padding spaces before the text: every backward look stays inside


def _is_sep(x: np.ndarray) -> np.ndarray:
    return (x == ord(" ")) | (x == ord("\n"))


def _is_letter(x: np.ndarray) -> np.ndarray:
    return (x >= ord("a")) & (x <= ord("z"))


def _is_mark(x: np.ndarray) -> np.ndarray:
    """, ; : ! ? or ."""
    out = x == ord(".")
    for c in b",;:!?":
        out |= x == c
    return out


def bulk_tokenize(captions: Sequence[str]) -> list[str | None]:
    """The tokens of every caption of the bulk shapes (see above), None for the others.

    Few whole-text operations (letters and spaces need no rule); the rules run on the other
    bytes only (a few percent of the text) with their neighbours gathered."""
    n = len(captions)
    if n == 0:
        return []
    joined = "\n".join(captions)
    if joined.count("\n") != n - 1 or any(c in joined for c in LINE_BREAKS[:-1]):
        joined = "\n".join(map(clean_line_breaks, captions))
    # spaces around the text, so every neighbour looked at exists; non-ASCII bytes (>= 0x80)
    # match no rule below, so their captions are never taken here
    b = np.frombuffer(b" " * _PAD + joined.encode("utf-8") + b"   ", dtype=np.uint8)
    low = b | (((b >= ord("A")) & (b <= ord("Z"))).view(np.uint8) << 5)
    letter = _is_letter(low)
    space = low == ord(" ")
    special = np.flatnonzero(~(letter | space))  # newlines, marks, apostrophes, anything else
    x = low[special]
    m3, m2, m1, p1, p2, p3 = (low[special + k] for k in (-3, -2, -1, 1, 2, 3))
    newline = x == ord("\n")
    mark = _is_mark(x)
    hyphen = x == ord("-")
    dot = x == ord(".")
    alone = _is_sep(m1) & _is_sep(p1)  # a one-byte chunk
    # a mark right after a letter ends its chunk (a trailing mark); or one of the stand-alone
    # chunks the drop list removes: . , ; : ! ? - -- ...
    trailing = mark & _is_letter(m1) & _is_sep(p1)
    dashes = hyphen & (
        ((p1 == ord("-")) & _is_sep(m1) & _is_sep(p2)) | ((m1 == ord("-")) & _is_sep(m2) & _is_sep(p1))
    )
    dots = dot & (
        (_is_sep(m1) & (p1 == ord(".")) & (p2 == ord(".")) & _is_sep(p3))
        | ((m1 == ord(".")) & _is_sep(m2) & (p1 == ord(".")) & _is_sep(p2))
        | ((m1 == ord(".")) & (m2 == ord(".")) & _is_sep(m3) & _is_sep(p1))
    )
    # the clitics ' s and n ' t, then the chunk ends, or one trailing mark ends it
    ends = _is_sep(p2) | (_is_mark(p2) & _is_sep(p3))
    apos = x == ord("'")
    s_ok = apos & _is_letter(m1) & (p1 == ord("s")) & ends
    nt_ok = apos & (m1 == ord("n")) & _is_letter(m2) & (m2 != ord("n")) & (p1 == ord("t")) & ends
    ok = newline | trailing | ((mark | hyphen) & alone) | dashes | dots | s_ok | nt_ok
    bad_at = [special[~ok]]

    # a period after a single letter or an abbreviation: the lexer may keep it (the chunk rules decide)
    q = special[trailing & dot]
    blen = np.full(len(q), _ABBREV_MAX + 1, dtype=np.int64)  # body length, capped
    key = np.zeros(len(q), dtype=np.int64)
    for k in range(1, _ABBREV_MAX + 2):
        before = low[q - k]
        inside = blen > _ABBREV_MAX
        hit = inside & _is_sep(before)
        blen[hit] = k - 1
        if k <= _ABBREV_MAX:
            key = np.where(inside & ~hit, key | (before.astype(np.int64) << (8 * (k - 1))), key)
    known = _ABBREV_KEYS[np.minimum(np.searchsorted(_ABBREV_KEYS, key), len(_ABBREV_KEYS) - 1)] == key
    bad_at.append(q[(blen == 1) | ((blen <= _ABBREV_MAX) & known)])

    # the split words, even inside a word (the chunk rules decide those captions)
    pair = low[1:] == low[:-1]
    doubled = low[1:] == _DOUBLED[0]
    for c in _DOUBLED[1:]:
        doubled |= low[1:] == c
    maybe = np.flatnonzero(pair & doubled)  # the first byte of each doubled pair
    for w, d in _SPLIT_DOUBLES:
        start = maybe - d
        hit = np.ones(len(maybe), dtype=bool)
        for k, c in enumerate(w):
            hit &= low[np.clip(start + k, 0, len(low) - 1)] == c
        bad_at.append(start[hit])

    # output: letters, apostrophes and newlines (so lines stay aligned); the space before every
    # token but a line's first; and a space inserted before 's and before the n of n't
    nl_at = special[newline]
    sep = space.copy()
    sep[nl_at] = True
    tok_start = np.flatnonzero(sep[:-1] & letter[1:]) + 1
    first = np.searchsorted(tok_start, np.concatenate(([0], nl_at)))
    line_end = np.concatenate((nl_at, [len(low)]))
    has = first < len(tok_start)
    has[has] = tok_start[first[has]] < line_end[has]
    later = np.ones(len(tok_start), dtype=bool)
    later[first[has]] = False
    keep = letter.copy()
    keep[special[apos | newline]] = True
    keep[tok_start[later] - 1] = True
    kept = np.flatnonzero(keep)
    out = low[kept]
    clitic = np.concatenate((special[s_ok], special[nt_ok] - 1))
    if len(clitic):
        out = np.insert(out, np.searchsorted(kept, clitic), ord(" "))
    lines: list[str | None] = list(out.tobytes().decode("ascii").split("\n"))
    if len(lines) != n:
        raise RuntimeError("bulk tokenization lost line alignment")  # cannot happen: \n is kept
    for i in np.unique(np.searchsorted(nl_at, np.concatenate(bad_at))).tolist():
        lines[i] = None
    return lines

