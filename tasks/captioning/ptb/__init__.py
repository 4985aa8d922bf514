"""PTB tokenization as pycocoevalcap does it, in Python; no caption needs Java.

The entry point: `tokenize(captions, successors=None)` tokenizes captions exactly as
pycocoevalcap's `PTBTokenizer` does (CoreNLP 3.4.1's `PTBTokenizer -preserveLines -lowerCase` on
a file of one caption per line, then its punctuation drop list), and returns the tokenized
strings with the number of captions of rare shapes. `successors` says what follows each caption
in pycocoevalcap's file (`pycoco_successors`), since the lexer looks past a line end; without it
the captions are one file, in their order.

    from vlbench.tasks.captioning.ptb import pycoco_successors, tokenize
    tokens, rare = tokenize(candidates + references, pycoco_successors([candidates, references]))

Each caption goes to the first tier that can answer it exactly, fastest first:

1. `fast.bulk_tokenize`: the commonest shapes, all captions at once with numpy;
2. `fast.fast_tokenize`: context-free shapes, one caption at a time;
3. `rules.extended_tokenize`: the chunk rules (quotes, brackets, Unicode, URLs, emoji,
   abbreviations in context): the caption is cut into chunks (`rules.py`), each chunk read as
   openers, core and closers (`chunks.py`), the core's words (`cores.py`), and whether a period
   stays on its word (`periods.py`), with the lexer's character tables (`chars.py`);
4. `lexer.tokenize_line`: the lexer's whole grammar restated in Python, for rare shapes
   (smileys, e-mail addresses, file names, fractions, SGML...); with `VLBENCH_PTB=jar` those go
   to the real jar instead (`jar.py`), as a cross-check.

`lines.py` holds what every tier shares: line breaks inside captions, the successor text, the
drop list. The tiers import only tiers below them in this list (and `lines`, `chars`), never this
package, so there is no import cycle.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from vlbench.backports import strict_zip
from vlbench.errors import UsageError
from vlbench.tasks.captioning.ptb.fast import fast_tokenize_many
from vlbench.tasks.captioning.ptb.jar import TokenizerUnavailable, jar_tokenize
from vlbench.tasks.captioning.ptb.lines import (
    clean_line_breaks,
    pycoco_successors,
    strip_punctuation,
)

__all__ = ["TokenizerUnavailable", "jar_tokenize", "pycoco_successors", "rare_shape_lexer", "tokenize"]


def rare_shape_lexer() -> str:
    """Who tokenizes the captions that neither the fast paths nor the chunk rules take: "python"
    (`lexer.py`, the whole PTB lexer in Python; the default) or "jar" (the CoreNLP jar, a
    cross-check switch: `VLBENCH_PTB=jar`)."""
    choice = os.environ.get("VLBENCH_PTB", "python").strip().lower() or "python"
    if choice not in ("python", "jar"):
        raise UsageError(f"VLBENCH_PTB must be 'python' or 'jar', not {choice!r}")
    return choice


def tokenize(
    captions: Sequence[str], successors: Sequence[str | None] | None = None
) -> tuple[list[str], int]:
    """Tokenize every caption as pycocoevalcap's PTB jar does; returns (tokenized strings, number
    of captions of rare shapes, which the whole lexer `lexer.py` took, or the jar with
    `VLBENCH_PTB=jar`).

    `successors`: see `pycoco_successors` (default: the captions are one file, in their order)."""
    # the slower tiers load only when a caption needs them (most runs never reach the lexer)
    from vlbench.tasks.captioning.ptb.lexer import tokenize_line
    from vlbench.tasks.captioning.ptb.rules import extended_tokenize

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
        for i, t in strict_zip(slow, done):
            out[i] = t
    else:
        for i in slow:
            tokens = tokenize_line(clean_line_breaks(captions[i]), successors[i])  # type: ignore[index]
            # as pycocoevalcap reads the jar's output line (rstrip also takes Unicode blanks that
            # end a URL or e-mail token)
            out[i] = strip_punctuation(" ".join(tokens))
    return out, len(slow)  # type: ignore[return-value]
