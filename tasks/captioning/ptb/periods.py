"""Whether a period right after a word stays on it: the one context-dependent case of the chunk
rules. The lexer keeps it on abbreviations ("st.", "inc.", acronyms "t.v.") whatever follows, on
single letters unless one of SENTENCE_STARTERS follows capitalised after blanks and line ends,
and on "no." "nos." "prop." only before a digit at most one blank away; before a closing quote or
bracket only the word matters. Every list here was measured with the jar.
"""

from __future__ import annotations

import re

from vlbench.tasks.captioning.ptb.chars import SPACES
from vlbench.tasks.captioning.ptb.cores import ACRONYM, CLITICS, NUMBER, is_letter
from vlbench.tasks.captioning.ptb.fast import ABBREVIATIONS

BLANKS = " \t" + "".join(sorted(SPACES))  # the lexer's blanks (its sentence-end look-ahead)

# Words that keep a following period in every context (all of lower, Capitalised and UPPER case),
# measured with the jar over the abbreviation list of `fast.ABBREVIATIONS`.
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
MEASURED_WORDS = (
    KEEP_PERIOD_ANY_CASE
    | {w.lower() for w in KEEP_PERIOD_CASED}
    | KEEP_PERIOD_BEFORE_DIGIT
    | frozenset(["ark", "az", "del", "ed", "ill", "la", "mass", "mdr", "miss", "mlles", "mm", "mmes", "ore", "pa", "pte", "ptes", "pty", "ptys", "sat", "sun", "tex", "wash", "fed"])
)

ABBREVIATION_LIKE = ABBREVIATIONS | MEASURED_WORDS

_FILE_EXTENSIONS = frozenset(
    ["bat", "bmp", "bz2", "c", "class", "cgi", "cpp", "dll", "doc", "docx", "exe", "gif", "gz", "h", "htm", "html", "jar", "java", "jpeg", "jpg", "mov", "mp3", "mp4", "mpg", "pdf", "php", "pl", "png", "ppt", "ps", "py", "sql", "tar", "txt", "wav", "x", "xml", "zip", "3gp", "wmv", "wma", "avi", "flv", "com", "net", "org", "edu"]
)

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


def period_kept(word: str, following: str | None) -> bool | None:
    """Whether "word." keeps its period, given the text after it in the lexer's input (the rest
    of the line, then the successor text of `lines.pycoco_successors`; None: end of file); None
    when this was not measured."""
    low = word.lower()
    if ACRONYM.match(low):
        return True
    if "." in word:
        # "blanket.cake." splits its period; "ph.d." and file names ("x.jpg.") were not measured
        segments = low.split(".")
        if all(len(x) >= 2 for x in segments) and segments[-1] not in _FILE_EXTENSIONS and low not in ABBREVIATION_LIKE:
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
        return None if low in MEASURED_WORDS else False
    if low in KEEP_PERIOD_ANY_CASE or word in KEEP_PERIOD_CASED:
        return True
    if low in KEEP_PERIOD_BEFORE_DIGIT:
        if following is None:
            return False
        # a digit right after the period, or after one blank or line end ("no.  5" splits)
        nxt = following[1:2] if following[:1] in BLANKS + "\n" else following[:1]
        return nxt.isascii() and nxt.isdigit()
    return False


def period_before_closer(word: str) -> bool | None:
    """Whether "word." keeps its period when a closing quote or bracket follows at once (the
    lexer's sentence-end look-ahead needs a blank there, so only the word matters)."""
    low = word.lower().replace("\u2019", "'")
    if (len(word) == 1 and word.isascii() and word.isalpha()) or ACRONYM.match(low):
        return True
    if low in CLITICS or low == "n't":
        return False  # 'there's."' is "there" "'s" "." "''"
    if low in KEEP_PERIOD_ANY_CASE:
        return True
    if low in KEEP_PERIOD_BEFORE_DIGIT:
        return False
    if low in MEASURED_WORDS or "." in word or word.startswith("-"):
        return None
    bare = word.replace("-", "")
    if (bare.isalpha() and all(is_letter(x) for x in bare)) or NUMBER.match(word):
        return False
    return None
