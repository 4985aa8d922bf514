"""The tokens of one chunk of a caption (a run of characters between blanks and stand-alone
characters: `rules.py` cuts the caption), read as

    openers  core  closers

* openers: " ( [ { ` `` ‘ ' -LRB- ..., hyphen runs and leading marks (?travel) before a word
  (`_openers`);
* core: a word, a number, an acronym, a URL... (`cores.core_tokens`; a URL: `_url_tokens`);
* closers: " ) ] } ’ ' and runs of marks, collected from the chunk's end (`_closers`): "!!" "?!"
  stay one kept token, ".." is ". .", "..." and longer are one dropped token; a period right
  after the core is decided by `periods.py` on the core's last token ("a&b." is "a" "&" "b.").

Whole chunks of a known shape (a PTB bracket word, drop-list punctuation, dash runs...) are
answered before that (`_whole_chunk`), and a chunk with a run of hyphens is cut there first
(`_split_at_dashes`). Each step either reads its part or decides the whole chunk: `_Answer`
carries a decision (tokens, or None for a shape that was not measured), so `chunk_tokens` reads
as the order the parts are taken in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vlbench.tasks.captioning.ptb.cores import (
    ACRONYM,
    NUMBER,
    core_tokens,
    is_alnum,
    is_letter,
    punct_run_tokens,
)
from vlbench.tasks.captioning.ptb.lines import PUNCTUATIONS
from vlbench.tasks.captioning.ptb.periods import (
    ABBREVIATION_LIKE,
    KEEP_PERIOD_ANY_CASE,
    KEEP_PERIOD_BEFORE_DIGIT,
    MEASURED_WORDS,
    period_before_closer,
    period_kept,
)

_ALL_DROPPED = re.compile("[`\"'.,;:\\-\u2018\u2019]+\\Z")

_OPEN = {'"': None, "(": "-lrb-", "[": "-lsb-", "{": "-lcb-", "\u201c": None, "`": None}
_CLOSE = {'"': None, ")": "-rrb-", "]": "-rsb-", "}": "-rcb-", "\u201d": None}
_QUOTE_CLOSE_SINGLE = {"'", "\u2019"}
_DASHES = "-\u2013\u2014"
_APOSTROPHE_WORDS = ("em", "tis", "twas", "cause", "til", "n")
_CLITIC_END = re.compile(r"(?:n't|'s|'re|'ve|'ll|'d|'m)\Z")


_SMILEY = re.compile(r"[:;=][-o*']?(?:[()\\{}@|\[\]]|[dpo](?![a-z]))", re.IGNORECASE)
_BRACKET_WORD = re.compile(r"-(?:LRB|RRB|LSB|RSB|LCB|RCB)-", re.IGNORECASE)


_LONE_BRACKETS = {"(": "-lrb-", ")": "-rrb-", "[": "-lsb-", "]": "-rsb-", "{": "-lcb-", "}": "-rcb-", '"': "''"}
# The lexer's URL rules (FULLURL and the www. form of LIKELYURL), as measured: a URL is the
# longest prefix that matches; "www.x.com/a" has no path (the path needs two characters).
_FULL_URL = re.compile(r"https?://[^\s\"<>|()]+[^\s\"<>|.!?(){},-]", re.IGNORECASE)
_WWW_URL = re.compile(
    r"www\.(?:[^\s\"<>|.!?(){},]+\.)+[a-z]{2,4}(?:/[^\s\"<>|()]+[^\s\"<>|.!?(){},-])?", re.IGNORECASE
)


_AFTER_URL = re.compile(r"[.,;:!?\"')\]}]*")
URL_START = re.compile(r"https?:|www\.", re.IGNORECASE)


def _url_prefix(s: str) -> str:
    """The longest prefix of `s` that is a URL to the lexer ("" when none, or when the chunk
    holds characters the URL rules were not measured with)."""
    low = s[:8].lower()
    if low.startswith(("http://", "https://")):
        pattern = _FULL_URL
    elif low.startswith("www."):
        pattern = _WWW_URL
    else:
        return ""
    if not s.isascii() or "@" in s or "'" in s or "`" in s:
        return ""
    for end in range(len(s), 0, -1):
        if pattern.fullmatch(s, 0, end):
            return s[:end]
    return ""


def _split_at_dashes(chunk: str, following: str | None) -> list[str] | None:
    """A chunk with a run of two or more hyphens: the lexer cuts it there ("a--b" is "a" "--"
    "b", "gonna--" is "gon" "na" "--"); each piece is then a chunk of its own."""
    out: list[str] = []
    pos = 0
    for m in re.finditer(r"-{2,}", chunk):
        before, after = chunk[m.start() - 1 : m.start()], chunk[m.end() : m.end() + 1]
        if (before and not is_alnum(before)) or (after and not (is_alnum(after) or after in ".,;:!?")):
            return None  # measured between words and numbers only: "(--)" is one token to the lexer
        if m.start() > pos:
            toks = chunk_tokens(chunk[pos : m.start()], chunk[m.start() :] + (following or ""))
            if toks is None:
                return None
            out.extend(toks)
        out.append("--")
        pos = m.end()
    if pos < len(chunk):
        toks = chunk_tokens(chunk[pos:], following)
        if toks is None:
            return None
        out.extend(toks)
    return out


@dataclass(frozen=True)
class _Answer:
    """A chunk decided before its core is read: its tokens, or None (a shape not measured)."""

    tokens: list[str] | None


def chunk_tokens(chunk: str, following: str | None) -> list[str] | None:
    """The lower-cased PTB tokens of one chunk, before the punctuation drop; None when the chunk
    is not a recognised shape. `following`: the text after the chunk on its line, then a line
    end and the next line (None: the chunk ends the file)."""
    whole = _whole_chunk(chunk, following)
    if whole is not None:
        return whole.tokens
    out: list[str] = []
    s = _openers(chunk, out)
    if s is None:
        return None
    url = _url_prefix(s)
    if url:
        return _url_tokens(chunk, s, url, out, following)
    if s in _LONE_BRACKETS:
        return [*out, _LONE_BRACKETS[s]]  # "()"
    closed = _closers(s, out, following)
    if isinstance(closed, _Answer):
        return closed.tokens
    core, tail = closed
    if not core or not core_tokens(core, out):
        return None
    out.extend(reversed(tail))
    return out


def _whole_chunk(chunk: str, following: str | None) -> _Answer | None:
    """The chunks whose shape decides them whole (None: read its openers, core and closers)."""
    if _BRACKET_WORD.fullmatch(chunk):
        return _Answer([chunk.lower()])  # -LRB- and the like: kept, lower-cased (the drop list is upper case)
    if chunk in PUNCTUATIONS or chunk in ("--", "...", "&", "$", "#", "%", "=", "+", "/", "_"):
        return _Answer([chunk])
    if _ALL_DROPPED.match(chunk):
        return _Answer([])  # quotes, commas, periods and hyphens only: every token is in the drop list
    if _SMILEY.search(chunk):
        return _Answer(None)  # ":)" is one token to the lexer (":-rrb-", kept); emoticons were not measured
    if all(c in _DASHES for c in chunk):
        return _Answer(["--"] if len(chunk) > 1 or chunk != "-" else ["-"])
    bracket_word = _BRACKET_WORD.match(chunk)
    if bracket_word is not None:
        # "-LRB--": the bracket word first (before any cut at "--"), then the rest as a chunk
        rest = chunk_tokens(chunk[5:], following)
        return _Answer(None if rest is None else [bracket_word.group(0).lower(), *rest])
    if chunk in _LONE_BRACKETS:
        return _Answer([_LONE_BRACKETS[chunk]])
    if all(c in ".,;:!?" for c in chunk):
        sub: list[str] = []
        return _Answer(sub if punct_run_tokens(chunk, sub) else None)  # "!!" "?!?" are kept tokens
    if "--" in chunk:
        if _BRACKET_WORD.search(chunk):
            return _Answer(None)  # "[-LRB--": where the lexer cuts was not measured
        return _Answer(_split_at_dashes(chunk, following))
    return None


def _openers(s: str, out: list[str]) -> str | None:
    """Takes the openers off the chunk's start (their tokens into `out`); the rest, or None when
    an opener's shape was not measured."""
    while s:
        c = s[0]
        bracket_word = _BRACKET_WORD.match(s)
        if bracket_word is not None and len(s) > 5:
            out.append(bracket_word.group(0).lower())  # "-LRB-cat": the PTB bracket word, then cat
            s = s[5:]
        elif c in _OPEN and len(s) > 1:
            if c == "`" and s[:2] == "``":
                s = s[2:]
                continue
            tok = _OPEN[c]
            if tok is not None:
                out.append(tok)
            s = s[1:]
        elif c == "\u2018" and len(s) > 1 and (is_letter(s[1]) or (s[1].isascii() and s[1].isdigit())):
            s = s[1:]
        elif c == "'" and len(s) > 1 and s[1].isascii() and s[1].isdigit():
            if s[2:3].isdigit():
                return None  # "'70", "'70s" stay one token; longer digit runs were not measured
            s = s[1:]  # "'5" is "'" "5"
        elif c == "'" and len(s) > 1 and s[1].isascii() and s[1].isalpha():
            rest = s[1:].lower()
            word = re.match(r"[a-z]+", rest).group(0)  # type: ignore[union-attr]
            if word in ("s", "m", "d", "re", "ve", "ll"):
                break  # a clitic: the core rule takes it
            if any(word.startswith(a) for a in _APOSTROPHE_WORDS):
                return None
            s = s[1:]
        elif c in ".,;:!?" and len(s) > 1:
            # leading marks ("?travel", "..dog"): split off before a letter; before a digit only
            # ! and ?, since ".5" ",5" ":5" are numbers
            j = 0
            while j < len(s) and s[j] in ".,;:!?":
                j += 1
            if j == len(s) or not (is_letter(s[j]) or (s[j].isascii() and s[j].isdigit() and s[j - 1] in "!?")):
                if j < len(s) and all(x in _CLOSE for x in s[j:]):
                    break  # "(.)": the closers, then these marks, are taken below
                return None
            if not punct_run_tokens(s[:j], out):
                return None
            s = s[j:]
        elif c in _DASHES and len(s) > 1:
            j = 0
            while j < len(s) and s[j] in _DASHES:
                j += 1
            if j == len(s) or not is_letter(s[j]):
                return None
            out.append("-" if s[:j] == "-" else "--")
            s = s[j:]
        else:
            break
    return s


