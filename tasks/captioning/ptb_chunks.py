"""PTB tokenization of the captions the fast path leaves (quotes, brackets, accents, numbers,
symbols, abbreviations, URLs, emoji, other scripts), in Python.

CoreNLP 3.4.1's PTBLexer is a JFlex grammar of a few hundred rules; this module does not port it.
It recognises a closed set of shapes whose tokens were established by running the jar, and returns
None for anything else, which then goes to the jar (or, without Java, is refused). The tests check
every answer against the jar: all 42,657 real captions of `../shared/realdata`, generated hard
cases, realistic captions with users' edits (`tests/tasks/captioning/test_ptb_chunks.py`), and
the character tables (`test_ptb_chars.py`).

A caption is first cut at blanks and at characters that stand alone (`_pieces`, using the
measured tables of `ptb_chars`: symbols are tokens, deleted characters and emoji cut tokens,
dashes, ellipses and guillemets are dropped tokens). Each remaining chunk is

    openers  core  closers

* openers: " ( [ { ` `` ‘ ' -LRB- ..., hyphen runs and leading marks (?travel) before a word;
* core: a word of letters (the lexer's letter table) and digits joined by single hyphens,
  underscores or slashes, with internal periods between letters ("pole.a" is one token); a number
  with , . : between digit runs, maybe followed by letters ("6:40pm"); an acronym "t.v"; <tag>;
  clitics ('s n't ...); apostrophes inside words; capital AT&T; @user, #tag; URLs; or symbols
  $ # % & = + ; * which the lexer splits off;
* closers: " ) ] } ’ ' and punctuation runs: "!!" "?!" stay one kept token, ".." is ". .",
  "..." and longer are one dropped token.

A period right after a word is the context-dependent case: decided on the chunk's last token, the
lexer keeps it on abbreviations ("st.", "inc.", acronyms "t.v.") whatever follows, on single
letters unless one of SENTENCE_STARTERS follows capitalised after blanks and line ends, and on
"no." "nos." "prop." only before a digit at most one blank away.

One module, though long: it is one grammar (openers, core, closers and the period rule decide
each other's tokens within a chunk), and each rule has to be read next to the others to be checked
against the jar's answers.
"""

from __future__ import annotations

import re

from vlbench.tasks.captioning.ptb import ABBREVIATIONS, PUNCTUATIONS, SPLIT_WORDS, fast_chunk_tokens
from vlbench.tasks.captioning.ptb_chars import (
    DELETE,
    DROPPED,
    DROPPED_TOKENS,
    LETTER,
    SPACE,
    SPACES,
    SYMBOL,
    char_class,
)

_BLANKS = " \t" + "".join(sorted(SPACES))  # the lexer's blanks (its sentence-end look-ahead)
_FAST_CHUNK = re.compile(r"[A-Za-z0-9'.,;:!?\-]+\Z")  # the characters the fast path's shapes use

