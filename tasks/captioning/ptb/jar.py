"""The CoreNLP 3.4.1 PTB jar that pycocoevalcap runs (`PTBTokenizer -preserveLines -lowerCase`),
driven line-safe: the cross-check behind `VLBENCH_PTB=jar`, and the tests' oracle. No caption
needs it: Python answers every shape (`vlbench.tasks.captioning.ptb.tokenize`)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from vlbench.backports import strict_zip
from vlbench.tasks.captioning.java import JavaUnavailable, java_command, ptb_jar
from vlbench.tasks.captioning.ptb.lines import (
    clean_line_breaks,
    pycoco_successors,
    strip_punctuation,
)


class TokenizerUnavailable(RuntimeError):
    """The PTB jar was asked for (`jar_tokenize`, or `VLBENCH_PTB=jar`) and Java or the jar is missing."""

    def __init__(self, message: str, captions: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.captions = list(captions)  # the captions that needed the jar



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

    The lexer looks ahead across line ends: "... i." loses its period when the next non-blank
    line starts with a sentence starter ("However ..."); ":)" on the last line of a file without
    a final newline comes out as "-rrb-". pycocoevalcap writes all references (and, separately,
    all candidates) into one file, so a caption's tokens can depend on the captions after it.
    `successors[i]` is the text that follows caption i's line end in pycocoevalcap's file, as
    `pycoco_successors` gives it (None: it is the file's last line); each caption is tokenized
    followed by exactly that text, so the result is the reference's. Without `successors`, the
    captions are taken as one file in their order.
    """
    if not captions:
        return []
    succ = list(successors) if successors is not None else pycoco_successors([captions])
    # a successor that ends with a line end can be followed by other captions' text without
    # changing what the lexer sees; one that reaches the end of the file needs a run of its own
    packed = [i for i, s in enumerate(succ) if s is not None and s.endswith("\n")]
    alone = [i for i, s in enumerate(succ) if s is None or not s.endswith("\n")]
    out: list[str] = [""] * len(captions)
    if packed:
        blocks = [clean_line_breaks(captions[i]) + "\n" + succ[i] for i in packed]  # type: ignore[operator]
        lines = _run_jar("".join(blocks), timeout)
        expected = sum(b.count("\n") for b in blocks)
        if len(lines) != expected:
            raise RuntimeError(f"the PTB tokenizer returned {len(lines)} lines for {expected}; refusing to misalign")
        at = 0
        for i, block in strict_zip(packed, blocks):
            out[i] = strip_punctuation(lines[at])
            at += block.count("\n")
    for i in alone:  # the file's last lines, without a final newline (a few per scoring run)
        text = clean_line_breaks(captions[i]) + ("" if succ[i] is None else "\n" + succ[i])
        lines = _run_jar(text, timeout)
        if len(lines) > text.count("\n") + 1:
            raise RuntimeError("the PTB tokenizer split one caption into several lines; refusing to misalign")
        out[i] = strip_punctuation(lines[0] if lines else "")
    return out

