"""`vlbench data prepare` (a benchmark's ground truth from its official files) and the bare
`vlbench import` group, whose importers the task packages add (`registry.cli_plugins`)."""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vlbench.commands import EXIT_OK
from vlbench.errors import UsageError
from vlbench.ground_truth import default_data_dir
from vlbench.progress import stage
from vlbench.registry import registry
from vlbench.source_check import SourceDeviation


def cmd_import(args: argparse.Namespace) -> int:
    raise UsageError("vlbench import: name the task whose importer to use (vlbench import --help)")


@contextlib.contextmanager
def _source_deviations_shown() -> Iterator[None]:
    """Print each `--force` deviation a `prepare` reports, as it is reported."""
    with warnings.catch_warnings():
        warnings.simplefilter("always", SourceDeviation)
        others = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], *rest: Any, **kwargs: Any) -> None:
            if issubclass(category, SourceDeviation):
                print(f"warning: {message}", file=sys.stderr)
            else:
                others(message, category, *rest, **kwargs)

        warnings.showwarning = show
        yield


def cmd_data(args: argparse.Namespace) -> int:
    if args.data_command == "prepare":
        reg = registry()
        benchmark = reg.benchmark(args.benchmark)
        data_dir = Path(args.data_dir) if args.data_dir else default_data_dir()
        with stage(f"preparing {benchmark.id} from {args.source}"), _source_deviations_shown():
            written = reg.task_of(benchmark).prepare(benchmark, args.source, data_dir, force=args.force)
        for path in written:
            print(f"wrote {path}")
        return EXIT_OK
    raise UsageError("vlbench data: name what to do (vlbench data --help)")
