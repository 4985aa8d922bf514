"""Captions generated from the rule families of CoreNLP 3.4.1's PTBLexer.flex, for the differential
tests of `ptb/lexer.py` against the jar. Each family lists pieces built from one macro or rule
(emoticons, e-mail addresses, URLs, clitics after punctuation, SGML, abbreviations, numbers and
fractions, hyphenation, quotes, ellipses, dashes, Unicode classes, ...); a caption glues pieces of
several families with the blanks, openers and closers the rules look at."""

from __future__ import annotations

import random

from vlbench.tasks.captioning.ptb.lexer import MACROS

_ABBREV_WORDS = sorted(
    {w for name in ("ABMONTH", "ABDAYS", "ABSTATE", "ABCOMP", "ABNUM", "ABTITLE", "ABCOMP2") for w in MACROS[name].split("|")}
)


def _expand(word: str) -> list[str]:
    """The words a macro alternative stands for ("[A]rk" -> "Ark", "Cos?" -> "Co", "Cos")."""
    word = word.replace("[A]", "A").replace("[D]", "D").replace("[I]", "I").replace("[L]", "L")
    word = word.replace("[M]", "M").replace("[O]", "O").replace("[P]", "P").replace("[T]", "T").replace("[W]", "W")
    out = [word]
    if "[ye]" in word:
        out = [w.replace("[ye]", c) for w in out for c in "ye"]
    if "[ft]" in word:
        out = [w.replace("[ft]", c) for w in out for c in "ft"]
    while any("?" in w for w in out):
        nxt = []
        for w in out:
            i = w.find("?")
            if i < 0:
                nxt.append(w)
            else:
                nxt += [w[: i - 1] + w[i + 1 :], w[:i] + w[i + 1 :]]
        out = nxt
    return out


ABBREVIATIONS = sorted({x for w in _ABBREV_WORDS for x in _expand(w)}) + [
    "etc", "al", "seq", "Bldg", "Jr", "Sr", "Bros", "Ed.D", "Ph.D", "Blvd", "Rd", "Esq", "vs", "Alex", "Wm",
    "Jos", "Cie", "a.k.a", "cf", "TREAS", "Ph", "ca", "fig", "figs", "prop", "no", "nos", "art", "pp", "op",
    "U.S", "U.S.A", "e.g", "i.e", "a.m", "p.m", "non-U.S", "U.S.-U.K", "pty", "pte", "co", "May",
]

