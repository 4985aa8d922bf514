"""The CoreNLP 3.4.1 PTB lexer in Python: every caption shape, no Java.

pycocoevalcap's `stanford-corenlp-3.4.1.jar` was built from `PTBLexer.flex` of CoreNLP commit
75a3c1923 (2014-06-28). That file is a JFlex grammar: named macros, then about a hundred rules,
some with trailing context (`r/s`). This module restates the macros and rules as regular
expressions, and reproduces how JFlex picks a rule: at each position the rule whose match (its
trailing context counted) is longest wins, the earlier rule on a tie; the token is the `r` part.
Then each rule's action: pushbacks (`cannot` is `can` + `not`, `I.` before a sentence starter
is `I` + `.`, `etc.` at a sentence end is `etc.` + `.`), and the normalisations of the options
pycocoevalcap's `PTBTokenizer -preserveLines -lowerCase` runs with (the lexer's defaults plus
`tokenizeNLs`: brackets to `-LRB-`..., quotes to LaTeX quotes, dashes to `--`, ellipses to
`...`, currency, fractions, `&amp;`, blanks inside a token to no-break spaces, soft hyphens
removed; characters no rule takes are deleted). `PTBTokenizer` lower-cases each token with
`toLowerCase(Locale.ENGLISH)` (Python's `str.lower` does the same, final sigma included).

Why regular expressions and not a generated DFA: the rare captions that reach this module (the
fast paths and the chunk rules take the others: `fast.py`, `rules.py`) are few, and the `regex`
library's POSIX mode gives each rule's longest match directly, which Python's `re` (first match
by backtracking order) does not.

JFlex details that matter here:
* `%caseless`: literal letters and strings match in either case, character classes do not
  (`[A]bout` needs a capital A, `about` any case), so every literal ASCII letter outside a class
  becomes `[xX]` below (plus the characters whose simple case mapping reaches it: `İ ı` for i,
  the Kelvin sign for k, the long s for s);
* `.` is any character but `\\n`; `[^]` is any character;
* `%unicode` classes (`[:letter:]`, `[:digit:]`, `[:uppercase:]`) are those of the Java the jar
  was built with: the letters are `chars.LETTERS` (measured with the jar), digits and upper
  case are Python's, minus characters the jar was measured to treat otherwise;
* the jar reads UTF-16: a character outside the BMP is two surrogates, each deleted by the
  catch-all rule unless a rule with a negated class (URLs, e-mail addresses) takes it into a token.

The jar is the test oracle: `tests/tasks/captioning/ptb/test_lexer.py` compares this module with it
on captions generated from every macro and rule family.

One module, though long: it is one lexer specification (the macros, the rules in the order JFlex
tries them, and their actions), kept in `PTBLexer.flex`'s order so it can be read against it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import lru_cache

import regex

from vlbench.tasks.captioning.ptb import chars as ptb_chars

# ------------------------------------------------------------------------------------------------
# Macros, in the grammar's own notation (translated by `_translate`).

_STARTERS = (
    "[A]bout|[A]ccording|[A]dditionally|[A]fter|[A]n|[A]|[A]s|[A]t|[B]ut|[E]arlier|[H]e|[H]er|[H]ere|"
    "[H]owever|[I]f|[I]n|[I]t|[L]ast|[M]any|[M]ore|[M]r\\.|[M]s\\.|[N]ow|[O]nce|[O]ne|[O]ther|[O]ur|"
    "[S]he|[S]ince|[S]o|[S]ome|[S]uch|[T]hat|[T]he|[T]heir|[T]hen|[T]here|[T]hese|[T]hey|[T]his|[W]e|"
    "[W]hen|[W]hile|[W]hat|[Y]et|[Y]ou"
)

_EXTRA_LETTERS = (
    "\\u00AD\\u0237-\\u024F\\u02C2-\\u02C5\\u02D2-\\u02DF\\u02E5-\\u02FF\\u0300-\\u036F\\u0370-\\u037D"
    "\\u0384\\u0385\\u03CF\\u03F6\\u03FC-\\u03FF\\u0483-\\u0487\\u04CF\\u04F6-\\u04FF\\u0510-\\u0525"
    "\\u055A-\\u055F\\u0591-\\u05BD\\u05BF\\u05C1\\u05C2\\u05C4\\u05C5\\u05C7\\u0615-\\u061A\\u063B-\\u063F"
    "\\u064B-\\u065E\\u0670\\u06D6-\\u06EF\\u06FA-\\u06FF\\u070F\\u0711\\u0730-\\u074F\\u0750-\\u077F"
    "\\u07A6-\\u07B1\\u07CA-\\u07F5\\u07FA\\u0900-\\u0903\\u093C\\u093E-\\u094E\\u0951-\\u0955\\u0962-\\u0963"
    "\\u0981-\\u0983\\u09BC-\\u09C4\\u09C7\\u09C8\\u09CB-\\u09CD\\u09D7\\u09E2\\u09E3\\u0A01-\\u0A03\\u0A3C"
    "\\u0A3E-\\u0A4F\\u0A81-\\u0A83\\u0ABC-\\u0ACF\\u0B82\\u0BBE-\\u0BC2\\u0BC6-\\u0BC8\\u0BCA-\\u0BCD"
    "\\u0C01-\\u0C03\\u0C3E-\\u0C56\\u0D3E-\\u0D44\\u0D46-\\u0D48\\u0E30-\\u0E3A\\u0E47-\\u0E4E\\u0EB1-\\u0EBC"
    "\\u0EC8-\\u0ECD"
)

_MISC_SYMBOLS = (
    "+%&~\\^|\\\\\u00a6\\u00A7\u00a8\\u00A9\\u00AC\\u00AE\u00af\\u00B0-\\u00B3\\u00B4-\\u00BA\\u00D7\\u00F7"
    "\\u0387\\u05BE\\u05C0\\u05C3\\u05C6\\u05F3\\u05F4\\u0600-\\u0603\\u0606-\\u060A\\u060C\\u0614\\u061B"
    "\\u061E\\u066A\\u066D\\u0703-\\u070D\\u07F6\\u07F7\\u07F8\\u0964\\u0965\\u0E4F\\u1FBD\\u2016\\u2017"
    "\\u2020-\\u2023\\u2030-\\u2038\\u203B\\u203E-\\u2042\\u2044\\u207A-\\u207F\\u208A-\\u208E\\u2100-\\u214F"
    "\\u2190-\\u21FF\\u2200-\\u2BFF\\u3012\\u30FB\\uFF01-\\uFF0F\\uFF1A-\\uFF20\\uFF3B-\\uFF40\\uFF5B-\\uFF65"
)

MACROS: dict[str, str] = {
    "SGML": (
        "\\<([!\\?][A-Za-z\\-][^>\\r\\n]*|[A-Za-z][A-Za-z0-9_:\\.\\-]*([ ]+([A-Za-z][A-Za-z0-9_:\\.\\-]*|"
        "[A-Za-z][A-Za-z0-9_:\\.\\-]*[ ]*=[ ]*('[^']*'|\\\"[^\\\"]*\\\")))*[ ]*\\/?|\\/[A-Za-z][A-Za-z0-9_:\\.\\-]*)[ ]*\\>"
    ),
    "SPMDASH": "&(MD|mdash|ndash);|[\\u0096\\u0097\\u2013\\u2014\\u2015]",
    "SPAMP": "&amp;",
    "SPPUNC": "&(HT|TL|UR|LR|QC|QL|QR|odq|cdq|#[0-9]+);",
    "SPLET": "&[aeiouAEIOU](acute|grave|uml);",
    "SPACE": "[ \\t\\u00A0\\u2000-\\u200A\\u3000]",
    "SPACES": "{SPACE}+",
    "NEWLINE": "\\r|\\r?\\n|\\u2028|\\u2029|\\u000B|\\u000C|\\u0085",
    "SPACENL": "({SPACE}|{NEWLINE})",
    "SPACENLS": "{SPACENL}+",
    "SENTEND": "{SPACENL}({SPACENL}|[:uppercase:]|{SGML})",
    "DIGIT": "[:digit:]|[\\u07C0-\\u07C9]",
    "DATE": "{DIGIT}{1,2}[\\-\\/]{DIGIT}{1,2}[\\-\\/]{DIGIT}{2,4}",
    "NUM": "{DIGIT}+|{DIGIT}*([.:,\\u00AD\\u066B\\u066C]{DIGIT}+)+",
    "NUMBER": "[\\-+]?{NUM}",
    "SUBSUPNUM": "[\\u207A\\u207B\\u208A\\u208B]?([\\u2070\\u00B9\\u00B2\\u00B3\\u2074-\\u2079]+|[\\u2080-\\u2089]+)",
    "FRAC": "({DIGIT}{1,4}[- \\u00A0])?{DIGIT}{1,4}(\\\\?\\/|\\u2044){DIGIT}{1,4}",
    "FRAC2": "[\\u00BC\\u00BD\\u00BE\\u2153-\\u215E]",
    "DOLSIGN": "([A-Z]*\\$|#)",
    "DOLSIGN2": "[\\u00A2\\u00A3\\u00A4\\u00A5\\u0080\\u20A0\\u20AC\\u060B\\u0E3F\\u20A4\\uFFE0\\uFFE1\\uFFE5\\uFFE6]",
    "LETTER": "([:letter:]|{SPLET}|[" + _EXTRA_LETTERS + "])",
    "WORD": "{LETTER}({LETTER}|{DIGIT})*([.!?]{LETTER}({LETTER}|{DIGIT})*)*",
    "FILENAME_EXT": (
        "bat|bmp|c|class|cgi|cpp|dll|doc|docx|exe|gif|gz|h|htm|html|jar|java|jpeg|jpg|mov|mp3|pdf|php|"
        "pl|png|ppt|ps|py|sql|tar|txt|wav|x|xml|zip"
    ),
    "FILENAME": "({LETTER}|{DIGIT})+([.]({LETTER}|{DIGIT})+)*([.]{FILENAME_EXT})",
    "THING": (
        "([dDoOlL]{APOSETCETERA}([:letter:]|[:digit:]))?([:letter:]|[:digit:])+"
        "({HYPHEN}([dDoOlL]{APOSETCETERA}([:letter:]|[:digit:]))?([:letter:]|[:digit:])+)*"
    ),
    "THINGA": "[A-Z]+(([+&]|{SPAMP})[A-Z]+)+",
    "THING3": "[A-Za-z0-9]+(-[A-Za-z]+){0,2}(\\\\?\\/[A-Za-z0-9]+(-[A-Za-z]+){0,2}){1,2}",
    "APOS": "['\\u0092\\u2019]|&apos;",
    "APOSETCETERA": "{APOS}|[`\\u0091\\u2018\\u201B]",
    "HTHING": "[A-Za-z0-9][A-Za-z0-9.,\\u00AD]*(-([A-Za-z0-9\\u00AD]+|{ACRO2}\\.))+",
    "REDAUX": "{APOS}([msdMSD]|re|ve|ll)",
    "SWORD": "[A-Za-z\\u00AD]*[A-MO-Za-mo-z](\\u00AD)*",
    "SREDAUX": "n{APOSETCETERA}t",
    "APOWORD": (
        "{APOS}n{APOS}?|[lLdDjJ]{APOS}|Dunkin{APOS}|somethin{APOS}|ol{APOS}|{APOS}em|"
        "[A-HJ-XZn]{APOSETCETERA}[:letter:]{2}[:letter:]*|{APOS}[2-9]0s|{APOS}till?|"
        "[:letter:][:letter:]*[aeiouyAEIOUY]{APOSETCETERA}[aeiouA-Z][:letter:]*|{APOS}cause|cont'd\\.?|"
        "'twas|nor'easter|c'mon|e'er|s'mores|ev'ry|li'l|nat'l|O{APOSETCETERA}o"
    ),
    "APOWORD2": "y{APOS}",
    "FULLURL": "https?:\\/\\/[^ \\t\\n\\f\\r\\\"<>|(){}]+[^ \\t\\n\\f\\r\\\"<>|.!?(){},-]",
    "LIKELYURL": (
        "((www\\.([^ \\t\\n\\f\\r\\\"<>|.!?(){},]+\\.)+[a-zA-Z]{2,4})|(([^ \\t\\n\\f\\r\\\"`'<>|.!?(){},-_$]+\\.)+"
        "(com|net|org|edu)))(\\/[^ \\t\\n\\f\\r\\\"<>|()]+[^ \\t\\n\\f\\r\\\"<>|.!?(){},-])?"
    ),
    "EMAIL": (
        "(&lt;|<)?[a-zA-Z0-9][^ \\t\\n\\f\\r\\\"<>|()\\u00A0{}]*@([^ \\t\\n\\f\\r\\\"<>|(){}.\\u00A0]+\\.)*"
        "([^ \\t\\n\\f\\r\\\"<>|(){}.\\u00A0]+)(&gt;|>)?"
    ),
    "TWITTER_NAME": "@[a-zA-Z_][a-zA-Z_0-9]*",
    "TWITTER_CATEGORY": "#{LETTER}+",
    "TWITTER": "{TWITTER_NAME}|{TWITTER_CATEGORY}",
    "ABMONTH": "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec",
    "ABDAYS": "Mon|Tue|Tues|Wed|Thu|Thurs|Fri",
    "ABSTATE": (
        "Ala|Ariz|[A]z|[A]rk|Calif|Colo|Conn|Ct|Dak|[D]el|Fla|Ga|[I]ll|Ind|Kans?|Ky|[L]a|[M]ass|Md|Mich|"
        "Minn|[M]iss|Mo|Mont|Neb|Nev|Okla|[O]re|[P]a|Penn|Tenn|[T]ex|Va|Vt|[W]ash|Wisc?|Wyo"
    ),
    "ABCOMP": "Inc|Cos?|Corp|Pp?t[ye]s?|Ltd|Plc|Rt|Bancorp|Bhd|Assn|Univ|Intl|Sys",
    "ABNUM": "tel|est|ext|sq",
    "ABPTIT": "Jr|Sr|Bros|(Ed|Ph)\\.D|Blvd|Rd|Esq",
    "ABBREV1": "({ABMONTH}|{ABDAYS}|{ABSTATE}|{ABCOMP}|{ABNUM}|{ABPTIT}|etc|al|seq|Bldg)\\.",
    "ACRO": "[A-Za-z](\\.[A-Za-z])*|(Canada|Sino|Korean|EU|Japan|non)-U\\.S|U\\.S\\.-(U\\.K|U\\.S\\.S\\.R)",
    "ACRO2": "[A-Za-z](\\.[A-Za-z])+|(Canada|Sino|Korean|EU|Japan|non)-U\\.S|U\\.S\\.-(U\\.K|U\\.S\\.S\\.R)",
    "ABTITLE": (
        "Mr|Mrs|Ms|[M]iss|Drs?|Profs?|Sens?|Reps?|Attys?|Lt|Col|Gen|Messrs|Govs?|Adm|Rev|Maj|Sgt|Cpl|Pvt|"
        "Capt|Ste?|Ave|Pres|Lieut|Hon|Brig|Co?mdr|Pfc|Spc|Supts?|Det|Mt|Ft|Adj|Adv|Asst|Assoc|Ens|Insp|"
        "Mlle|Mme|Msgr|Sfc"
    ),
    "ABCOMP2": "Invt|Elec|Natl|M[ft]g|Dept",
    "ABBREV4": "{ABTITLE}|vs|Alex|Wm|Jos|Cie|a\\.k\\.a|cf|TREAS|Ph|{ACRO}|{ABCOMP2}",
    "ABBREV2": "{ABBREV4}\\.",
    "ACRONYM": "({ACRO})\\.",
    "ABBREV3": "(ca|figs?|prop|nos?|art|bldg|prop|pp|op)\\.",
    "PHONE": (
        "(\\([0-9]{2,3}\\)[ \\u00A0]?|(\\+\\+?)?([0-9]{2,4}[\\- \\u00A0])?[0-9]{2,4}[\\- \\u00A0])[0-9]{3,4}"
        "[\\- \\u00A0]?[0-9]{3,5}|((\\+\\+?)?[0-9]{2,4}\\.)?[0-9]{2,4}\\.[0-9]{3,4}\\.[0-9]{3,5}"
    ),
    "FAKEDUCKFEET": "<<|>>",
    "LESSTHAN": "<|&lt;",
    "GREATERTHAN": ">|&gt;",
    "HYPHEN": "[-_\\u058A\\u2010\\u2011]",
    "HYPHENS": "\\-+",
    "LDOTS": "\\.{3,5}|(\\.[ \\u00A0]){2,4}\\.|[\\u0085\\u2026]",
    "ATS": "@+",
    "UNDS": "_+",
    "ASTS": "\\*+|(\\\\\\*){1,3}",
    "HASHES": "#+",
    "FNMARKS": "{ATS}|{HASHES}|{UNDS}",
    "INSENTP": "[,;:\\u3001]",
    "QUOTES": (
        "{APOS}|''|[`\\u2018\\u2019\\u201A\\u201B\\u201C\\u201D\\u0091\\u0092\\u0093\\u0094\\u201E\\u201F"
        "\\u2039\\u203A\\u00AB\\u00BB]{1,2}"
    ),
    "DBLQUOT": "\\\"|&quot;",
    "TBSPEC": "-(RRB|LRB|RCB|LCB|RSB|LSB)-|C\\.D\\.s|pro-|anti-|S(&|&amp;)P-500|S(&|&amp;)Ls|Cap{APOS}n|c{APOS}est",
    "TBSPEC2": "{APOS}[0-9][0-9]",
    "SMILEY": "[<>]?[:;=][\\-o\\*']?[\\(\\)DPdpO\\\\{@\\|\\[\\]]",
    "ASIANSMILEY": (
        "[\\^x=~<>]\\.\\[\\^x=~<>]|[\\-\\^x=~<>']_[\\-\\^x=~<>']|\\([\\-\\^x=~<>'][_.]?[\\-\\^x=~<>']\\)|"
        "\\([\\^x=~<>']-[\\^x=~<>'`]\\)"
    ),
    "MISCSYMBOL": "[" + _MISC_SYMBOLS + "]",
}

# ------------------------------------------------------------------------------------------------
# Actions.

OPENPAREN, CLOSEPAREN = "-LRB-", "-RRB-"

_FRACTIONS = {"\u00bc": "1/4", "\u00bd": "1/2", "\u00be": "3/4", "\u2153": "1/3", "\u2154": "2/3"}
_CURRENCY = {"\u00a2": "cents", "\u00a3": "#", "\u0080": "$", "\u00a4": "$", "\u20a0": "$", "\u20ac": "$"}
_LEFT_SINGLE = "\u0091\u2018\u201b\u2039"
_RIGHT_SINGLE = "\u0092\u2019\u203a"
_LEFT_DOUBLE = "\u0093\u201c\u00ab"
_RIGHT_DOUBLE = "\u0094\u201d\u00bb"
_QUOTE_MAP_LEFT = str.maketrans(
    {"'": "`", '"': "``", **dict.fromkeys(_LEFT_SINGLE, "`"), **dict.fromkeys(_RIGHT_SINGLE, "'"),
     **dict.fromkeys(_LEFT_DOUBLE, "``"), **dict.fromkeys(_RIGHT_DOUBLE, "''")}
)
_QUOTE_MAP_RIGHT = str.maketrans(
    {"'": "'", '"': "''", **dict.fromkeys(_LEFT_SINGLE, "`"), **dict.fromkeys(_RIGHT_SINGLE, "'"),
     **dict.fromkeys(_LEFT_DOUBLE, "``"), **dict.fromkeys(_RIGHT_DOUBLE, "''")}
)
_AMP = regex.compile("&amp;", regex.IGNORECASE)
_APOS_ENTITY = regex.compile("&apos;")
_QUOT_ENTITY = regex.compile("&quot;")


def _quotes(text: str, probably_left: bool) -> str:
    """latexQuotes: the entities and ASCII quotes by side, then the Unicode and cp1252 quotes."""
    left = "`" if probably_left else "'"
    text = _APOS_ENTITY.sub(left, text)
    text = _QUOT_ENTITY.sub(left * 2, text)
    return text.translate(_QUOTE_MAP_LEFT if probably_left else _QUOTE_MAP_RIGHT)


def _soft(text: str) -> str:
    if "\u00ad" not in text:
        return text
    return text.replace("\u00ad", "") or "-"


def _nbsp(text: str) -> str:
    return text.replace(" ", "\u00a0")


def _parens(text: str) -> str:
    return text.replace("(", OPENPAREN).replace(")", CLOSEPAREN)


def _same(text: str) -> str:
    return text


def _amp(text: str) -> str:
    return _AMP.sub("&", text)


def _currency(text: str) -> str:
    return "".join(_CURRENCY.get(c, c) for c in text)


def _fractions(text: str) -> str:
    return "".join(_FRACTIONS.get(c, c) for c in text)


def _hyphens(text: str) -> str:
    return "--" if 3 <= len(text) <= 4 else text


# Rule kinds beyond "emit the (normalised) text":
_SKIP = "skip"  # blanks, deleted characters
_NEWLINE = "newline"
_PUSHBACK = "pushback"  # emit all but the last `n` characters, re-lex those
_ACRONYM_END = "acronym_end"  # the {ACRONYM}/starter rule
_REDUPLICATE = "reduplicate"  # emit the text, then re-lex its final period

# (main, trailing context or None, kind, normaliser or pushback count), in the grammar's order; the
# rules of the strict-Treebank-3 state are left out (the lexer runs in the traditional state).
_Rule = tuple[str, "str | None", str, "Callable[[str], str] | int | None"]
RULES: list[_Rule] = [
    ("c[+][+]", None, "emit", _same),
    ("(c|f)#", None, "emit", _same),
    ("cannot", None, _PUSHBACK, 3),
    ("'twas", None, _PUSHBACK, 3),
    ("'tis", None, _PUSHBACK, 2),
    ("gonna|gotta|lemme|gimme|wanna", None, _PUSHBACK, 2),
    ("{SGML}", None, "emit", _nbsp),
    ("{SPMDASH}", None, "emit", lambda t: "--"),
    ("{SPAMP}", None, "emit", _amp),
    ("{SPPUNC}", None, "emit", _same),
    ("{WORD}", "{REDAUX}", "emit", _soft),
    ("{SWORD}", "{SREDAUX}", "emit", _soft),
    ("{WORD}", None, "emit", _soft),
    ("{APOWORD}", None, "emit", _same),
    ("{APOWORD2}", "[:letter:]", "emit", _same),
    ("{FULLURL}", None, "emit", _same),
    ("{LIKELYURL}", None, "emit", _same),
    ("{EMAIL}", None, "emit", _same),
    ("{TWITTER}", None, "emit", _same),
    ("{REDAUX}", "[^A-Za-z]", "emit", lambda t: _quotes(t, False)),
    ("{SREDAUX}", "[^A-Za-z]", "emit", lambda t: _quotes(t, False)),
    ("{DATE}", None, "emit", _same),
    ("{NUMBER}", None, "emit", _soft),
    ("{SUBSUPNUM}", None, "emit", _same),
    ("{FRAC}", None, "emit", _nbsp),
    ("{FRAC2}", None, "emit", _fractions),
    ("{TBSPEC}", None, "emit", _amp),
    ("{THING3}", None, "emit", _same),
    ("{DOLSIGN}", None, "emit", _same),
    ("{DOLSIGN2}", None, "emit", _currency),
    ("{ACRONYM}", "({SPACENLS})(" + _STARTERS + "|{SGML}){SPACENL}", _ACRONYM_END, None),
    ("{ABBREV3}", "{SPACENL}?[:digit:]", "emit", _same),
    ("(pt[eyEY]|co)\\.", "{SPACE}(ltd|lim)", "emit", _same),
    ("{ABBREV1}", "{SENTEND}", _REDUPLICATE, None),
    ("{ABBREV1}", "[^][^]", "emit", _same),
    ("{ABBREV1}", None, _REDUPLICATE, None),
    ("{ABBREV2}", None, "emit", _same),
    ("{ABBREV4}", "{SPACE}", "emit", _same),
    ("{ACRO}", "{SPACENL}", "emit", _same),
    ("{TBSPEC2}", "{SPACENL}", "emit", _same),
    ("{FILENAME}", "({SPACENL}|[.?!,])", "emit", _same),
    ("{WORD}\\.", "{INSENTP}", "emit", _soft),
    ("{PHONE}", None, "emit", lambda t: _parens(_nbsp(t))),
    ("{DBLQUOT}", "[A-Za-z0-9$]", "emit", lambda t: _quotes(t, True)),
    ("{DBLQUOT}", None, "emit", lambda t: _quotes(t, False)),
    ("\\x7f", None, _SKIP, None),
    ("{LESSTHAN}", None, "emit", lambda t: "<"),
    ("{GREATERTHAN}", None, "emit", lambda t: ">"),
    ("{SMILEY}", "[^A-Za-z0-9]", "emit", _parens),
    ("{ASIANSMILEY}", None, "emit", _parens),
    ("\\{", None, "emit", lambda t: "-LCB-"),
    ("\\}", None, "emit", lambda t: "-RCB-"),
    ("\\[", None, "emit", lambda t: "-LSB-"),
    ("\\]", None, "emit", lambda t: "-RSB-"),
    ("\\(", None, "emit", lambda t: OPENPAREN),
    ("\\)", None, "emit", lambda t: CLOSEPAREN),
    ("{HYPHENS}", None, "emit", _hyphens),
    ("{LDOTS}", None, "emit", lambda t: "..."),
    ("{FNMARKS}", None, "emit", _same),
    ("{ASTS}", None, "emit", _same),
    ("{INSENTP}", None, "emit", _same),
    ("[?!]+", None, "emit", _same),
    ("[.\u00a1\u00bf\\u037E\\u0589\\u061F\\u06D4\\u0700-\\u0702\\u07FA\\u3002]", None, "emit", _same),
    ("=", None, "emit", _same),
    ("\\/", None, "emit", _same),
    ("{HTHING}\\.", "{INSENTP}", "emit", _soft),
    ("{HTHING}", None, "emit", _soft),
    ("{THING}\\.", "{INSENTP}", "emit", _same),
    ("{THING}", None, "emit", _same),
    ("{THINGA}\\.", "{INSENTP}", "emit", _amp),
    ("{THINGA}", None, "emit", _amp),
    ("'", "[A-Za-z][^ \\t\\n\\r\\u00A0]", "emit", lambda t: _quotes(t, True)),
    ("{REDAUX}", None, "emit", lambda t: _quotes(t, False)),
    ("{SREDAUX}", None, "emit", lambda t: _quotes(t, False)),
    ("{QUOTES}", None, "emit", lambda t: _quotes(t, False)),
    ("{FAKEDUCKFEET}", None, "emit", _same),
    ("{MISCSYMBOL}", None, "emit", _same),
    ("\\u0000|{SPACES}|[\\u200B\\u200E-\\u200F\\uFEFF]", None, _SKIP, None),
    ("{NEWLINE}", None, _NEWLINE, None),
    ("&nbsp;", None, _SKIP, None),
    (".", None, _SKIP, None),  # untokenizable: deleted (the lexer's default, firstDelete)
]

# ------------------------------------------------------------------------------------------------
# Character classes of the jar's Java, and the translation of the grammar's notation.


def _class_body(chars: list[int]) -> str:
    """A character-class body (no brackets) for sorted code points, as ranges."""
    parts: list[str] = []
    i = 0
    while i < len(chars):
        j = i
        while j + 1 < len(chars) and chars[j + 1] == chars[j] + 1:
            j += 1
        a, b = chars[i], chars[j]
        parts.append(f"\\u{a:04X}" if a == b else f"\\u{a:04X}-\\u{b:04X}")
        i = j + 1
    return "".join(parts)


@lru_cache(maxsize=1)
def _unicode_classes() -> dict[str, str]:
    """[:letter:], [:digit:], [:uppercase:] as the jar's Java (Unicode of 2014) had them: letters
    from the measured table, digits and upper case from Python's tables minus the characters the
    jar was measured to treat as something else (letters and characters added to Unicode since)."""
    letters, digits, upper = [], [], []
    for cp in range(0x10000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        if cp < 0x80:
            is_letter = c.isascii() and c.isalpha()
            is_digit = c.isdigit()
        else:
            cls = ptb_chars.char_class(c)
            is_letter = cls == ptb_chars.LETTER or (
                cls == ptb_chars.UNKNOWN and unicodedata.category(c).startswith("L")
            )
            is_digit = cls == ptb_chars.UNKNOWN and unicodedata.category(c) == "Nd"
        if is_letter:
            letters.append(cp)
            if unicodedata.category(c) == "Lu" or (c.isupper() and len(c.lower()) == 1):
                upper.append(cp)
        if is_digit:
            digits.append(cp)
    return {
        "[:letter:]": "[" + _class_body(letters) + "]",
        "[:digit:]": "[" + _class_body(digits) + "]",
        "[:uppercase:]": "[" + _class_body(upper) + "]",
    }


# `%caseless` matches the characters whose simple case mapping reaches the literal's case too
# (measured with the jar: "Thıs" and "Thİs" are the starter "This", "\u212ay." is "Ky.").
_CASELESS_EXTRA = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}


def _translate(pattern: str, classes: dict[str, str], depth: int = 0) -> str:
    """The grammar's regular expression in `regex` syntax: macros expanded, `%caseless` literals,
    `.` and `[^]` as JFlex reads them."""
    if depth > 20:
        raise ValueError("macro nesting too deep")
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "[":
            if pattern.startswith("[^]", i):
                out.append("[\\s\\S]")
                i += 3
                continue
            named = next((k for k in classes if pattern.startswith(k, i)), None)
            if named is not None:
                out.append(classes[named])
                i += len(named)
                continue
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            while pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            out.append(pattern[i : j + 1])
            i = j + 1
        elif c == "\\":
            if pattern[i + 1] == "u":
                out.append(pattern[i : i + 6])
                i += 6
            elif pattern[i + 1] == "x":
                out.append(pattern[i : i + 4])
                i += 4
            else:
                out.append(pattern[i : i + 2])
                i += 2
        elif c == "{":
            j = pattern.index("}", i)
            name = pattern[i + 1 : j]
            if name in MACROS:
                out.append("(?:" + _translate(MACROS[name], classes, depth + 1) + ")")
            else:  # a repetition count {m,n}
                out.append(pattern[i : j + 1])
            i = j + 1
        elif c == ".":
            out.append("[^\\n]")
            i += 1
        elif c == '"':
            raise ValueError("string literals are not used by the grammar")
        elif c.isascii() and c.isalpha():
            out.append("[" + c.lower() + c.upper() + _CASELESS_EXTRA.get(c.lower(), "") + "]")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


@lru_cache(maxsize=1)
def _compiled() -> list[tuple[regex.Pattern[str], bool, str, Callable[[str], str] | int | None]]:
    classes = _unicode_classes()
    out = []
    for main, trailing, kind, arg in RULES:
        body = "(" + _translate(main, classes) + ")"
        if trailing is not None:
            body += "(" + _translate(trailing, classes) + ")"
        out.append((regex.compile("(?p)" + body), trailing is not None, kind, arg))
    return out


_LINE_END_PUSHBACK = " \t\n\x0b\x0c\r\x85"


def lex(text: str) -> list[str | None]:
    """The tokens of `text` as the lexer returns them (before lower-casing), None for a line end."""
    rules = _compiled()
    # the jar reads UTF-16: characters outside the BMP are two surrogates
    text = "".join(
        c if ord(c) < 0x10000 else chr(0xD800 + ((ord(c) - 0x10000) >> 10)) + chr(0xDC00 + ((ord(c) - 0x10000) & 0x3FF))
        for c in text
    )
    tokens: list[str | None] = []
    pos, n = 0, len(text)
    while pos < n:
        best_len, best = -1, None
        for rule in rules:
            m = rule[0].match(text, pos)
            if m is not None and m.end() - pos > best_len:
                best_len, best = m.end() - pos, (rule, m)
        assert best is not None  # the last rule takes any character but \n, NEWLINE takes \n
        (pattern, has_trailing, kind, arg), m = best
        token = m.group(1)
        if kind == _SKIP:
            pos += len(token)
        elif kind == _NEWLINE:
            tokens.append(None)
            pos += len(token)
        elif kind == _PUSHBACK:
            tokens.append(token[: len(token) - arg])  # type: ignore[operator]
            pos += len(token) - arg  # type: ignore[operator]
        elif kind == _ACRONYM_END:
            token = token.rstrip(_LINE_END_PUSHBACK)
            if len(token) == 2:  # "I." etc.: the letter now, the period next time
                tokens.append(token[:1])
                pos += 1
            else:  # the word with its period, and the period again next time
                tokens.append(token)
                pos += len(token) - 1
        elif kind == _REDUPLICATE:
            tokens.append(token)
            pos += len(token) - 1
        else:
            tokens.append(arg(token))  # type: ignore[operator]
            pos += len(token)
    return tokens


def _from_utf16(token: str) -> str:
    return token.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def tokenize_line(caption: str, successor: str | None) -> list[str]:
    """The lower-cased tokens the jar gives `caption` (one line, line breaks already blanks) when
    `successor` follows its line end in the file (None: the caption is the file's last line)."""
    text = caption if successor is None else caption + "\n" + successor
    out: list[str] = []
    for token in lex(text):
        if token is None:
            break
        if "\n" in token:
            # an SGML tag whose quoted attribute runs over the line end: the jar prints the line
            # end inside the token, so pycocoevalcap's line ends there (the lines after it shift,
            # which no per-line answer can reproduce; the captioning card says so)
            out.append(_from_utf16(token.split("\n", 1)[0]).lower())
            break
        out.append(_from_utf16(token).lower())
    return out