def _url_tokens(chunk: str, s: str, url: str, out: list[str], following: str | None) -> list[str] | None:
    """A URL is one token, as long as the lexer's URL rules match; what follows is another chunk.
    `s`: the chunk after its openers (`out`), starting with `url`."""
    if not chunk[: len(chunk) - len(s)].isascii():
        return None  # "\u2018www.x.com": the URL rules take in the curly quote
    if not _AFTER_URL.fullmatch(s, len(url)):
        return None  # the lexer's URL rules may run on ("www.x.com-RRB-" is "www.x.com-rrb" "-")
    rest = chunk_tokens(s[len(url):], following) if len(url) < len(s) else []
    if rest is None:
        return None
    return [*out, url.lower(), *rest]


def _closers(s: str, out: list[str], following: str | None) -> _Answer | tuple[str, list[str]]:
    """Takes the closers off the end of `s` (the chunk after its openers, whose tokens are in
    `out`): the core that is left and the closers' tokens (last first), or the chunk decided."""
    tail: list[str] = []
    while s:
        c = s[-1]
        if c in _CLOSE and len(s) > 1:
            tok = _CLOSE[c]
            tail.append(tok if tok is not None else "''")
            s = s[:-1]
        elif c == "/" and len(s) > 1 and is_alnum(s[-2]):
            tail.append("/")
            s = s[:-1]
        elif s.endswith("``") and len(s) > 2 and is_letter(s[-3]):
            tail.append("``")
            s = s[:-2]
        elif c in _QUOTE_CLOSE_SINGLE and len(s) > 1 and s[-2].isascii() and s[-2].isdigit():
            tail.append("'")  # "5'" "1,000'": the apostrophe splits off
            s = s[:-1]
        elif c in _QUOTE_CLOSE_SINGLE and len(s) > 2 and s[-2] in ".,;:!?":
            tail.append("'")
            s = s[:-1]
        elif c in _QUOTE_CLOSE_SINGLE and len(s) == 2 and s[0].isascii() and s[0].isalpha():
            # one letter and an apostrophe: "l'" "d'" "j'" are words to the lexer, "o'" "x'" split
            if s[0] in "lLdDjJ":
                if c != "'":
                    return _Answer(None)
                out.append(s.lower())
                out.extend(reversed(tail))
                return _Answer(out)
            tail.append("'")
            s = s[:-1]
        elif c in _QUOTE_CLOSE_SINGLE and len(s) > 2 and is_letter(s[-2]):
            stem = re.search(r"[^\W\d_]+\Z", s[:-1])
            if stem is None or stem.group(0).lower() in ("somethin", "ol", "dunkin"):
                return _Answer(None)
            if (len(stem.group(0)) < 2 and not re.fullmatch(r"[A-Za-z0-9]+-?[A-Za-z]", s[:-1])
                    and not _CLITIC_END.search(s[:-1].lower().replace("\u2019", "'"))):
                return _Answer(None)  # "x-o'" and "5l'" split; other one-letter endings were not measured
            if s[:-1].lower().endswith("n") and "'" in s[:-1]:
                return _Answer(None)
            tail.append("'")
            s = s[:-1]
        elif c in ".,;:!?":
            j = len(s)
            while j > 0 and s[j - 1] in ".,;:!?":
                j -= 1
            marks = _closing_marks(s[:j], s[j:], out, tail, following)
            if isinstance(marks, _Answer):
                return marks
            s = s[:j]
            tail.extend(reversed(marks))
        else:
            break
    return s, tail


