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

from vlbench.benchmark import Benchmark, DataFile
from vlbench.commands import EXIT_OK
from vlbench.errors import UsageError
from vlbench.ground_truth import GroundTruthFiles, default_data_dir, prepare_target
from vlbench.hashing import sha256_file
from vlbench.output_rule import (
    FOLDER_MARKER,
    WHOLE_BYTES,
    FileKind,
    check_file_target,
    check_folder_to_fill,
    leading_fields,
    write_marker,
)
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


PREPARE = "vlbench data prepare"


def _prepared_by_vlbench(benchmark: Benchmark, f: DataFile, folder: Path, path: Path) -> bool:
    """Whether the ground-truth file at `path` (in the benchmark's data folder `folder`) is one
    `vlbench data prepare` wrote: listed with its sha256 in the folder's marker, or (prepared before
    markers) read by the task as its ground truth."""
    marker = leading_fields(folder / FOLDER_MARKER, WHOLE_BYTES) or {}
    if marker.get("written_by") == PREPARE and isinstance(marker.get("sha256"), dict):
        return marker["sha256"].get(path.relative_to(folder).as_posix()) == sha256_file(path)
    try:
        registry().task_of(benchmark).load_ground_truth(benchmark, GroundTruthFiles({f.name: path}, {f.name: ""}))
    except Exception:  # noqa: BLE001 - whatever the task's reader refuses is not its ground truth
        return False
    return True


def _check_prepare_targets(benchmark: Benchmark, data_dir: Path, force: bool) -> None:
    """Refuse, before any work, what `prepare` must not write (the output rule): a file where the
    ground truth goes that vlbench did not prepare is replaced only with --force."""
    folder = data_dir / benchmark.id
    for f in benchmark.files:
        target = prepare_target(benchmark, f, data_dir)
        kind = FileKind(f"{benchmark.id}'s ground truth as vlbench prepares it",
                        lambda path, f=f: _prepared_by_vlbench(benchmark, f, folder, path))
        if target.parent.is_dir():
            check_file_target(target, kind, force=force, option="", instead="give another --data-dir")
        elif target.parent.exists() or (folder.exists() and not folder.is_dir()):
            raise UsageError(f"cannot write {target}: {folder} is not a folder")


def cmd_data(args: argparse.Namespace) -> int:
    if args.data_command == "prepare":
        reg = registry()
        benchmark = reg.benchmark(args.benchmark)
        if args.data_dir:  # named: made only inside an existing folder
            data_dir = check_folder_to_fill(args.data_dir, "--data-dir")
        else:  # vlbench's own cache folder, made as needed
            data_dir = default_data_dir()
        _check_prepare_targets(benchmark, data_dir, args.force)
        with stage(f"preparing {benchmark.id} from {args.source}"), _source_deviations_shown():
            written = reg.task_of(benchmark).prepare(benchmark, args.source, data_dir, force=args.force)
        folder = data_dir / benchmark.id
        mine = [Path(p) for p in written if Path(p).is_file() and folder in Path(p).parents]
        write_marker(folder, PREPARE, [p.relative_to(folder).as_posix() for p in mine],
                     sha256={p.relative_to(folder).as_posix(): sha256_file(p) for p in mine})
        for path in written:
            print(f"wrote {path}")
        return EXIT_OK
    raise UsageError("vlbench data: name what to do (vlbench data --help)")
