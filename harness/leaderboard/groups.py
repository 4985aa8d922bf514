"""Seeds of one method shown as one entry: what the page and the plot present to a visitor.

Runs of one recipe that differ only in their seed ("mini-odmap arm 1 biased (seed 0)", "... (seed
1)", ...) are one method: one row of the board (their mean, ranked as one entry, each seed one
click away; `ranking.py`) and one point of the plot. A submission belongs to a group when its
`meta.method` ends with a seed marker ("(seed 3)", "seed=3", "- seed 3") and another submission of
the same team on the same board has the same method name without it. The data files (JSON, CSV)
keep one row per submission besides the board's rows.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vlbench.leaderboard.build import Board, Entry

_SEED = re.compile(r"[\s,;:_-]*[(\[]?\s*seed\s*[=:#]?\s*(\d+)\s*[)\]]?\s*$", re.IGNORECASE)


def split_seed(method: object) -> tuple[str, int | None]:
    """("mini-odmap arm 1 biased (seed 0)") -> ("mini-odmap arm 1 biased", 0); no marker: (method, None)."""
    text = str(method or "")
    found = _SEED.search(text)
    if not found or not text[: found.start()].strip():
        return text, None
    return text[: found.start()].rstrip(), int(found.group(1))


def family_key(method: object) -> str:
    """The method's name without its seed marker, for matching (case and spacing ignored)."""
    return re.sub(r"\s+", " ", split_seed(method)[0]).strip().casefold()


@dataclass
class MethodGroup:
    """One method on a board: a single submission, or its seeds (two or more)."""

    name: str
    entries: list[Entry]

    @property
    def seeded(self) -> bool:
        return len(self.entries) > 1

    def values(self, key: str) -> list[float]:
        return [v for e in self.entries if (v := e.result.scores.get(key)) is not None]

    def mean(self, key: str) -> float | None:
        """The mean over the seeds (exactly rounded: the same on every machine); None unless every
        seed has the metric."""
        values = self.values(key)
        return math.fsum(values) / len(values) if values and len(values) == len(self.entries) else None

    def spread(self, key: str) -> tuple[float, float] | None:
        """(lowest, highest) across seeds."""
        values = self.values(key)
        return (min(values), max(values)) if self.seeded and len(values) == len(self.entries) else None



def method_groups(board: Board) -> list[MethodGroup]:
    """The board's entries as methods, in board order (a group where its first seed is; its seeds
    in seed order)."""
    keyed: dict[tuple[str, str], list[Entry]] = {}
    order: list[tuple[str, str] | int] = []
    for i, e in enumerate(board.entries):
        name, seed = split_seed(e.result.meta.get("method"))
        if seed is None:
            order.append(i)
            continue
        key = (family_key(name), str(e.result.meta.get("team", "")))
        if key not in keyed:
            keyed[key] = []
            order.append(key)
        keyed[key].append(e)
    out = []
    for item in order:
        if isinstance(item, int):
            e = board.entries[item]
            out.append(MethodGroup(str(e.result.meta.get("method", "?")), [e]))
        elif len(keyed[item]) == 1:
            e = keyed[item][0]
            out.append(MethodGroup(str(e.result.meta.get("method", "?")), [e]))
        else:
            seeds = sorted(keyed[item], key=lambda e: split_seed(e.result.meta.get("method"))[1] or 0)
            out.append(MethodGroup(split_seed(seeds[0].result.meta.get("method"))[0], seeds))
    return out