# Words that keep a following period in every context (all of lower, Capitalised and UPPER case),
# measured with the jar over the abbreviation list of `ptb.ABBREVIATIONS`.
KEEP_PERIOD_ANY_CASE = frozenset(
    ["adj", "adm", "adv", "al", "ala", "alex", "apr", "ariz", "assn", "asst", "atty", "attys", "aug", "ave", "bancorp", "bhd", "bldg", "blvd", "brig", "bros", "calif", "capt", "cf", "cie", "cmdr", "co", "col", "colo", "comdr", "conn", "corp", "cos", "cpl", "ct", "dak", "dec", "dept", "det", "dr", "drs", "ens", "esq", "est", "etc", "ext", "feb", "fla", "fri", "ft", "ga", "gen", "gov", "govs", "hon", "inc", "ind", "insp", "intl", "jan", "jos", "jr", "jul", "jun", "kan", "kans", "ky", "lieut", "lt", "ltd", "maj", "mar", "md", "messrs", "mich", "minn", "mlle", "mme", "mo", "mon", "mont", "mr", "mrs", "ms", "msgr", "mt", "neb", "nev", "nov", "oct", "okla", "penn", "pfc", "ph", "plc", "pres", "prof", "profs", "pvt", "rd", "rep", "reps", "rev", "rt", "sen", "sens", "sep", "sept", "seq", "sfc", "sgt", "spc", "sq", "sr", "st", "ste", "supt", "supts", "sys", "tel", "tenn", "thu", "thurs", "treas", "tue", "tues", "univ", "va", "vs", "vt", "wed", "wis", "wm", "wyo"]
)
# Case-sensitive ones (the lexer's [A]rk, [M]ass...: the lower-case word is a plain word).
KEEP_PERIOD_CASED = frozenset(
    ["Ark", "ARK", "Az", "AZ", "Del", "DEL", "Ill", "ILL", "La", "LA", "Mass", "MASS", "Miss", "MISS", "Ore", "ORE", "Pa", "PA", "pte", "Pte", "ptes", "Ptes", "pty", "Pty", "ptys", "Ptys", "Tex", "TEX", "Wash", "WASH"]
)
# Kept only before a number ("no. 5").
KEEP_PERIOD_BEFORE_DIGIT = frozenset(["no", "nos", "prop"])
# Abbreviation-like words whose behaviour was only measured in these three cases.
_MEASURED_WORDS = (
    KEEP_PERIOD_ANY_CASE
    | {w.lower() for w in KEEP_PERIOD_CASED}
    | KEEP_PERIOD_BEFORE_DIGIT
    | frozenset(["ark", "az", "del", "ed", "ill", "la", "mass", "mdr", "miss", "mlles", "mm", "mmes", "ore", "pa", "pte", "ptes", "pty", "ptys", "sat", "sun", "tex", "wash", "fed"])
)

_ABBREVIATION_LIKE = ABBREVIATIONS | _MEASURED_WORDS

_FILE_EXTENSIONS = frozenset(
    ["bat", "bmp", "bz2", "c", "class", "cgi", "cpp", "dll", "doc", "docx", "exe", "gif", "gz", "h", "htm", "html", "jar", "java", "jpeg", "jpg", "mov", "mp3", "mp4", "mpg", "pdf", "php", "pl", "png", "ppt", "ps", "py", "sql", "tar", "txt", "wav", "x", "xml", "zip", "3gp", "wmv", "wma", "avi", "flv", "com", "net", "org", "edu"]
)
_ALL_DROPPED = re.compile("[`\"'.,;:\\-\u2018\u2019]+\\Z")

_OPEN = {'"': None, "(": "-lrb-", "[": "-lsb-", "{": "-lcb-", "\u201c": None, "`": None}
_CLOSE = {'"': None, ")": "-rrb-", "]": "-rsb-", "}": "-rcb-", "\u201d": None}
_QUOTE_CLOSE_SINGLE = {"'", "\u2019"}
_DASHES = "-\u2013\u2014"

# Letters whose lower case Java and Python agree on: Unicode letters (L*), except the few with
# special or context-dependent lower-casing (dotted I, capital sigma) and titlecase digraphs.
_ODD_LETTERS = frozenset("\u0130\u03a3\u01c4\u01c5\u01c6\u01c7\u01c8\u01c9\u01ca\u01cb\u01cc\u01f1\u01f2\u01f3")


def _is_letter(c: str) -> bool:
    if c.isascii():
        return c.isalpha()
    return char_class(c) == LETTER and c not in _ODD_LETTERS and len(c.lower()) == 1


def _is_alnum(c: str) -> bool:
    return (c.isascii() and c.isdigit()) or _is_letter(c)


_WHOLE_APOSTROPHE_WORDS = frozenset(["o'clock"])
_CLITICS = ("'s", "'re", "'ve", "'ll", "'d", "'m")
_APOSTROPHE_WORDS = ("em", "tis", "twas", "cause", "til", "n")
_NUMBER = re.compile(r"[0-9]+(?:[.:,][0-9]+)*\Z")
_ACRONYM = re.compile(r"[a-z](?:\.[a-z])+\Z")
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
    if _NUMBER.match(low):
        out.append(low)
        return True
    if _ACRONYM.match(low):
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
    if not all(all(_is_alnum(c) for c in r) for r in runs):
        return False
    # letters only around periods ("pole.a", "blanket.cake"); digits there split in odd ways
    if "." in seps and (seps != {"."} or not all(all(_is_letter(c) for c in r) for r in runs)):
        return False
    if "." in seps and (runs[0] == "www" or runs[-1] in ("com", "net", "org", "edu")):
        return False  # URLs: the lexer's URL rules were not measured
    out.append(low)
    return True


