"""The leaderboard: generated from the submissions folder, never edited by hand.

`build` scores the submissions (or reuses cached scores) into boards; `publish` writes Markdown,
HTML, CSV, JSON, the plot and the cache into a temporary folder and swaps it in; `push` uploads a
built folder to the Hugging Face hub. `build_and_publish` does build + publish under a lock.
"""

from __future__ import annotations

import os
from pathlib import Path

from vlbench.leaderboard.build import Board, BuildReport, Entry, InvalidEntry, build, rank_board
from vlbench.leaderboard.ownership import MARKER, check_out
from vlbench.leaderboard.page import to_html
from vlbench.leaderboard.publish import (
    CACHE_FOLDER,
    build_lock,
    missing_folders,
    publish,
    published_metrics,
    push,
    remove_empty,
    render_files,
)
from vlbench.leaderboard.render import to_csv, to_json, to_markdown

__all__ = [
    "MARKER", "Board", "BuildReport", "Entry", "InvalidEntry", "build", "build_and_publish", "publish", "push",
    "rank_board", "render_files", "to_csv", "to_html", "to_json", "to_markdown",
]


def build_and_publish(
    submissions: str | os.PathLike,
    out: str | os.PathLike,
    data_dir: str | os.PathLike | None = None,
    *,
    resamples: int = 1000,
    seed: int = 0,
    rebuild: bool = False,
    quiet: bool = False,
    cache_dir: str | os.PathLike | None = None,
    allow_drop: bool = False,
) -> tuple[BuildReport, list[Path]]:
    """Build from `submissions` and publish into `out`, reusing `<out>/cache` (or `cache_dir`).

    `out` must be new, empty, or a folder an earlier build wrote (see `ownership`); a build that
    would drop boards or rows `out` shows is refused unless `allow_drop`."""
    from vlbench.ground_truth import default_data_dir

    out = Path(out)
    protect = [("the submissions folder", submissions),
               ("the data folder", data_dir if data_dir is not None else default_data_dir())]
    check_out(out, protect)  # refuse before scoring anything or taking the lock
    made = missing_folders(Path(os.path.abspath(out)).parent)
    try:
        with build_lock(out):
            report = build(submissions, data_dir, resamples=resamples, seed=seed,
                           cache_dir=cache_dir if cache_dir is not None else out / CACHE_FOLDER,
                           rebuild=rebuild, quiet=quiet, published=published_metrics(out))
            return report, publish(report, out, protect=protect, allow_drop=allow_drop)
    except BaseException:
        remove_empty(made)
        raise
