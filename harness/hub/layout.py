"""Where a submission may sit in the board's hub repo, and what every other path is.

A participant's pull request may add or change files `submissions/<benchmark id>/<name>.json`
(or `.json.gz`) only: one folder level, a known benchmark, a plain file name. Everything else
under `submissions/` is refused (the maintainers' reference list, reported and retired results,
unknown folders, other file types); a path outside `submissions/` (the README, code, the hub's
settings) can never be merged from a pull request.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass

from vlbench.leaderboard.build import RETIRED_FOLDER
from vlbench.leaderboard.sources import REFERENCE_LIST, REPORTED_FOLDER

SUBMISSIONS = "submissions"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.json(\.gz)?$")
ENTRY = "entry"  # submissions/<benchmark>/<name>.json(.gz): validated and scored
REFUSED = "refused"  # under submissions/ but not an entry: not merged, the pull request stays open
OUTSIDE = "outside"  # outside submissions/: the pull request is closed


@dataclass(frozen=True)
class Place:
    kind: str
    benchmark: str | None = None
    reason: str = ""


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a submission's file name in the repo, or None."""
    if NAME.match(name) and ".." not in name:
        return None
    return ("a submission's file name is letters, digits, '.', '_' and '-' (starting with a letter or digit, "
            "at most 128 characters) ending in .json or .json.gz")


def place(path: str, benchmarks: Container[str]) -> Place:
    parts = path.split("/")
    if parts[0] != SUBMISSIONS or len(parts) == 1:
        return Place(OUTSIDE, reason="outside submissions/: a pull request may only add submission files")
    if len(parts) == 2:
        if parts[1] == REFERENCE_LIST:
            return Place(REFUSED, reason="the maintainers' reference list: only maintainers edit it")
        return Place(REFUSED, reason="not in a benchmark's folder: put it under submissions/<benchmark id>/")
    if parts[1] in (REPORTED_FOLDER, RETIRED_FOLDER):
        return Place(REFUSED, reason=f"submissions/{parts[1]}/ is kept by the maintainers")
    if parts[1] not in benchmarks:
        return Place(REFUSED, reason="not a benchmark's folder (vlbench tasks lists the benchmark ids)")
    if len(parts) > 3:
        return Place(REFUSED, parts[1], "a folder inside a benchmark's folder: submissions sit directly in it")
    problem = name_problem(parts[2])
    if problem is not None:
        return Place(REFUSED, parts[1], problem)
    return Place(ENTRY, parts[1])


def entry_path(benchmark: str, name: str) -> str:
    return f"{SUBMISSIONS}/{benchmark}/{name}"
