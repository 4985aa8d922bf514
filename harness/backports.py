"""Python 3.10 behaviour the scoring core relies on, provided on Python 3.9.

EvalAI's submission workers run Python 3.9 (its default), so the core (`pip install vlbench`,
`vlbench score`, `vlbench.evalai`) must run there. The code is written for 3.10 and uses
`zip(..., strict=...)` throughout; rather than rewrite every call, `import vlbench` gives the
builtin `zip` that keyword on 3.9 only, with 3.10's meaning (ValueError when the iterables differ
in length). Without `strict`, or with `strict=False`, the original builtin runs, so other code in
the process sees no difference. On 3.10 and newer this module does nothing.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Iterable, Iterator
from typing import Any

_builtin_zip = builtins.zip


def _zip_strict(*iterables: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
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
                            raise ValueError(f"zip() argument {m} is longer than argument 1") from None
                    return
                plural = " " if n == 1 else "s 1-"
                raise ValueError(f"zip() argument {n + 1} is shorter than argument{plural}{n}") from None
        yield tuple(items)


_END = object()


class _zip:  # noqa: N801 (stands in for the builtin `zip`)
    def __new__(cls, *iterables: Iterable[Any], strict: bool = False) -> Any:
        return _zip_strict(*iterables) if strict else _builtin_zip(*iterables)


def install() -> None:
    """Give `zip` its `strict` keyword (Python 3.9 only)."""
    if sys.version_info < (3, 10) and builtins.zip is _builtin_zip:
        builtins.zip = _zip  # type: ignore[misc,assignment]
