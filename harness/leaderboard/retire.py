"""Keep a benchmark version's results before its ground truth is replaced (maintainers).

`python -m vlbench.leaderboard.retire BENCHMARK --submissions submissions` scores every submission
in `submissions/<benchmark>/` against the version vlbench ships now, exactly as a leaderboard build
does (same bootstrap resamples and seed), and writes each score record to
`submissions/retired/<benchmark>@<version>/<name>.json`, the folder `build.read_retired` reads.
It must run while that version is still the current one: afterwards its ground truth is gone and
the results could not be scored again. It deletes nothing: the submissions it retired are listed
for the maintainer to remove (`git rm`), since they are not files vlbench wrote.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from vlbench.atomic_files import atomic_write_many
from vlbench.errors import UsageError
from vlbench.leaderboard.build import RETIRED_FOLDER, _score, _submission_files
from vlbench.registry import registry


def retire(submissions: Path, benchmark_id: str, data_dir: str | None = None, resamples: int = 1000,
           seed: int = 0) -> list[Path]:
    """Write the retired records of `benchmark_id`'s current version; returns the submissions they
    come from. Refuses, writing nothing, when a submission is invalid or a record exists already."""
    benchmark = registry().benchmark(benchmark_id)
    folder = submissions / benchmark_id
    paths = [p for p in _submission_files(submissions) if p.parent == folder]
    if not paths:
        raise UsageError(f"no submissions in {folder} to retire")
    target = submissions / RETIRED_FOLDER / f"{benchmark_id}@{benchmark.version}"
    out: list[tuple[Path, bytes]] = []
    problems: list[str] = []
    for path in paths:
        entry, _ = _score(path, benchmark_id, data_dir, resamples, seed)
        dest = target / (path.name.removesuffix(".gz") if path.name.endswith(".json.gz") else path.name)
        if entry.result is None:
            problems.append(f"{path} is not a valid submission ({entry.error_count} problems)")
        elif os.path.lexists(dest):  # never replaced, not even a record retire wrote: its version is gone
            problems.append(f"{dest} exists already")
        else:
            out.append((dest, entry.to_json()))
    if problems:
        raise UsageError("nothing retired: " + "; ".join(problems))
    atomic_write_many(out)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("benchmark")
    parser.add_argument("--submissions", default="submissions")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args(argv)
    try:
        retired = retire(Path(args.submissions), args.benchmark, args.data_dir)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"retired {len(retired)} results; remove the submissions themselves (git rm):")
    for path in retired:
        print(f"  {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
