"""Pinned sha256 of the mini benchmark's ground-truth files shipped in `harness/mini/data/`.

Written by `python -m harness.mini.ship`, which regenerates the mini world and runs each task's
own `prepare` on it. Benchmark records import `mini_file` so their sha256 is pinned here.
"""

from __future__ import annotations

from harness.registry import PACKAGE, DataFile

SHA256: dict[str, str] = {}


def mini_file(name: str, path: str) -> DataFile:
    """A DataFile shipped in the package under harness/mini/data/."""
    return DataFile(name=name, path=f"data/{path}", sha256=SHA256.get(path), location=PACKAGE)