def _closing_marks(s: str, run: str, out: list[str], tail: list[str],
                   following: str | None) -> _Answer | list[str]:
    """A run of . , ; : ! ? that ends `s` (before the closers in `tail`): its tokens, or the
    chunk decided (a period taken into the word before it, or a shape not measured)."""
    if not s:
        # marks right after the openers ("(.)", "(?!)"): their own tokens
        sub: list[str] = []
        if not punct_run_tokens(run, sub):
            return _Answer(None)
        return _Answer([*out, *sub, *reversed(tail)])
    if run[0] == "." and run != "." and is_alnum(s[-1]):
        several = _periods_after_word(s, run, out, tail)
        if several is not None:
            return several
    if run[0] == "." and not run.startswith(".."):
        # a period right after the core: context decides on abbreviations
        if run == "." and not is_alnum(s[-1]):
            return ["."]  # after a closing quote or bracket ('way".'): always split off
        if run == ".":
            return _period_after_core(s, out, tail, following)
        if run[1] in ",;" and s.isascii() and s.isalpha() and len(s) > 1:
            # "dog.," keeps the period on the word; not measured after abbreviations
            if s.lower() in MEASURED_WORDS:
                return _Answer(None)
            sub = []
            if not punct_run_tokens(run[1:], sub):
                return _Answer(None)
            out.append(s.lower() + ".")
            out.extend(reversed(tail))
            out.extend(reversed(sub))
            return _Answer(out)
    sub = []
    if not punct_run_tokens(run, sub):
        return _Answer(None)
    return sub