_CLITIC_END = re.compile(r"(?:n't|'s|'re|'ve|'ll|'d|'m)\Z")
_UPPER_JOINED = re.compile(r"[A-Z]+(?:[+&][A-Z]+)+")
_HANDLE = re.compile(r"@[A-Za-z][A-Za-z0-9]*|#[A-Za-z]+")


def _apostrophe_split(word: str, out: list[str]) -> bool:
    """Letters joined by apostrophes ("black'blue"): the words, the quotes being dropped, or
    False where one of the lexer's apostrophe-word rules may keep a piece whole."""
    pieces = word.split("'")
    for left, right in zip(pieces, pieces[1:], strict=False):
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


def _core_tokens(core: str, out: list[str]) -> bool:
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
            elif piece and not _core_tokens(piece, out):
                return False
        return True
    # clitics after a letter word: dog's, don't, we're (’ is the lexer's apostrophe too)
    norm = low.replace("\u2019", "'")
    for clitic in _CLITICS:
        if norm.endswith(clitic) and len(norm) > len(clitic):
            stem = norm[: -len(clitic)]
            # after letters or digits ("dog's", "70's", "x1's", "70're", "thàt's"); "'70s" keeps its quote
            if (all(_is_alnum(ch) for ch in stem) or _NUMBER.match(stem)) and stem not in SPLIT_WORDS:
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
    if norm in _CLITICS:
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
            if sym in ",:" and _NUMBER.match(low.replace(",", "0").replace(":", "0")) is None:
                # between letters a comma or colon splits; next to digits it is a number (or odd)
                if any(p[:1].isdigit() for p in pieces[1:]) or any(p[-1:].isdigit() for p in pieces[:-1]):
                    return False
            elif sym in ",:":
                break  # a number: handled by the word rule below
            for k, p in enumerate(pieces):
                if k:
                    out.append(sym)
                if not _core_tokens(p, out):
                    return False
            return True
    return _word_tokens(core, out)


def _punct_run_tokens(run: str, out: list[str]) -> bool:
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


# After a one-letter word ("i."), the lexer splits the period off only before a likely sentence
# start: its rule `{ACRONYM}/({SPACENLS})(starter|{SGML}){SPACENL}` (PTBLexer.flex of CoreNLP
# 3.4.x, checked against the 3.4.1 jar). The starter's first letter is a case-sensitive class
# ([H]owever) and the rest is caseless (so "HOWEVER", "HoWever", and Unicode case variants such as
# "ſ" for s or "ı" for i match, as Python's (?i) does); the blanks before it may run over any
# number of lines; it must be followed by a blank or a line end (at the end of the file it is not).
SENTENCE_STARTERS = (
    "About", "According", "Additionally", "After", "An", "A", "As", "At", "But", "Earlier", "He", "Her", "Here",
    "However", "If", "In", "It", "Last", "Many", "More", "Mr.", "Ms.", "Now", "Once", "One", "Other", "Our",
    "She", "Since", "So", "Some", "Such", "That", "The", "Their", "Then", "There", "These", "They", "This",
    "We", "When", "While", "What", "Yet", "You",
)
_SPACENL = "[ \t\u00a0\u2000-\u200a\u3000\n\r\x0b\x0c\x85\u2028\u2029]"
# The lexer's SGML macro (caseless; [A-Za-z] classes make that moot): <tag attr='v'>, </tag>, <!x>.
_SGML = (
    r"<(?:[!?][A-Za-z\-][^>\r\n]*"
    r"|[A-Za-z][A-Za-z0-9_:.\-]*(?: +(?:[A-Za-z][A-Za-z0-9_:.\-]*"
    r"|[A-Za-z][A-Za-z0-9_:.\-]* *= *(?:'[^']*'|\"[^\"]*\")))* */?"
    r"|/[A-Za-z][A-Za-z0-9_:.\-]*) *>"
)
_SENTENCE_START = re.compile(
    _SPACENL + "+(?:"
    + "|".join(re.escape(w[0]) + "(?i:" + re.escape(w[1:]) + ")" if len(w) > 1 else w for w in SENTENCE_STARTERS)
    + "|" + _SGML + ")" + _SPACENL
)
_SGML_OPEN = re.compile(_SPACENL + "+<")


