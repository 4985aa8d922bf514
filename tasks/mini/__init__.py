"""vlbench-mini: the procedurally generated benchmark bundled with vlbench (no download).

`write_mini_benchmark(out)` draws the world (seeded, no network) and writes its images and every
annotation file in the real formats; the four `mini-*` benchmarks are made from these files by
the tasks' own `prepare` (`python -m vlbench.tasks.mini.ship`). See `tasks/mini/README.md`.

This module imports nothing heavy: task packages import `vlbench.tasks.mini.files` and
`vlbench.tasks.mini.world` while the registry loads, and the generator imports a task module
(`tasks.decorrelated.removal`), so the generator is loaded only when called.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vlbench.tasks.mini.build import MiniConfig


def write_mini_benchmark(
    out: Path, seed: int = 0, config: MiniConfig | None = None, images: bool = True
) -> list[Path]:
    """Write the mini world's images and annotation files under `out`; returns the paths written.

    `config` (a `vlbench.tasks.mini.build.MiniConfig`) overrides the defaults; `images=False` writes
    the annotation files only.
    """
    from vlbench.tasks.mini.build import write_mini_benchmark as build

    return build(Path(out), seed=seed, config=config, images=images)


def add_cli(commands: Any, groups: dict[str, Any]) -> None:
    """`vlbench data mini`: the engine's CLI finds this through registry.cli_plugins."""
    p = groups["data"].add_parser("mini", help="write the mini benchmark's images and annotation files")
    p.add_argument("--out", default="vlbench-mini", help="output folder (default: ./vlbench-mini)")
    p.set_defaults(func=_data_mini)


def _data_mini(args: argparse.Namespace) -> int:
    from vlbench.progress import stage

    with stage(f"writing the mini benchmark to {args.out}"):
        written = write_mini_benchmark(Path(args.out))
    print(f"wrote the mini benchmark to {args.out} ({len(written)} files)")
    return 0


__all__ = ["add_cli", "write_mini_benchmark"]
