"""Phrase grounding on Flickr30k Entities (MDETR's evaluator protocol). See README.md."""

from __future__ import annotations

import argparse
from typing import Any

from vlbench.registry import lazy_exports
from vlbench.tasks.grounding.benchmarks import BENCHMARKS

# the task type, imported when one of its benchmarks is first used (vlbench.registry)
TASK_MODULE = "vlbench.tasks.grounding.task"
__getattr__ = lazy_exports(TASK_MODULE, "GroundingTask")


def add_cli(commands: Any, groups: dict[str, Any]) -> None:
    """`vlbench import grounding`: the engine's CLI finds this through registry.cli_plugins."""
    p = groups["import"].add_parser(
        "grounding", help="MDETR/GLIP-style Flickr30k Entities records -> a vlbench submission"
    )
    p.add_argument("predictions", help="the tool's prediction file (MDETR/GLIP records)")
    p.add_argument("--benchmark", required=True)
    p.add_argument("--out", required=True, help="submission file to write")
    p.add_argument("--format", default="mdetr", help="mdetr or glip")
    p.add_argument("--method", help="meta.method of the submission")
    p.add_argument("--data-dir", help="prepared data folder")
    p.add_argument("--force", action="store_true",
                   help="replace an --out file that is not a submission vlbench wrote (refused without it)")
    p.set_defaults(func=_import_grounding)


def _import_grounding(args: argparse.Namespace) -> int:
    from vlbench.tasks.grounding import importers

    argv = [args.predictions, "--benchmark", args.benchmark, "--out", args.out, "--format", args.format]
    if args.method:
        argv += ["--method", args.method]
    if args.data_dir:
        argv += ["--data-dir", args.data_dir]
    if args.force:
        argv.append("--force")
    return importers.main(argv)


__all__ = ["BENCHMARKS", "TASK", "add_cli"]
