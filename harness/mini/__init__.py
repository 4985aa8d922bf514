"""vlbench-mini: the procedurally generated benchmark bundled with vlbench (no download).

`write_mini_benchmark(out)` draws the world (seeded, no network) and writes its images and every
annotation file in the real formats; the four `mini-*` benchmarks are made from these files by
the tasks' own `prepare` (`python -m harness.mini.ship`). See `harness/mini/README.md`.

This module imports nothing heavy: task packages import `harness.mini.files` and
`harness.mini.world` while the registry loads, and the generator imports a task module
(`tasks.decorrelated.removal`), so the generator is loaded only when called.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.mini.build import MiniConfig


def write_mini_benchmark(
    out: Path, seed: int = 0, config: MiniConfig | None = None, images: bool = True
) -> list[Path]:
    """Write the mini world's images and annotation files under `out`; returns the paths written.

    `config` (a `harness.mini.build.MiniConfig`) overrides the defaults; `images=False` writes
    the annotation files only.
    """
    from harness.mini.build import write_mini_benchmark as build

    return build(Path(out), seed=seed, config=config, images=images)


__all__ = ["write_mini_benchmark"]
