"""Which folder a build may replace: only one it wrote itself, and only without losing rows silently.

A build replaces its output folder whole (written aside, swapped in), so a wrong `--out` would
delete whatever is there. Every published folder therefore carries a marker file, `MARKER`, that
lists what the build wrote (files, boards, entries). A later build replaces the folder only when
the marker is there and the folder holds nothing else; any other existing folder that is not
empty, a file, a symbolic link, the current folder, the submissions or data folder, or a folder
holding one of them, is refused with one sentence before anything is written. A build that would
drop a board or an entry the marker lists says which and refuses unless asked (`allow_drop`).

Folders published before the marker existed are recognised by their content: only the names a
build writes, and a `leaderboard.json` that says vlbench wrote it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlbench import __version__
from vlbench.errors import UsageError

MARKER = ".vlbench-leaderboard"
MARKER_FORMAT = 1
WRITTEN_BY = "vlbench leaderboard build"
_TOP_FILES = frozenset({"README.md", "index.html", "leaderboard.csv", "leaderboard.json", "plot.png", "plot.svg"})
_CACHE_FILE = re.compile(r"^cache/[^/]+/[0-9a-f]{64}\.json$")
_LISTED = 10  # names quoted in a refusal; the rest are counted


@dataclass(frozen=True)
class Published:
    """What a folder's last build published: board label -> its rows (submission paths, and
    `reported/<file>: <method>` for reported rows)."""

    boards: dict[str, list[str]]


def board_label(benchmark_id: str, version: str) -> str:
    return f"{benchmark_id} v{version}"


def _some(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_LISTED])
    return shown + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


def _contains(outer: Path, inner: Path) -> bool:
    return inner == outer or outer in inner.parents


def marker_document(boards: dict[str, list[str]], files: Iterable[str]) -> dict[str, Any]:
    return {
        "vlbench_leaderboard_marker": MARKER_FORMAT,
        "written_by": WRITTEN_BY,
        "vlbench_version": __version__,
        "about": "vlbench replaces this folder on the next build only while this file is here and "
                 "the folder holds only the files listed; do not put other files here",
        "boards": {label: sorted(rows) for label, rows in sorted(boards.items())},
        "files": sorted({*files, MARKER}),
    }


def _walk(folder: Path) -> list[str]:
    """Every non-folder path under `folder` (files, links, sockets...), relative, POSIX."""
    found = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        base = Path(top)
        for name in list(dirs):
            if (base / name).is_symlink():  # os.walk lists links to folders among the folders
                found.append((base / name).relative_to(folder).as_posix())
        found += [(base / name).relative_to(folder).as_posix() for name in files]
    return sorted(found)


def _read_marker(out: Path) -> dict[str, Any] | None:
    path = out / MARKER
    if not path.is_file() or path.is_symlink():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = (isinstance(doc, dict) and doc.get("written_by") == WRITTEN_BY and isinstance(doc.get("files"), list)
          and isinstance(doc.get("boards"), dict)
          and all(isinstance(f, str) for f in doc["files"])
          and all(isinstance(rows, list) and all(isinstance(r, str) for r in rows) for rows in doc["boards"].values()))
    return doc if ok else None


def _legacy(out: Path, present: list[str]) -> Published | None:
    """A folder built before the marker: only a build's names, and its leaderboard.json."""
    if not all(name in _TOP_FILES or _CACHE_FILE.match(name) for name in present):
        return None
    try:
        doc = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
        boards: dict[str, list[str]] = {}
        for b in doc["boards"]:
            rows = [str(e["submission"]) for e in b["entries"]]
            rows += [f"{r['data_file']}: {r['method']}" for r in b.get("reported", [])]
            boards[board_label(str(b["benchmark"]), str(b["benchmark_version"]))] = rows
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if doc.get("vlbench_leaderboard") != 1:
        return None
    return Published(boards)


def check_out(out: str | os.PathLike, protect: Sequence[tuple[str, str | os.PathLike | None]] = ()) -> Published | None:
    """Refuse an output folder the build may not replace (UsageError, before anything is written).

    `protect`: (what, path) pairs the output must neither be nor contain, e.g. ("the submissions
    folder", "submissions"); the current folder is always protected. Returns what the folder
    published (None for a new or empty folder)."""
    given = str(out)
    out = Path(os.path.abspath(out))
    if out.is_symlink():
        raise UsageError(f"--out {given} is a symbolic link; name the folder itself, since the build "
                         "replaces the folder it names")
    real = out.resolve()
    guarded = [("the current folder", Path.cwd()), *((what, p) for what, p in protect if p is not None)]
    for what, path in guarded:
        target = Path(os.path.abspath(path)).resolve()
        if _contains(real, target):
            relation = "is" if real == target else "contains"
            raise UsageError(f"--out {given} {relation} {what} ({target}); the build replaces its whole output "
                             "folder, so name a folder of its own, e.g. --out leaderboard")
        if what == "the submissions folder" and _contains(target, real):
            raise UsageError(f"--out {given} is inside the submissions folder ({target}); the build would read "
                             "its own output as submissions, so name a folder outside it")
    if not os.path.lexists(out):
        return None
    if not out.is_dir():
        raise UsageError(f"--out {given} is a file, not a folder; the build writes a folder, so name a new "
                         "folder or an existing leaderboard folder")
    present = _walk(out)
    if not present:
        return None
    marker = _read_marker(out)
    if marker is not None:
        foreign = [name for name in present if name not in set(marker["files"]) | {MARKER}]
        if foreign:
            raise UsageError(f"--out {given} is a leaderboard folder but holds {len(foreign)} file(s) the build "
                             f"did not write ({_some(foreign)}); move them out first, since the build replaces "
                             "the whole folder")
        return Published({str(k): list(v) for k, v in marker["boards"].items()})
    legacy = _legacy(out, present)
    if legacy is not None:
        return legacy
    raise UsageError(f"--out {given} is a folder that a leaderboard build did not write (no {MARKER} marker) "
                     f"and is not empty ({len(present)} file(s), e.g. {_some(present)}); the build replaces its "
                     "whole output folder, so name a new folder or an existing leaderboard folder")


def dropped(previous: Published | None, now: dict[str, list[str]]) -> list[str]:
    """Boards and rows the previous build published that `now` lacks, in words."""
    if previous is None:
        return []
    lost = []
    for label, rows in sorted(previous.boards.items()):
        if label not in now:
            lost.append(f"the board {label} ({len(rows)} row{'s' if len(rows) != 1 else ''})")
            continue
        lost += [f"{row} on {label}" for row in rows if row not in set(now[label])]
    return lost


def refuse_drops(previous: Published | None, now: dict[str, list[str]], allow_drop: bool) -> None:
    lost = dropped(previous, now)
    if lost and not allow_drop:
        raise UsageError(f"this build would drop {len(lost)} thing(s) the published leaderboard shows: "
                         f"{_some(lost)}; check --submissions (it must be the folder that holds the "
                         "<benchmark>/ folders), or pass --allow-drop if they should go")