def _period_kept(word: str, following: str | None) -> bool | None:
    """Whether "word." keeps its period, given the text after it in the lexer's input (the rest
    of the line, then the successor text of `ptb.pycoco_successors`; None: end of file); None
    when this was not measured."""
    low = word.lower()
    if _ACRONYM.match(low):
        return True
    if "." in word:
        # "blanket.cake." splits its period; "ph.d." and file names ("x.jpg.") were not measured
        segments = low.split(".")
        if all(len(x) >= 2 for x in segments) and segments[-1] not in _FILE_EXTENSIONS and low not in _ABBREVIATION_LIKE:
            return False
        return None
    if len(word) == 1:
        if not word.isascii() or not word.isalpha():
            return None
        if following is None:
            return True
        if _SENTENCE_START.match(following):
            return False
        tag = _SGML_OPEN.match(following)
        if tag and following.endswith("\n") and ("'" in following[tag.end():] or '"' in following[tag.end():]):
            # a tag's quoted attribute may run on over lines beyond the one seen here (the text
            # ends with a line end only where the successor text was cut: pycocoevalcap's files
            # have no final newline); without quotes a tag cannot cross a line end
            return None
        return True
    cases = (low, low[:1].upper() + low[1:], low.upper())
    if word not in cases:
        return None if low in _MEASURED_WORDS else False
    if low in KEEP_PERIOD_ANY_CASE or word in KEEP_PERIOD_CASED:
        return True
    if low in KEEP_PERIOD_BEFORE_DIGIT:
        if following is None:
            return False
        # a digit right after the period, or after one blank or line end ("no.  5" splits)
        nxt = following[1:2] if following[:1] in _BLANKS + "\n" else following[:1]
        return nxt.isascii() and nxt.isdigit()
    return False


def _period_before_closer(word: str) -> bool | None:
    """Whether "word." keeps its period when a closing quote or bracket follows at once (the
    lexer's sentence-end look-ahead needs a blank there, so only the word matters)."""
    low = word.lower().replace("\u2019", "'")
    if (len(word) == 1 and word.isascii() and word.isalpha()) or _ACRONYM.match(low):
        return True
    if low in _CLITICS or low == "n't":
        return False  # 'there's."' is "there" "'s" "." "''"
    if low in KEEP_PERIOD_ANY_CASE:
        return True
    if low in KEEP_PERIOD_BEFORE_DIGIT:
        return False
    if low in _MEASURED_WORDS or "." in word or word.startswith("-"):
        return None
    bare = word.replace("-", "")
    if (bare.isalpha() and all(_is_letter(x) for x in bare)) or _NUMBER.match(word):
        return False
    return None


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
_URL_START = re.compile(r"https?:|www\.", re.IGNORECASE)


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
        if (before and not _is_alnum(before)) or (after and not (_is_alnum(after) or after in ".,;:!?")):
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


