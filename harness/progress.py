"""Progress for long work: shown on a terminal, quiet in pipes, logs and CI.

`VLBENCH_PROGRESS=0` turns it off, `VLBENCH_PROGRESS=1` on (even without a terminal). Task
packages use these for their long steps (building the mini world, the METEOR paraphrase index,
preparing ground truth); the command line also quiets third-party tqdm bars when stderr is not a
terminal (`quiet_bars`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def enabled() -> bool:
    """Whether to show progress: forced by VLBENCH_PROGRESS, else when stderr is a terminal."""
    forced = os.environ.get("VLBENCH_PROGRESS", "").strip().lower()
    if forced in ("0", "false", "no", "off"):
        return False
    if forced in ("1", "true", "yes", "on"):
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def progress(iterable: Iterable[T], desc: str, total: int | None = None, unit: str = "it") -> Iterable[T]:
    """`iterable` with a progress bar on stderr when `enabled()`, else `iterable` itself."""
    if not enabled():
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, desc=desc, total=total, unit=unit, mininterval=0.5, leave=False,
                file=sys.stderr, disable=False)


@contextlib.contextmanager
def stage(desc: str) -> Iterator[None]:
    """One long step without a count: `desc ...`, then `desc: done in 12.3 s`, when `enabled()`
    (two lines, so that warnings printed meanwhile do not break one)."""
    if not enabled():
        yield
        return
    print(f"{desc} ...", file=sys.stderr, flush=True)
    started = time.perf_counter()
    yield
    print(f"{desc}: done in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)


@contextlib.contextmanager
def quiet_bars() -> Iterator[None]:
    """Within: tqdm bars that did not choose otherwise stay off unless progress is `enabled()`."""
    if enabled() or "TQDM_DISABLE" in os.environ:
        yield
        return
    os.environ["TQDM_DISABLE"] = "1"
    try:
        yield
    finally:
        os.environ.pop("TQDM_DISABLE", None)


__all__ = ["enabled", "progress", "quiet_bars", "stage"]
