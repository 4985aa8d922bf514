"""pycocoevalcap 1.2's `PTBTokenizer`: CoreNLP 3.4.1's PTB tokenizer (`-preserveLines
-lowerCase`) and the punctuation drop list, computed in Python (`vlbench.tasks.captioning.ptb`)
exactly as the jar tokenizes, without Java.

One `tokenize` call is one jar run over one file holding every caption of the call, in dict
order: the jar's lexer looks across line ends (a period after a single letter is split off only
before a sentence starter on the next line), and that is reproduced call by call."""

from __future__ import annotations

import re
import warnings
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from vlbench.compat._captioning import LINE_BREAKS, ptb_tokenize

# the tokens pycocoevalcap drops after tokenizing (its module constant, in its order)
PUNCTUATIONS = ["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-", "--", "...", ";"]

# the jar ends a line at these too, but pycocoevalcap replaces only "\n"
_OTHER_BREAKS = re.compile("[" + re.escape(LINE_BREAKS.replace("\n", "")) + "]")


class PTBTokenizer:
    """`tokenize({image_id: [{"caption": str, ...}, ...]})` -> {image_id: [tokenized caption, ...]},
    images in the input's order (an image with no caption is left out, as in pycocoevalcap)."""

    def tokenize(self, captions_for_image: Mapping[Hashable, Sequence[Mapping[str, Any]]]) -> dict[Hashable, list[str]]:
        image_id = [k for k, v in captions_for_image.items() for _ in range(len(v))]
        captions = [c["caption"] for v in captions_for_image.values() for c in v]
        for k, c in zip(image_id, captions):
            if not isinstance(c, str):
                raise TypeError(f"a caption of image {k!r} is {type(c).__name__}, not a string")
        joined = "\n".join(captions)
        if _OTHER_BREAKS.search(joined):
            warnings.warn(
                "a caption holds a line break other than \\n (\\r, \\x0b, \\x0c, \\x85, U+2028 or "
                "U+2029); pycocoevalcap 1.2 would shift every later caption onto the wrong image "
                "there, while vlbench.compat tokenizes each caption as one line (a space in place "
                "of the break, as pycocoevalcap does for \\n)",
                RuntimeWarning, stacklevel=2,
            )
        out: dict[Hashable, list[str]] = {}
        for k, line in zip(image_id, ptb_tokenize(captions)):
            out.setdefault(k, []).append(line)
        return out
