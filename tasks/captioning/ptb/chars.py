"""How the CoreNLP 3.4.1 PTB lexer treats each non-ASCII character of the Basic Multilingual Plane,
as measured with the jar (`-preserveLines -lowerCase`, as pycocoevalcap runs it).

The lexer's character classes were built from the Unicode tables of 2014, so they cannot be read
off Python's `unicodedata` (letters added to Unicode since are not letters to it). Each table
below lists code points whose behaviour was measured, one jar run per class, in the contexts that
`tests/tasks/captioning/ptb/test_chars.py` checks again on every run with Java (it also prints
the tables anew when they differ):

* LETTERS: word characters, lower-cased as Python's `str.lower` does ("a{c}b" is one token);
* SYMBOLS: each one a token by itself, kept after the punctuation drop ("a{c}b" is "a {c} b",
  also between digits, after "I." and in runs: "{c}{c}" is two tokens);
* DELETED: dropped by the lexer, but a token boundary ("a{c}b" is "a b"); not a blank to its
  sentence-end look-ahead ("I.{c}The" keeps the period);
* SPACES (the lexer's blanks besides space and tab): a boundary and a blank to that look-ahead.

Characters outside the BMP (emoji, skin tones, supplementary letters) reach the lexer as two UTF-16
surrogates that it deletes; they are DELETED too. Every other non-ASCII character (the few the
lexer rewrites, such as "\u20ac" to "$", fractions, soft hyphens, letters whose lower case is
context-dependent) is unknown here, and a caption with one goes to the whole lexer (`lexer.py`).
"""

from __future__ import annotations

from bisect import bisect_right


