"""The lines pycocoevalcap writes for the PTB jar and reads back: line breaks inside a caption,
the lexer's blanks, what follows each caption in its file (the lexer looks past a line end), and
the punctuation pycocoevalcap drops from each tokenized line.

Line separators: the jar splits lines on \\r, \\u2028, \\u2029, \\x0b, \\x0c and \\x85 as well as
\\n, so pycocoevalcap (which only replaces \\n) misaligns every later caption. vlbench replaces all
of them with a space before tokenizing (the same treatment pycocoevalcap gives \\n), on every
path, and checks that the jar returns exactly one line per caption.
"""

from __future__ import annotations

from collections.abc import Sequence

# Tokens pycocoevalcap drops after tokenizing (exact, case-sensitive: -lrb- etc. survive).
PUNCTUATIONS = frozenset(
    ["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-", "--", "...", ";"]
)

# The lexer's SPACE class (its blanks; chars.SPACES holds the wide ones).
LEXER_BLANKS = " \t\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u3000"
LINE_BREAKS = "\r\x0b\x0c\x85\u2028\u2029\n"
_LINE_BREAK_TABLE = str.maketrans({c: " " for c in LINE_BREAKS})


def clean_line_breaks(caption: str) -> str:
    return caption.translate(_LINE_BREAK_TABLE)


def strip_punctuation(line: str) -> str:
    """A tokenized line as pycocoevalcap reads it back: trailing blanks removed, the drop list's
    tokens left out."""
    return " ".join(w for w in line.rstrip().split(" ") if w not in PUNCTUATIONS)


def is_blank_line(line: str) -> bool:
    """True when the lexer sees nothing but blanks on the line (its look-ahead runs on past it)."""
    return not line.translate(_LINE_BREAK_TABLE).strip(LEXER_BLANKS)


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
            nxt[i] = nxt[i + 1] if is_blank_line(lines[i]) else i
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