def _periods_after_word(s: str, run: str, out: list[str], tail: list[str]) -> _Answer | None:
    """"ph.d...", "st...", "i..", "a&b...": the lexer may take a period of the run into the word
    (None: it does not; the run is read as marks)."""
    toks_before: list[str] = []
    if not core_tokens(s, toks_before) or not toks_before:
        return _Answer(None)
    last = toks_before[-1]
    if set(run) == {"."} and not tail and (
        (len(last) == 1 and last.isascii() and last.isalpha())
        or last in KEEP_PERIOD_ANY_CASE or ACRONYM.match(last)
    ):
        # "x..", "St...", "t.v...": the first period stays on the word, whatever
        # follows (the look-ahead sees a period); the rest are their own tokens
        sub: list[str] = []
        if not punct_run_tokens(run[1:], sub):
            return _Answer(None)
        return _Answer([*out, *toks_before[:-1], last + ".", *sub])
    if last in KEEP_PERIOD_BEFORE_DIGIT and len(run) >= 3 and set(run) == {"."} and not tail:
        return _Answer([*out, *toks_before, "..."])  # "no..." is "no" "..."
    if "." in last or len(last) == 1 or last in ABBREVIATION_LIKE:
        return _Answer(None)
    return None


def _period_after_core(s: str, out: list[str], tail: list[str], following: str | None) -> _Answer | list[str]:
    """One period right after a word or number: kept on the core's last token (the chunk is
    decided), or its own token. That token decides ("a&b." is "a" "&" "b."), as the lexer
    matches an abbreviation from a token's start."""
    toks: list[str] = []
    if not core_tokens(s, toks) or not toks:
        return _Answer(None)
    last = s[-len(toks[-1]):]
    if last.lower().replace("\u2019", "'") != toks[-1].replace("\u2019", "'"):
        return _Answer(None)
    kept = period_before_closer(last) if tail else period_kept(last, following)
    if kept is None:
        if not last.replace("-", "").isalpha() or not all(is_letter(x) for x in last.replace("-", "")):
            # digits, symbols: the period splits (measured for numbers and words)
            if not NUMBER.match(last) and not re.fullmatch(r"[a-z0-9]+", last.lower()):
                return _Answer(None)
        else:
            return _Answer(None)
    if kept:
        out.extend(toks[:-1])
        out.append(toks[-1] + ".")
        out.extend(reversed(tail))
        return _Answer(out)
    return ["."]
