"""PTB tokenization as pycocoevalcap does it (CoreNLP 3.4.1 PTBTokenizer, -preserveLines -lowerCase,
then its punctuation drop list), in Python.

Design: an exact fast path plus the jar as a fallback.

* The fast path (`fast_tokenize`) accepts a caption only when every whitespace-separated chunk
  has a shape whose PTB tokenization is known and context-free: ASCII letters (optionally joined
  by hyphens), digit runs, the clitics 's 're 've 'll 'd 'm n't, the six words the lexer splits
  (cannot, gonna, gotta, lemme, gimme, wanna), one trailing , ; : ! ? or . (a period only after a
  word that is not one of the lexer's abbreviations, nor a single letter), and stand-alone
  punctuation tokens of the drop list. It returns None for anything else. Each rule is checked
  against the real jar by `tests/tasks/captioning/test_ptb_differential.py`.
* Every other caption goes to the real jar (one JVM for all of them in a run). When the jar is
  not available, the caption is an error (`TokenizerUnavailable`), never a silent approximation.

Line separators: the jar splits lines on \\r, \\u2028, \\u2029, \\x0b, \\x0c and \\x85 as well as
\\n, so pycocoevalcap (which only replaces \\n) misaligns every later caption. vlbench replaces all
of them with a space before tokenizing (the same treatment pycocoevalcap gives \\n), on both
paths, and checks that the jar returns exactly one line per caption.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tasks.captioning.java import JavaUnavailable, java_command, ptb_jar

# Tokens pycocoevalcap drops after tokenizing (exact, case-sensitive: -lrb- etc. survive).
PUNCTUATIONS = frozenset(
    ["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-", "--", "...", ";"]
)

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
    """A caption needs the PTB jar, and Java or the jar is missing."""


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


def fast_tokenize(caption: str) -> str | None:
    """The PTB-tokenized, punctuation-stripped caption, or None when the jar is needed."""
    caption = clean_line_breaks(caption)
    if not _ALLOWED.match(caption):
        return None
    out: list[str] = []
    for chunk in caption.lower().split():
        if "n't" in chunk:
            m = _NT.match(chunk)
            # "mann't" is not split the usual way by the lexer: stems ending in n go to the jar.
            if m is None or m.group(1).endswith("n"):
                return None
            out.append(m.group(1))
            out.append("n't")
            continue
        if not _chunk_tokens(chunk, out):
            return None
    return " ".join(out)


# Letters and spaces, optionally one final period: most captions, decided without the chunk rules.
_SIMPLE = re.compile(r"[A-Za-z ]+\.?\Z")
_SPLIT_SET = frozenset(SPLIT_WORDS)


def fast_tokenize_many(captions: Sequence[str]) -> list[str | None]:
    """`fast_tokenize` of every caption, with a shortcut for the common shape (same results)."""
    out: list[str | None] = []
    append = out.append
    simple = _SIMPLE.match
    for c in captions:
        if simple(c):
            low = c.lower()
            period = low[-1] == "."
            toks = (low[:-1] if period else low).split()
            if (
                toks
                and _SPLIT_SET.isdisjoint(toks)
                and not (period and (len(toks[-1]) == 1 or toks[-1] in ABBREVIATIONS))
            ):
                append(" ".join(toks))
                continue
        append(fast_tokenize(c))
    return out


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


def jar_tokenize(
    captions: Sequence[str], successors: Sequence[str | None] | None = None, timeout: float | None = None
) -> list[str]:
    """Tokenize with the real CoreNLP 3.4.1 jar, as pycocoevalcap does, line-safe.

    The lexer looks ahead across the line end: "... I." keeps its period when the next line
    starts with a lower-case letter and loses it before a capital; ":)" on the last line of a
    file without a final newline comes out as "-rrb-". pycocoevalcap writes all references (and,
    separately, all candidates) into one file, so a caption's tokens can depend on the caption
    after it. `successors[i]` is the line that follows caption i in pycocoevalcap's file (None:
    it is the file's last line); each caption is tokenized followed by exactly that line, so the
    result is the reference's. Without `successors`, each caption is followed by an empty line.
    """
    if not captions:
        return []
    succ = list(successors) if successors is not None else [""] * len(captions)
    paired = [i for i, s in enumerate(succ) if s is not None]
    last = [i for i, s in enumerate(succ) if s is None]
    out: list[str] = [""] * len(captions)
    if paired:
        text = "".join(
            clean_line_breaks(captions[i]) + "\n" + clean_line_breaks(succ[i] or "") + "\n" for i in paired
        )
        lines = _run_jar(text, timeout)
        if len(lines) != 2 * len(paired):
            raise RuntimeError(
                f"the PTB tokenizer returned {len(lines)} lines for {2 * len(paired)}; refusing to misalign"
            )
        for k, i in enumerate(paired):
            out[i] = _strip_punctuation(lines[2 * k])
    for i in last:  # a file's last line, without a final newline (at most two per scoring run)
        lines = _run_jar(clean_line_breaks(captions[i]), timeout)
        if len(lines) > 1:
            raise RuntimeError("the PTB tokenizer split one caption into several lines; refusing to misalign")
        out[i] = _strip_punctuation(lines[0] if lines else "")
    return out


def pycoco_successors(groups: Sequence[Sequence[str]]) -> list[str | None]:
    """For captions given as the files pycocoevalcap writes (e.g. [candidates, references]), the
    line after each caption in its file, None for a file's last line."""
    out: list[str | None] = []
    for g in groups:
        out.extend(g[1:])
        if g:
            out.append(None)
    return out


def tokenize(
    captions: Sequence[str], successors: Sequence[str | None] | None = None
) -> tuple[list[str], int]:
    """Tokenize every caption; returns (tokenized strings, number of captions that needed the jar).

    `successors`: see `jar_tokenize` (only the captions that need the jar use it)."""
    out = fast_tokenize_many(captions)
    slow = [i for i, t in enumerate(out) if t is None]
    if slow:
        succ = None if successors is None else [successors[i] for i in slow]
        done = jar_tokenize([captions[i] for i in slow], succ)
        for i, t in zip(slow, done, strict=False):
            out[i] = t
    return out, len(slow)  # type: ignore[return-value]
