"""Python 3.10 behaviour the scoring core relies on, as explicit functions that also run on 3.9.

EvalAI's submission workers run Python 3.9 (its default), so the core (`pip install vlbench`,
`vlbench score`, `vlbench.evalai`) must run there. `zip(..., strict=True)` is 3.10's: the core
calls `strict_zip(...)` instead, which is that builtin on 3.10 and newer and the same behaviour
(ValueError naming the argument that is shorter or longer) written out on 3.9. Nothing here
changes a builtin: other code in the process sees Python as it is. `baselines/` needs 3.10 and
calls `zip(..., strict=True)` itself.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any

_END = object()


def _zip_strict(*iterables: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
    """`zip(*iterables, strict=True)` of Python 3.10, messages included."""
    iterators = [iter(it) for it in iterables]
    if not iterators:
        return
    while True:
        items = []
        for n, it in enumerate(iterators):
            try:
                items.append(next(it))
            except StopIteration:
                if n == 0:  # the first ran out: so must every other
                    for m, other in enumerate(iterators[1:], start=2):
                        if next(other, _END) is not _END:
                            plural = " " if m == 2 else "s 1-"
                            raise ValueError(f"zip() argument {m} is longer than argument{plural}{m - 1}") from None
                    return
                plural = " " if n == 1 else "s 1-"
                raise ValueError(f"zip() argument {n + 1} is shorter than argument{plural}{n}") from None
        yield tuple(items)


if sys.version_info >= (3, 10):

    def strict_zip(*iterables: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
        """`zip(*iterables, strict=True)`: tuples of the iterables' items, and ValueError when
        they differ in length."""
        return zip(*iterables, strict=True)

else:
    strict_zip = _zip_strict