def _ranges(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    starts: list[int] = []
    ends: list[int] = []
    for item in text.split():
        a, _, b = item.partition("-")
        starts.append(int(a, 16))
        ends.append(int(b or a, 16))
    return tuple(starts), tuple(ends)


def _inside(cp: int, table: tuple[tuple[int, ...], tuple[int, ...]]) -> bool:
    k = bisect_right(table[0], cp) - 1
    return k >= 0 and cp <= table[1][k]


SPACES = frozenset("\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u3000")
# Characters the lexer rewrites into a token that the punctuation drop removes, or into "--"
# (dashes) and "..." (the ellipsis), also dropped: to the tokens they are boundaries.
DROPPED_TOKENS = {
    "\u2013": "--", "\u2014": "--", "\u2015": "--", "\u2026": "...",
    "\u00ab": "``", "\u00bb": "\'\'", "\u2039": "`", "\u203a": "\'", "\u201c": "``", "\u201d": "\'\'",
}

LETTERS = _ranges(
    "00aa 00b5 00ba 00c0-00d6 00d8-00f6 00f8-02c1 02c6-02d1 02e0-02e4 02ec 02ee 0370-0374 0376-0377 "
    "037a-037d 0386 0388-038a 038c 038e-03a1 03a3-03f5 03f7-0481 048a-0527 0531-0556 0559 0561-0587 "
    "05d0-05ea 05f0-05f2 0620-064a 066e-066f 0671-06d3 06d5 06e5-06e6 06ee-06ef 06fa-06fc 06ff 0710 "
    "0712-072f 074d-07a5 07b1 07ca-07ea 07f4-07f5 07fa 0800-0815 081a 0824 0828 0840-0858 08a0 "
    "08a2-08ac 0904-0939 093d 0950 0958-0961 0971-0977 0979-097f 0985-098c 098f-0990 0993-09a8 "
    "09aa-09b0 09b2 09b6-09b9 09bd 09ce 09dc-09dd 09df-09e1 09f0-09f1 0a05-0a0a 0a0f-0a10 0a13-0a28 "
    "0a2a-0a30 0a32-0a33 0a35-0a36 0a38-0a39 0a59-0a5c 0a5e 0a72-0a74 0a85-0a8d 0a8f-0a91 0a93-0aa8 "
    "0aaa-0ab0 0ab2-0ab3 0ab5-0ab9 0abd 0ad0 0ae0-0ae1 0b05-0b0c 0b0f-0b10 0b13-0b28 0b2a-0b30 "
    "0b32-0b33 0b35-0b39 0b3d 0b5c-0b5d 0b5f-0b61 0b71 0b83 0b85-0b8a 0b8e-0b90 0b92-0b95 0b99-0b9a "
    "0b9c 0b9e-0b9f 0ba3-0ba4 0ba8-0baa 0bae-0bb9 0bd0 0c05-0c0c 0c0e-0c10 0c12-0c28 0c2a-0c33 "
    "0c35-0c39 0c3d 0c58-0c59 0c60-0c61 0c85-0c8c 0c8e-0c90 0c92-0ca8 0caa-0cb3 0cb5-0cb9 0cbd 0cde "
    "0ce0-0ce1 0cf1-0cf2 0d05-0d0c 0d0e-0d10 0d12-0d3a 0d3d 0d4e 0d60-0d61 0d7a-0d7f 0d85-0d96 "
    "0d9a-0db1 0db3-0dbb 0dbd 0dc0-0dc6 0e01-0e30 0e32-0e33 0e40-0e46 0e81-0e82 0e84 0e87-0e88 0e8a "
    "0e8d 0e94-0e97 0e99-0e9f 0ea1-0ea3 0ea5 0ea7 0eaa-0eab 0ead-0eb0 0eb2-0eb3 0ebd 0ec0-0ec4 0ec6 "
    "0edc-0edf 0f00 0f40-0f47 0f49-0f6c 0f88-0f8c 1000-102a 103f 1050-1055 105a-105d 1061 1065-1066 "
    "106e-1070 1075-1081 108e 10a0-10c5 10c7 10cd 10d0-10fa 10fc-1248 124a-124d 1250-1256 1258 "
    "125a-125d 1260-1288 128a-128d 1290-12b0 12b2-12b5 12b8-12be 12c0 12c2-12c5 12c8-12d6 12d8-1310 "
    "1312-1315 1318-135a 1380-138f 13a0-13f4 1401-166c 166f-167f 1681-169a 16a0-16ea 1700-170c "
    "170e-1711 1720-1731 1740-1751 1760-176c 176e-1770 1780-17b3 17d7 17dc 1820-1877 1880-1884 "
    "1887-18a8 18aa 18b0-18f5 1900-191c 1950-196d 1970-1974 1980-19ab 19c1-19c7 1a00-1a16 1a20-1a54 "
    "1aa7 1b05-1b33 1b45-1b4b 1b83-1ba0 1bae-1baf 1bba-1be5 1c00-1c23 1c4d-1c4f 1c5a-1c7d 1ce9-1cec "
    "1cee-1cf1 1cf5-1cf6 1d00-1dbf 1e00-1f15 1f18-1f1d 1f20-1f45 1f48-1f4d 1f50-1f57 1f59 1f5b 1f5d "
    "1f5f-1f7d 1f80-1fb4 1fb6-1fbc 1fbe 1fc2-1fc4 1fc6-1fcc 1fd0-1fd3 1fd6-1fdb 1fe0-1fec 1ff2-1ff4 "
    "1ff6-1ffc 2071 207f 2090-209c 2102 2107 210a-2113 2115 2119-211d 2124 2126 2128 212a-212d "
    "212f-2139 213c-213f 2145-2149 214e 2183-2184 2c00-2c2e 2c30-2c5e 2c60-2ce4 2ceb-2cee 2cf2-2cf3 "
    "2d00-2d25 2d27 2d2d 2d30-2d67 2d6f 2d80-2d96 2da0-2da6 2da8-2dae 2db0-2db6 2db8-2dbe 2dc0-2dc6 "
    "2dc8-2dce 2dd0-2dd6 2dd8-2dde 2e2f 3005-3006 3031-3035 303b-303c 3041-3096 309d-309f 30a1-30fa "
    "30fc-30ff 3105-312d 3131-318e 31a0-31ba 31f0-31ff 3400-4db5 4e00-9fcc a000-a48c a4d0-a4fd "
    "a500-a60c a610-a61f a62a-a62b a640-a66e a67f-a697 a6a0-a6e5 a717-a71f a722-a788 a78b-a78e "
    "a790-a793 a7a0-a7aa a7f8-a801 a803-a805 a807-a80a a80c-a822 a840-a873 a882-a8b3 a8f2-a8f7 a8fb "
    "a90a-a925 a930-a946 a960-a97c a984-a9b2 a9cf aa00-aa28 aa40-aa42 aa44-aa4b aa60-aa76 aa7a "
    "aa80-aaaf aab1 aab5-aab6 aab9-aabd aac0 aac2 aadb-aadd aae0-aaea aaf2-aaf4 ab01-ab06 ab09-ab0e "
    "ab11-ab16 ab20-ab26 ab28-ab2e abc0-abe2 ac00-d7a3 d7b0-d7c6 d7cb-d7fb f900-fa6d fa70-fad9 "
    "fb00-fb06 fb13-fb17 fb1d fb1f-fb28 fb2a-fb36 fb38-fb3c fb3e fb40-fb41 fb43-fb44 fb46-fbb1 "
    "fbd3-fd3d fd50-fd8f fd92-fdc7 fdf0-fdfb fe70-fe74 fe76-fefc ff21-ff3a ff41-ff5a ff66-ffbe "
    "ffc2-ffc7 ffca-ffcf ffd2-ffd7 ffda-ffdc "
)

SYMBOLS = _ranges(
    "00a1 00a5-00a9 00ac 00ae-00b1 00b4 00b6-00b8 00bf 00d7 00f7 037e 0387 0589 05be 05c0 05c3 05c6 "
    "05f3-05f4 0600-0603 0606-060c 0614 061b 061e-061f 066a 066d 06d4 0700-070d 07f6-07f8 0964-0965 "
    "0e3f 0e4f 1fbd 2016-2017 2020-2023 2030-2038 203b 203e 2041-2042 207a-207e 208a-208e 20a4 "
    "2100-2101 2103-2106 2108-2109 2114 2116-2118 211e-2123 2125 2127 2129 212e 213a-213b 2140-2144 "
    "214a-214d 214f 2155-215e 2190-2426 2440-244a 2460-24b5 24d0-2b73 2b76-2b95 2b97-2bff 3001-3002 "
    "3012 30fb ff01-ff0f ff1a-ff20 ff3b-ff3e ff40 ff5b-ff65 ffe0-ffe1 ffe5-ffe6 "
)

# (also the C0 and C1 controls but the line ends, which are blanks by then, and U+0080, U+0091-U+0094,
# which the lexer reads as Windows-1252's euro sign and curly quotes)
DELETED = _ranges(
    "0000-0008 000e-001f 007f 0081-0084 0086-0090 0095-009f 037f 0482 0488-0489 0528-052f 0560 0588 "
    "058d-058f 05ef 0604-0605 060d-0613 061c-061d 065f 07f9 07fd-07ff 0816-0819 081b-0823 0825-0827 "
    "0829-082d 0830-083e 0859-085b 085e 0860-086a 0870-088e 0890-0891 0898-089f 08a1 08ad-08ff "
    "093a-093b 094f 0956-0957 0970 0978 0980 09f2-09fe 0a51 0a70-0a71 0a75-0a76 0ae2-0ae3 0af0-0af1 "
    "0af9-0aff 0b01-0b03 0b3c 0b3e-0b44 0b47-0b48 0b4b-0b4d 0b55-0b57 0b62-0b63 0b70 0b72-0b77 0bd7 "
    "0bf0-0bfa 0c00 0c04 0c34 0c3c 0c5a 0c5d 0c62-0c63 0c77-0c84 0cbc 0cbe-0cc4 0cc6-0cc8 0cca-0ccd "
    "0cd5-0cd6 0cdd 0ce2-0ce3 0d00-0d04 0d3b-0d3c 0d4a-0d4d 0d4f 0d54-0d5f 0d62-0d63 0d70-0d79 "
    "0d81-0d83 0dca 0dcf-0dd4 0dd6 0dd8-0ddf 0df2-0df4 0e5a-0e5b 0e86 0e89 0e8c 0e8e-0e93 0e98 0ea0 "
    "0ea8-0ea9 0eac 0f01-0f1f 0f2a-0f3f 0f71-0f87 0f8d-0f97 0f99-0fbc 0fbe-0fcc 0fce-0fda 102b-103e "
    "104a-104f 1056-1059 105e-1060 1062-1064 1067-106d 1071-1074 1082-108d 108f 109a-109f 10fb "
    "135d-137c 1390-1399 13f5 13f8-13fd 1400 166d-166e 1680 169b-169c 16eb-16ed 16f1-16f8 170d "
    "1712-1715 171f 1732-1736 1752-1753 1772-1773 17b4-17d6 17d8-17db 17dd 17f0-17f9 1800-180f 1878 "
    "18a9 191d-191e 1920-192b 1930-193b 1940 1944-1945 19b0-19c0 19c8-19c9 19da 19de-19ff 1a17-1a1b "
    "1a1e-1a1f 1a55-1a5e 1a60-1a7c 1a7f 1aa0-1aa6 1aa8-1aad 1ab0-1ace 1b00-1b04 1b34-1b44 1b4c "
    "1b5a-1b7e 1b80-1b82 1ba1-1bad 1be6-1bf3 1bfc-1bff 1c24-1c37 1c3b-1c3f 1c7e-1c88 1c90-1cba "
    "1cbd-1cc7 1cd0-1ce8 1ced 1cf2-1cf4 1cf7-1cfa 1dc0-1dff 1fbf-1fc1 1fcd-1fcf 1fdd-1fdf 1fed-1fef "
    "1ffd-1ffe 200b-200f 2012 2024-2025 2027 202a-202f 203c-203d 2043 2045-2053 2055-2064 2066-206f "
    "20a1-20a3 20a5-20ab 20ad-20c0 20d0-20f0 2150-2152 215f 2189-218b 2c2f 2c5f 2ce5-2cea 2cef-2cf1 "
    "2cf9-2cff 2d70 2d7f 2de0-2e2e 2e30-2e5d 2e80-2e99 2e9b-2ef3 2f00-2fd5 2ff0-2ffb 3003-3004 "
    "3008-3011 3013-3020 302a-3030 3036-3037 303d-303f 3099-309c 30a0 312e-312f 3190-319f 31bb-31e3 "
    "3200-321e 3220-33ff 4db6-4dff 9fcd-9fff a490-a4c6 a4fe-a4ff a60d-a60f a66f-a67e a698-a69f "
    "a6f0-a6f7 a700-a716 a720-a721 a789-a78a a78f a794-a79f a7ab-a7ca a7d0-a7d1 a7d3 a7d5-a7d9 "
    "a7f2-a7f7 a802 a806 a80b a823-a82c a830-a839 a874-a877 a880-a881 a8b4-a8c5 a8ce-a8cf a8e0-a8f1 "
    "a8f8-a8fa a8fc-a8ff a926-a92f a947-a953 a95f a980-a983 a9b3-a9cd a9de-a9ef a9fa-a9fe aa29-aa36 "
    "aa43 aa4c-aa4d aa5c-aa5f aa77-aa79 aa7b-aa7f aab0 aab2-aab4 aab7-aab8 aabe-aabf aac1 aade-aadf "
    "aaeb-aaf1 aaf5-aaf6 ab30-ab6b ab70-abbf abe3-abed fb1e fb29 fbb2-fbc2 fd3e-fd4f fdcf fdfc-fe19 "
    "fe20-fe32 fe35-fe4c fe50-fe52 fe54-fe66 fe68-fe6b feff ffe2-ffe4 ffe8-ffee fff9-fffd "
)


LETTER, SYMBOL, DELETE, SPACE, DROPPED, UNKNOWN = "letter", "symbol", "deleted", "space", "dropped", "unknown"


def char_class(c: str) -> str:
    """The class of one non-ASCII or control character (see the module docstring)."""
    cp = ord(c)
    if cp > 0xFFFF:
        return DELETE
    if c in SPACES:
        return SPACE
    if c in DROPPED_TOKENS:
        return DROPPED
    if _inside(cp, LETTERS):
        return LETTER
    if _inside(cp, SYMBOLS):
        return SYMBOL
    if _inside(cp, DELETED):
        return DELETE
    return UNKNOWN
