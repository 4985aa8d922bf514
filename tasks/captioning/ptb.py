"""PTB tokenization as pycocoevalcap does it (CoreNLP 3.4.1 PTBTokenizer, -preserveLines -lowerCase,
then its punctuation drop list), in Python; no caption needs Java.

Design: fast exact paths for the common shapes, and the whole lexer for the rest.

* The fast path (`fast_tokenize`) accepts a caption only when every whitespace-separated chunk
  has a shape whose PTB tokenization is known and context-free: ASCII letters (optionally joined
  by hyphens), digit runs, the clitics 's 're 've 'll 'd 'm n't, the six words the lexer splits
  (cannot, gonna, gotta, lemme, gimme, wanna), one trailing , ; : ! ? or . (a period only after a
  word that is not one of the lexer's abbreviations, nor a single letter), and stand-alone
  punctuation tokens of the drop list. It returns None for anything else. Each rule is checked
  against the real jar by `tests/tasks/captioning/test_ptb_differential.py`.
* The bulk path (`_bulk_tokenize`) does the commonest of those shapes (letters, 's, n't, one
  trailing mark, stand-alone drop-list chunks) for all captions at once with numpy over the bytes
  of the joined text, and hands every other caption to `fast_tokenize`; a test checks that it
  agrees with `fast_tokenize` (and so with the jar) on everything it takes.
* The chunk rules (`ptb_chunks.extended_tokenize`, with the lexer's character tables in
  `ptb_chars`) take most captions the fast path leaves: quotes, brackets, Unicode, URLs, emoji,
  abbreviations in context. They cover every real caption of `../shared/realdata`.
* Every other caption (rare shapes: smileys, e-mail addresses, file names, fractions, SGML...)
  goes to `ptb_lexer`, the lexer's whole grammar restated in Python (exact, but the slowest path
  per caption, hence the last).
  `VLBENCH_PTB=jar` sends them to the real jar instead, as a cross-check (`TokenizerUnavailable`
  when it cannot run).

Line separators: the jar splits lines on \\r, \\u2028, \\u2029, \\x0b, \\x0c and \\x85 as well as
\\n, so pycocoevalcap (which only replaces \\n) misaligns every later caption. vlbench replaces all
of them with a space before tokenizing (the same treatment pycocoevalcap gives \\n), on all
paths, and checks that the jar returns exactly one line per caption.

One module: the fast, bulk and jar paths and the dispatcher share the drop list, the line-break
cleaning and the successor rule of pycocoevalcap's file, and `tokenize` chooses among them.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vlbench.errors import UsageError
from vlbench.tasks.captioning.java import JavaUnavailable, java_command, ptb_jar

# Tokens pycocoevalcap drops after tokenizing (exact, case-sensitive: -lrb- etc. survive).
PUNCTUATIONS = frozenset(
    ["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-", "--", "...", ";"]
)

# The lexer's SPACE class (its blanks; ptb_chars.SPACES holds the wide ones).
LEXER_BLANKS = " \t\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u3000"
LINE_BREAKS = "\r\x0b\x0c\x85\u2028\u2029\n"
_LINE_BREAK_TABLE = str.maketrans({c: " " for c in LINE_BREAKS})

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
# the jar. Single letters are handled separately (always the jar).
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


class TokenizerUnavailable(RuntimeError):
    """The PTB jar was asked for (`jar_tokenize`, or `VLBENCH_PTB=jar`) and Java or the jar is missing."""

    def __init__(self, message: str, captions: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.captions = list(captions)  # the captions that needed the jar


def clean_line_breaks(caption: str) -> str:
    return caption.translate(_LINE_BREAK_TABLE)


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
    """The PTB-tokenized, punctuation-stripped caption, or None when the jar is needed."""
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
    out = _bulk_tokenize(captions)
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
# caption goes through `fast_tokenize`, then the jar.

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


def _bulk_tokenize(captions: Sequence[str]) -> list[str | None]:
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

    # a period after a single letter or an abbreviation: the lexer may keep it (the jar decides)
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


def _strip_punctuation(line: str) -> str:
    return " ".join(w for w in line.rstrip().split(" ") if w not in PUNCTUATIONS)


def _run_jar(text: str, timeout: float | None) -> list[str]:
    try:
        jar = ptb_jar()
        java = java_command()
    except JavaUnavailable as exc:
        raise TokenizerUnavailable(str(exc)) from None
    fd, name = tempfile.mkstemp(prefix="vlbench-ptb-", suffix=".txt")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
        cmd = [*java, "-cp", str(jar), "edu.stanford.nlp.process.PTBTokenizer", "-preserveLines", "-lowerCase", name]
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout, check=False)
    finally:
        Path(name).unlink(missing_ok=True)
    if proc.returncode != 0:
        raise TokenizerUnavailable(
            f"the PTB tokenizer jar failed (exit {proc.returncode}): {proc.stderr.decode(errors='replace')[-500:]}"
        )
    lines = proc.stdout.decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _is_blank_line(line: str) -> bool:
    """True when the lexer sees nothing but blanks on the line (its look-ahead runs on past it)."""
    return not line.translate(_LINE_BREAK_TABLE).strip(LEXER_BLANKS)


def jar_tokenize(
    captions: Sequence[str], successors: Sequence[str | None] | None = None, timeout: float | None = None
) -> list[str]:
    """Tokenize with the real CoreNLP 3.4.1 jar, as pycocoevalcap does, line-safe.

    The lexer looks ahead across line ends: "... i." loses its period when the next non-blank
    line starts with a sentence starter ("However ..."); ":)" on the last line of a file without
    a final newline comes out as "-rrb-". pycocoevalcap writes all references (and, separately,
    all candidates) into one file, so a caption's tokens can depend on the captions after it.
    `successors[i]` is the text that follows caption i's line end in pycocoevalcap's file, as
    `pycoco_successors` gives it (None: it is the file's last line); each caption is tokenized
    followed by exactly that text, so the result is the reference's. Without `successors`, the
    captions are taken as one file in their order.
    """
    if not captions:
        return []
    succ = list(successors) if successors is not None else pycoco_successors([captions])
    # a successor that ends with a line end can be followed by other captions' text without
    # changing what the lexer sees; one that reaches the end of the file needs a run of its own
    packed = [i for i, s in enumerate(succ) if s is not None and s.endswith("\n")]
    alone = [i for i, s in enumerate(succ) if s is None or not s.endswith("\n")]
    out: list[str] = [""] * len(captions)
    if packed:
        blocks = [clean_line_breaks(captions[i]) + "\n" + succ[i] for i in packed]  # type: ignore[operator]
        lines = _run_jar("".join(blocks), timeout)
        expected = sum(b.count("\n") for b in blocks)
        if len(lines) != expected:
            raise RuntimeError(f"the PTB tokenizer returned {len(lines)} lines for {expected}; refusing to misalign")
        at = 0
        for i, block in zip(packed, blocks, strict=True):
            out[i] = _strip_punctuation(lines[at])
            at += block.count("\n")
    for i in alone:  # the file's last lines, without a final newline (a few per scoring run)
        text = clean_line_breaks(captions[i]) + ("" if succ[i] is None else "\n" + succ[i])
        lines = _run_jar(text, timeout)
        if len(lines) > text.count("\n") + 1:
            raise RuntimeError("the PTB tokenizer split one caption into several lines; refusing to misalign")
        out[i] = _strip_punctuation(lines[0] if lines else "")
    return out


def pycoco_successors(groups: Sequence[Sequence[str]]) -> list[str | None]:
    """For captions given as the files pycocoevalcap writes (e.g. [candidates, references]), the
    text after each caption's line end in its file, as far as the lexer can look from it: the
    following lines up to the first one that is not blank, with its line end when more lines
    follow (pycocoevalcap writes no final newline); None for a file's last line. Line breaks
    inside captions are already spaces here (`clean_line_breaks`)."""
    out: list[str | None] = []
    for g in groups:
        lines = [clean_line_breaks(x) for x in g]
        n = len(lines)
        # nxt[i]: the first non-blank line at or after i (n: none)
        nxt = [n] * (n + 1)
        for i in range(n - 1, -1, -1):
            nxt[i] = nxt[i + 1] if _is_blank_line(lines[i]) else i
        for i in range(n):
            if i == n - 1:
                out.append(None)
                continue
            j = nxt[i + 1]
            if j == i + 1:  # the common case: the next line is not blank
                out.append(lines[j] + "\n" if j < n - 1 else lines[j])
            elif j == n:
                out.append("\n".join(lines[i + 1 :]))
            else:
                out.append("\n".join(lines[i + 1 : j + 1]) + ("\n" if j < n - 1 else ""))
    return out


def rare_shape_lexer() -> str:
    """Who tokenizes the captions that neither the fast path nor the chunk rules take: "python"
    (`ptb_lexer`, the whole PTB lexer in Python; the default) or "jar" (the CoreNLP jar, a
    cross-check switch: `VLBENCH_PTB=jar`)."""
    choice = os.environ.get("VLBENCH_PTB", "python").strip().lower() or "python"
    if choice not in ("python", "jar"):
        raise UsageError(f"VLBENCH_PTB must be 'python' or 'jar', not {choice!r}")
    return choice


def tokenize(
    captions: Sequence[str], successors: Sequence[str | None] | None = None
) -> tuple[list[str], int]:
    """Tokenize every caption; returns (tokenized strings, number of captions of rare shapes, which
    the whole lexer `ptb_lexer` took, or the jar with `VLBENCH_PTB=jar`).

    `successors`: see `pycoco_successors` (default: the captions are one file, in their order)."""
    from vlbench.tasks.captioning.ptb_chunks import extended_tokenize
    from vlbench.tasks.captioning.ptb_lexer import tokenize_line

    out = fast_tokenize_many(captions)
    rest = [i for i, t in enumerate(out) if t is None]
    if rest and successors is None:
        successors = pycoco_successors([captions])
    for i in rest:
        # the lexer sees the caption followed by its successor text
        out[i] = extended_tokenize(clean_line_breaks(captions[i]), successors[i])  # type: ignore[index]
    slow = [i for i, t in enumerate(out) if t is None]
    if slow and rare_shape_lexer() == "jar":
        succ = None if successors is None else [successors[i] for i in slow]
        try:
            done = jar_tokenize([captions[i] for i in slow], succ)
        except TokenizerUnavailable as exc:
            raise TokenizerUnavailable(str(exc), [captions[i] for i in slow]) from None
        for i, t in zip(slow, done, strict=True):
            out[i] = t
    else:
        for i in slow:
            tokens = tokenize_line(clean_line_breaks(captions[i]), successors[i])  # type: ignore[index]
            # as pycocoevalcap reads the jar's output line (rstrip also takes Unicode blanks that
            # end a URL or e-mail token)
            out[i] = _strip_punctuation(" ".join(tokens))
    return out, len(slow)  # type: ignore[return-value]