FAMILIES: dict[str, list[str]] = {
    "smiley": [
        ":)", ":(", ";)", "=)", ":-)", ":-(", ":D", ":P", ":p", ":d", ":O", ":o)", ":*)", ":'(", ":\\", ":{",
        ":@", ":|", ":[", ":]", "<:)", ">:(", "=D", ";-P", ":-D", "^_^", "^.^", "-_-", "x_x", "o_o", "(^_^)",
        "(-_-)", "(x.x)", "(^-^)", "(='-')", "<3", ":)a", ":)1", ":-)", "=]", ";]", "(>_<)", "~_~", "'_'",
    ],
    "email": [
        "john@example.com", "a.b@c.org", "<me@x.net>", "&lt;me@x.net&gt;", "x@y", "first.last@mail.co.uk",
        "user+tag@host.io", "1a@b.c", "bob@localhost", "a@b.c.", "mail@café.fr",
    ],
    "url": [
        "http://example.com", "https://www.x.org/a/b?c=d&e=f", "http://x.com/a.", "www.google.com",
        "www.x.co.uk/path", "example.com", "foo.net/bar/", "a.b.edu", "HTTP://X.COM/Y", "http://a.b/(c)",
        "www.a-b.com", "site.org.", "http://x.com/a,b", "www.abc.de", "x.y.com/p-q", "abc.com,",
    ],
    "clitic": [
        "is,'s", "x.'s", "it's", "IT'S", "he'd", "we're", "you've", "they'll", "I'm", "don't", "DON'T",
        "can't", "won't", "ain't", "it\u2019s", "don\u2019t", "it\u0092s", "it&apos;s", "don&apos;t",
        "dogs'", "'s", "n't", "'S", "N'T", "rock'n'roll", "'n'", "y'all", "y'know", "o'clock", "O'Neil",
        "l'amour", "d'etre", "J'accuse", "Dunkin'", "somethin'", "ol'", "'em", "'90s", "'til", "'till",
        "'cause", "cont'd", "cont'd.", "'twas", "'tis", "'Twas", "nor'easter", "c'mon", "e'er", "s'mores",
        "ev'ry", "li'l", "nat'l", "O'o", "Cap'n", "c'est", "'97", "'05", "mann't", "a'b", "black'blue",
        "ma'am", "x,'", ",'s", "ab'cd'ef", "d\u2018Arc", "o`clock", "rock\u2018n", "1990's", "70's",
        "dn't", "gon't", "it's.", "'s.", "'d'", "y'", "'sup",
    ],
    "sgml": [
        "<b>", "</b>", "<a href=\"x\">", "<a href='x y'>", "<br/>", "<br />", "<!DOCTYPE html>", "<?xml v?>",
        "<p class=\"a\" id=b>", "< b>", "<b >", "<1>", "<a b>", "<a:b.c-d>", "</a >", "<a \"x\">", "<<", ">>",
        "<", ">", "&lt;", "&gt;", "<-", "->", "<3", "<=", ">=",
    ],
    "number": [
        "1", "10", "1,000", "3.5", ".5", "-5", "+3", "3:45", "1.2.3", "5\u00ad000", "12/25/2014", "1-2-34",
        "1/2", "5-1/2", "5 1/2", "5\u00a01/2", "10\\/20", "3\u20444", "\u00bd", "\u00bc", "\u00be", "\u2153",
        "\u2154", "\u2155", "\u215e", "x\u00b2", "\u00b2", "\u2075\u2076", "\u2081\u2082", "\u207a\u00b9",
        "\u0661\u0662\u0663", "\u07c1\u07c2", "\u0966\u0967", "\uff11\uff12", "1\u066b5", "555-123-4567",
        "(555) 123-4567", "(55)1234567", "+1 555 123 4567", "++44 20 1234 5678", "555.123.4567",
        "1.555.123.4567", "123 4567", "12 345 6789", "5pm", "6:40pm", "3rd", "1st", "2x4", "4x4", "#1",
        "$5", "US$5", "A$", "$", "#", "50%", "1990s", "1,000,000.50", "12345", "0.5mm", "3.14.",
    ],
    "abbreviation": [w + "." for w in ABBREVIATIONS] + [w.upper() + "." for w in ABBREVIATIONS[:40]]
    + [w.lower() + "." for w in ABBREVIATIONS] + ["i.", "I.", "a.", "x.", "Z.", "t.v.", "T.V.", "e.g.", "U.S.", "u.s."],
    "hyphen": [
        "co-op", "e-mail", "x-ray", "a-b-c", "20-year-old", "well-known", "a--b", "a---b", "pro-", "anti-",
        "pro-life", "anti-war", "well_known", "a\u2010b", "a\u2011b", "a\u058ab", "-", "--", "---", "----",
        "-----", "------", "-a", "a-", "1-2", "a-1", "U.S.-based", "mid-1990s", "x-x-x-x", "t-shirt.",
        "o'-clock", "l'-a", "d'a-d'b", "A.B.-c", "ab.cd-ef", "a,b-c", "3.5-inch", "-LRB-", "-RRB-", "-lsb-",
        "-LCB-", "S&P-500", "S&Ls", "C.D.s", "and/or", "a/b/c", "x\\/y", "AB/CD-ef", "1/2/3/4",
    ],
    "quote": [
        '"', "'", "``", "''", "`", "\u2018", "\u2019", "\u201c", "\u201d", "\u201a", "\u201e", "\u201b",
        "\u201f", "\u2039", "\u203a", "\u00ab", "\u00bb", "\u0091", "\u0092", "\u0093", "\u0094", "&quot;",
        "&apos;", "\u201c\u201c", "\u2019\u2019", "'\u2019", "\u00ab\u00bb", "\"a\"", "'a'", "\u2018a\u2019",
        "\"5\"", "\"$5\"", "'a b'", "''a", "a''", "``a''",
    ],
    "ellipsis": ["...", "....", ".....", "......", ". . .", ". . . .", ".\u00a0.\u00a0.", "\u2026", "a...", "a..", "..", "!..", "?...", "a....b"],
    "dash": ["\u2013", "\u2014", "\u2015", "&mdash;", "&ndash;", "&MD;", "\u0096", "\u0097", "a\u2014b", "--a"],
    "entity": ["&amp;", "&AMP;", "&nbsp;", "&HT;", "&#123;", "&eacute;", "&Agrave;", "&odq;", "AT&amp;T", "caf&eacute;", "&x;", "&"],
    "symbol": [
        "c++", "C++", "c#", "F#", "AT&T", "R&D", "AB+CD", "A&B&C", "&", "@", "@@", "#", "##", "_", "__", "*",
        "***", "\\*", "\\*\\*", "=", "+", "%", "~", "^", "|", "\\", "/", "\u00a9", "\u00b0", "\u00d7", "\u2022",
        "\u2122", "\u2190", "\u2764", "\u00a7", "\u00b6", "\u00a1", "\u00bf", "\u037e", "\u3002", "\u3001",
        "\u00a2", "\u00a3", "\u00a5", "\u20ac", "\u0080", "\u20a4", "\u0e3f", "\uffe5", "\x7f", "@user",
        "@_x1", "#tag", "#caf\u00e9", "#1a", "!!", "?!", "!?", "???", ";", ":", ",", "?", "!", "(", ")", "[",
        "]", "{", "}", "\u061f", "\u06d4", "\u0589",
    ],
    "filename": ["photo.jpg", "a.tar.gz", "x.exe", "readme.txt", "IMG_01.JPG", "a.b.c.png", "x.jpg.", "file.x", "v1.2.pdf", "page.html?"],
    "unicode": [
        "caf\u00e9", "na\u00efve", "\u00fcber", "stra\u00dfe", "\u0130stanbul", "\u039f\u0394\u039f\u03a3",
        "\u03a3\u0391", "\u01c4", "\u01c5a", "\u6771\u4eac", "\u0645\u0631\u062d\u0628\u0627",
        "\u0928\u092e\u0938\u094d\u0924\u0947", "a\u0301b", "e\u0301", "\u0301", "a\u00adb", "\u00ad",
        "a\u200bb", "a\ufeffb", "a\u200eb", "\ufb01", "\u2126", "\u212a", "\uff21\uff22", "a\u0237",
        "\U0001f600", "a\U0001f600b", "\U0001f44d\U0001f3fd", "\U0001d400", "\u0e01\u0e34", "\u05d0\u05b8",
        "\u0915\u093c", "\u2160", "\u24b6", "\u1e9e", "\u00c0", "\u0149", "\u1f88",
        # characters that %caseless matches with an ASCII letter of the grammar's literals
        "Th\u0130s", "Th\u0131s", "The\u017fe", "\u0131nc.", "\u212ay.", "ca\u212a\u212aot", "\u0131t's",
    ],
    "blank": [" ", "  ", "\t", "\u00a0", "\u2003", "\u3000", "\u2009", "\u200a", "\u0000", ""],
    "word": ["a", "dog", "The", "I", "However", "HOWEVER", "He", "he", "The", "SHE", "It", "you", "At", "Mr.", "Ms.", "But", "Ltd", "ltd", "lim", "Limited", "5", "x", "A", "An", "So"],
}

_GLUE = ["", "", " ", " ", " ", " ", " ", "  ", "\t", "\u00a0"]


def grammar_caption(rng: random.Random, families: list[str] | None = None) -> str:
    names = families or list(FAMILIES)
    parts: list[str] = []
    for _ in range(rng.randint(2, 9)):
        fam = rng.choice(names) if rng.random() < 0.7 else "word"
        piece = rng.choice(FAMILIES[fam])
        r = rng.random()
        if r < 0.1:
            piece = piece.upper()
        elif r < 0.2:
            piece = piece[:1].upper() + piece[1:]
        parts.append(piece)
        parts.append(rng.choice(_GLUE) if rng.random() < 0.3 else " ")
    return "".join(parts).strip(" ")


def grammar_captions(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [grammar_caption(rng) for _ in range(n)]
