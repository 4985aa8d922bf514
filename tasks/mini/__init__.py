"""vlbench-mini: the procedurally generated benchmark bundled with vlbench (no download).

`write_mini_benchmark(out)` draws the world (seeded, no network) and writes its images and every
annotation file in the real formats; the `mini-*` benchmarks are made from these files by the
tasks' own `prepare` (`python -m vlbench.tasks.mini.ship`). There are two worlds (`build.WORLDS`):
each benchmark record names the one it is made from (`mini_world`: v2 by default, v3 for
mini-decorrelated 3.0 and mini-shapes-retrieval), and `vlbench data mini --world` or
`--benchmark` writes it. See `tasks/mini/README.md`.

This module imports nothing heavy: task packages import `vlbench.tasks.mini.files` and
`vlbench.tasks.mini.world` while the registry loads, and the generator imports a task module
(`tasks.decorrelated.removal`), so the generator is loaded only when called.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlbench.output_rule import FolderKind

if TYPE_CHECKING:
    from vlbench.tasks.mini.build import MiniConfig

# The files of a mini world folder (tasks/mini/README.md), to tell one written before the folder
# marker existed.
_WORLD_FILE = re.compile(
    r"dataset_mini\.json|images/(train|val|test)/mini_\d+\.png|annotations/(instances|captions)_(train|val|test)\.json"
    r"|flickr30k_entities/((train|val|test)\.txt|Sentences/\d+\.txt|Annotations/\d+\.xml)"
    r"|decorrelated/(queries\.json|images/mini_\d+_no_[a-z_]+\.png)"
)


def _is_world_folder(folder: Path) -> bool:
    """A mini world folder written before vlbench marked its folders: its Karpathy file, and no
    file that the generator does not write."""
    files = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir()]
    return "dataset_mini.json" in files and all(_WORLD_FILE.fullmatch(f) for f in files)


MINI_FOLDER = FolderKind("vlbench data mini", legacy=_is_world_folder)


def write_mini_benchmark(
    out: Path, seed: int = 0, config: MiniConfig | None = None, images: bool = True, force: bool = False
) -> list[Path]:
    """Write the mini world's images and annotation files as the folder `out`; returns the paths
    written.

    `config` (a `vlbench.tasks.mini.build.MiniConfig`; `build.world_config(name)` for a named world)
    overrides the defaults; `images=False` writes the annotation files only. The world is made in a
    new folder beside `out`, which then replaces `out` whole: `out` must be missing, empty or a mini
    world vlbench wrote (`vlbench.output_rule`; its parent must exist). With `force`, the files are
    moved into someone's folder over those of the same names, and nothing else there is deleted.
    """
    from vlbench.output_rule import replace_folder
    from vlbench.tasks.mini.build import write_mini_benchmark as build

    out = Path(out)

    def fill(folder: Path) -> list[Path]:
        return [p.relative_to(folder) for p in build(folder, seed=seed, config=config, images=images)]

    return [out / p for p in replace_folder(out, MINI_FOLDER, fill, force=force)]


def add_cli(commands: Any, groups: dict[str, Any]) -> None:
    """`vlbench data mini`: the engine's CLI finds this through registry.cli_plugins."""
    p = groups["data"].add_parser(
        "mini", help="write a mini world: the images and every file needed to make a submission to its benchmarks",
        description="Writes one mini world (images, captions, boxes, decorrelated queries) in the real formats. "
                    "The v2 world is that of mini-retrieval, mini-captions and mini-grounding; the v3 world that of "
                    "mini-decorrelated and mini-shapes-retrieval. Choose it with --world or --benchmark.")
    p.add_argument("--out", help="output folder (default: ./vlbench-mini for v2, ./vlbench-mini-v3 for v3); "
                   "replaced only if it is empty or a mini world vlbench wrote")
    p.add_argument("--world", choices=["v2", "v3"], help="which world to write (default: v2, or the --benchmark's)")
    p.add_argument("--benchmark", help="write the world this mini benchmark is made from (e.g. mini-decorrelated)")
    p.add_argument("--force", action="store_true",
                   help="write into a folder that holds other files (same-named files replaced, nothing deleted)")
    p.set_defaults(func=_data_mini)


def world_of(benchmark_id: str) -> str:
    """The mini world a bundled benchmark is made from (its record's `mini_world`; default v2)."""
    from vlbench.errors import UsageError
    from vlbench.registry import registry

    benchmark = registry().benchmark(benchmark_id)
    if benchmark.package_data != __name__:
        raise UsageError(f"{benchmark.id} is not made from a mini world; vlbench data mini writes the worlds of "
                         f"{', '.join(mini_benchmarks())}")
    return str(benchmark.option("mini_world", "v2"))


def mini_benchmarks(world: str | None = None) -> list[str]:
    """The ids of the bundled benchmarks made from a mini world (from `world` only, when given)."""
    from vlbench.registry import registry

    return sorted(b.id for b in registry().benchmarks.values() if b.package_data == __name__
                  and (world is None or b.option("mini_world", "v2") == world))


def _data_mini(args: argparse.Namespace) -> int:
    from vlbench.errors import UsageError
    from vlbench.progress import stage
    from vlbench.tasks.mini.build import world_config

    world = args.world
    if args.benchmark:
        wanted = world_of(args.benchmark)
        if world is not None and world != wanted:
            raise UsageError(f"{args.benchmark} is made from the {wanted} world, not {world}: drop --world or "
                             f"give --world {wanted}")
        world = wanted
    world = world or "v2"
    out = Path(args.out or ("vlbench-mini" if world == "v2" else f"vlbench-mini-{world}"))
    with stage(f"writing the mini world {world} to {out}"):
        written = write_mini_benchmark(out, config=world_config(world), force=args.force)
    others = [w for w in ("v2", "v3") if w != world]
    print(f"wrote the mini world {world} to {out} ({len(written):,} files): the images and files for "
          f"{', '.join(mini_benchmarks(world))}; for {', '.join(mini_benchmarks(others[0]))}: "
          f"vlbench data mini --world {others[0]}")
    return 0


__all__ = ["MINI_FOLDER", "add_cli", "mini_benchmarks", "world_of", "write_mini_benchmark"]
