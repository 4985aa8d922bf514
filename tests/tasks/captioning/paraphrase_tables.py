"""Small paraphrase tables for the tests of the index and of the pass over the table: every kind of
line the jar's StringTokenizer reads (odd blanks, empty phrases, non-ASCII words)."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

from vlbench.tasks.captioning.meteor import paraphrase as P


def write_table(path: Path, entries: list[tuple[str, str, str]]) -> None:
    with gzip.open(path, "wt", encoding="utf-8", newline="\n") as f:
        for prob, a, b in entries:
            f.write(f"{prob}\n{a}\n{b}\n")


WORDS = ["a", "man", "dog", "café", "x-ray", "'s", "ﬁ", "red", "bus", "𝔘nicode", "ж", "extraordinarily-long-word"]


def entries_of_every_kind(rng: random.Random, n: int, odd: bool = True) -> list[tuple[str, str, str]]:
    out = []
    for k in range(n):
        a = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))
        b = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))
        out.append((f"0.{k}", a, b))
    if odd:  # lines not in canonical form, and empty phrases: the jar tokenizes them with StringTokenizer
        out += [("1", "  a   man ", "dog"), ("1", "a\tman", "red\fbus"), ("1", "", "dog"), ("1", "man", ""),
                ("1", " ", "a"), ("1", "dog ", " dog"), ("1", "\ta", "a\f"), ("1", "x\x0by", "café  ж")]
        rng.shuffle(out)
    return out


def tokens(line: str) -> tuple[str, ...]:
    return tuple(P.string_tokens(line))
