"""Progress for long work: shown on a terminal, quiet in pipes, logs and CI.

`VLBENCH_PROGRESS=0` turns it off, `VLBENCH_PROGRESS=1` on (even without a terminal); `enabled`
is the one place that decides. Every bar of vlbench comes from here: task packages and recipes use
`progress` (a loop), `bar` (a count updated by hand, e.g. per batch) and `stage` (one step without
a count) for their long steps (building the mini world, the METEOR paraphrase index, preparing
ground truth, filling removed regions, encoding, training, scoring the leaderboard's
submissions); the command line also quiets third-party tqdm bars when stderr is not a terminal
(`quiet_bars`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

# How every bar looks: redrawn at most twice a second, as wide as the terminal, gone when done.
_STYLE: dict[str, Any] = {"mininterval": 0.5, "leave": False, "dynamic_ncols": True}


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


def progress(iterable: Iterable[T], desc: str, total: int | None = None, unit: str = "it", *,
             show: bool = True) -> Iterable[T]:
    """`iterable` with a progress bar on stderr when `enabled()` and `show` (as for `bar`), else
    `iterable` itself."""
    if not (show and enabled()):
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, desc=desc, total=total, unit=unit, file=sys.stderr, disable=False, **_STYLE)


class _Silent:
    """The bar of `bar` when progress is off: the calls a caller makes, doing nothing (and no
    tqdm import)."""

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix(self, **values: Any) -> None:
        pass


@contextlib.contextmanager
def bar(total: int | None, desc: str | None = None, unit: str = "it", *, initial: int = 0,
        show: bool = True) -> Iterator[Any]:
    """A bar counted by hand (`update(n)`, `set_postfix(...)`) on stderr, closed when the block
    ends. Shown when `enabled()` and `show`: the caller's own reason to stay quiet (a `--quiet`
    flag, a process other than the main one, `progress=False`) can only turn it off."""
    if not (show and enabled()):
        yield _Silent()
        return
    from tqdm import tqdm

    with tqdm(total=total, initial=initial, desc=desc, unit=unit, file=sys.stderr, disable=False, **_STYLE) as shown:
        yield shown


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


__all__ = ["bar", "enabled", "progress", "quiet_bars", "stage"]