def chunk_tokens(chunk: str, following: str | None) -> list[str] | None:
    """The lower-cased PTB tokens of one chunk, before the punctuation drop; None when the chunk
    is not a recognised shape. `following`: the text after the chunk on its line, then a line
    end and the next line (None: the chunk ends the file)."""
    if _BRACKET_WORD.fullmatch(chunk):
        return [chunk.lower()]  # -LRB- and the like: kept, lower-cased (the drop list is upper case)
    if chunk in PUNCTUATIONS or chunk in ("--", "...", "&", "$", "#", "%", "=", "+", "/", "_"):
        return [chunk]
    if _ALL_DROPPED.match(chunk):
        return []  # quotes, commas, periods and hyphens only: every token is in the drop list
    if _SMILEY.search(chunk):
        return None  # ":)" is one token to the lexer (":-rrb-", kept); emoticons were not measured
    if all(c in _DASHES for c in chunk):
        return ["--"] if len(chunk) > 1 or chunk != "-" else ["-"]
    bracket_word = _BRACKET_WORD.match(chunk)
    if bracket_word is not None:
        # "-LRB--": the bracket word first (before any cut at "--"), then the rest as a chunk
        rest = chunk_tokens(chunk[5:], following)
        return None if rest is None else [bracket_word.group(0).lower(), *rest]
    if chunk in _LONE_BRACKETS:
        return [_LONE_BRACKETS[chunk]]
    if all(c in ".,;:!?" for c in chunk):
        sub: list[str] = []
        return sub if _punct_run_tokens(chunk, sub) else None  # "!!" "?!?" are kept tokens
    if "--" in chunk:
        if _BRACKET_WORD.search(chunk):
            return None  # "[-LRB--": where the lexer cuts was not measured
        return _split_at_dashes(chunk, following)
    out: list[str] = []
    s = chunk
    # openers
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
        elif c == "\u2018" and len(s) > 1 and (_is_letter(s[1]) or (s[1].isascii() and s[1].isdigit())):
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
            if j == len(s) or not (_is_letter(s[j]) or (s[j].isascii() and s[j].isdigit() and s[j - 1] in "!?")):
                if j < len(s) and all(x in _CLOSE for x in s[j:]):
                    break  # "(.)": the closers, then these marks, are taken below
                return None
            if not _punct_run_tokens(s[:j], out):
                return None
            s = s[j:]
        elif c in _DASHES and len(s) > 1:
            j = 0
            while j < len(s) and s[j] in _DASHES:
                j += 1
            if j == len(s) or not _is_letter(s[j]):
                return None
            out.append("-" if s[:j] == "-" else "--")
            s = s[j:]
        else:
            break
    url = _url_prefix(s)
    if url:
        # a URL is one token, as long as the lexer's URL rules match; what follows is another chunk
        if not chunk[: len(chunk) - len(s)].isascii():
            return None  # "\u2018www.x.com": the URL rules take in the curly quote
        if not _AFTER_URL.fullmatch(s, len(url)):
            return None  # the lexer's URL rules may run on ("www.x.com-RRB-" is "www.x.com-rrb" "-")
        rest = chunk_tokens(s[len(url):], following) if len(url) < len(s) else []
        if rest is None:
            return None
        return [*out, url.lower(), *rest]
    if s in _LONE_BRACKETS:
        return [*out, _LONE_BRACKETS[s]]  # "()"
    # closers, collected from the end
    tail: list[str] = []
    while s:
        c = s[-1]
        if c in _CLOSE and len(s) > 1:
            tok = _CLOSE[c]
            tail.append(tok if tok is not None else "''")
            s = s[:-1]
        elif c == "/" and len(s) > 1 and _is_alnum(s[-2]):
            tail.append("/")
            s = s[:-1]
        elif s.endswith("``") and len(s) > 2 and _is_letter(s[-3]):
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
                    return None
                out.append(s.lower())
                out.extend(reversed(tail))
                return out
            tail.append("'")
            s = s[:-1]
        elif c in _QUOTE_CLOSE_SINGLE and len(s) > 2 and _is_letter(s[-2]):
            stem = re.search(r"[^\W\d_]+\Z", s[:-1])
            if stem is None or stem.group(0).lower() in ("somethin", "ol", "dunkin"):
                return None
            if (len(stem.group(0)) < 2 and not re.fullmatch(r"[A-Za-z0-9]+-?[A-Za-z]", s[:-1])
                    and not _CLITIC_END.search(s[:-1].lower().replace("\u2019", "'"))):
                return None  # "x-o'" and "5l'" split; other one-letter endings were not measured
            if s[:-1].lower().endswith("n") and "'" in s[:-1]:
                return None
            tail.append("'")
            s = s[:-1]
        elif c in ".,;:!?":
            j = len(s)
            while j > 0 and s[j - 1] in ".,;:!?":
                j -= 1
            run = s[j:]
            s = s[:j]
            if not s:
                # marks right after the openers ("(.)", "(?!)"): their own tokens
                sub = []
                if not _punct_run_tokens(run, sub):
                    return None
                return [*out, *sub, *reversed(tail)]
            if run[0] == "." and run != "." and _is_alnum(s[-1]):
                # "ph.d...", "st...", "i..", "a&b...": the lexer may take a period into the word
                toks_before: list[str] = []
                if not _core_tokens(s, toks_before) or not toks_before:
                    return None
                last = toks_before[-1]
                if set(run) == {"."} and not tail and (
                    (len(last) == 1 and last.isascii() and last.isalpha())
                    or last in KEEP_PERIOD_ANY_CASE or _ACRONYM.match(last)
                ):
                    # "x..", "St...", "t.v...": the first period stays on the word, whatever
                    # follows (the look-ahead sees a period); the rest are their own tokens
                    sub = []
                    if not _punct_run_tokens(run[1:], sub):
                        return None
                    return [*out, *toks_before[:-1], last + ".", *sub]
                if last in KEEP_PERIOD_BEFORE_DIGIT and len(run) >= 3 and set(run) == {"."} and not tail:
                    return [*out, *toks_before, "..."]  # "no..." is "no" "..."
                if "." in last or len(last) == 1 or last in _ABBREVIATION_LIKE:
                    return None
            if run[0] == "." and not run.startswith(".."):
                # a period right after the core: context decides on abbreviations
                if run == "." and not _is_alnum(s[-1]):
                    sub = ["."]  # after a closing quote or bracket ('way".'): always split off
                elif run == ".":
                    # the period follows the core's last token ("a&b." is "a" "&" "b."): that
                    # token decides, as the lexer matches an abbreviation from a token's start
                    toks: list[str] = []
                    if not _core_tokens(s, toks) or not toks:
                        return None
                    last = s[-len(toks[-1]):]
                    if last.lower().replace("\u2019", "'") != toks[-1].replace("\u2019", "'"):
                        return None
                    kept = _period_before_closer(last) if tail else _period_kept(last, following)
                    if kept is None:
                        if not last.replace("-", "").isalpha() or not all(_is_letter(x) for x in last.replace("-", "")):
                            # digits, symbols: the period splits (measured for numbers and words)
                            if not _NUMBER.match(last) and not re.fullmatch(r"[a-z0-9]+", last.lower()):
                                return None
                        else:
                            return None
                    if kept:
                        out.extend(toks[:-1])
                        out.append(toks[-1] + ".")
                        out.extend(reversed(tail))
                        return out
                    sub = ["."]
                elif run[1] in ",;" and s.isascii() and s.isalpha() and len(s) > 1:
                    # "dog.," keeps the period on the word; not measured after abbreviations
                    if s.lower() in _MEASURED_WORDS:
                        return None
                    sub = []
                    if not _punct_run_tokens(run[1:], sub):
                        return None
                    out.append(s.lower() + ".")
                    out.extend(reversed(tail))
                    out.extend(reversed(sub))
                    return out
                else:
                    sub = []
                    if not _punct_run_tokens(run, sub):
                        return None
            else:
                sub = []
                if not _punct_run_tokens(run, sub):
                    return None
            tail.extend(reversed(sub))
        else:
            break
    if not s or not _core_tokens(s, out):
        return None
    out.extend(reversed(tail))
    return out


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
                if c0 in _ODD_LETTERS or len(c0.lower()) != 1:
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
        if _URL_START.search(caption, a, b) and (caption[a - 1 : a] not in ("", " ", "\t") or caption[b : b + 1] not in ("", " ", "\t")):
            # the URL rules take in the characters cut off here: wide blanks, emoji, symbols
            # ("\u00abwww.x.com" is one token to the lexer)
            return None
        chunk = caption[a:b]
        if _FAST_CHUNK.match(chunk) and fast_chunk_tokens(chunk.lower(), tokens):
            continue  # the fast path's shapes are context-free (their marks are dropped anyway)
        rest = caption[b:]
        following = rest + "\n" + next_line if next_line is not None else (rest if rest.strip(_BLANKS) else None)
        toks = chunk_tokens(chunk, following)
        if toks is None:
            return None
        tokens.extend(toks)
    return " ".join(t for t in tokens if t not in PUNCTUATIONS)
