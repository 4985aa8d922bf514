"""The leaderboard: generated from the submissions folder, never edited by hand.

`build` scores the submissions (or reuses cached scores) into boards; `publish` writes Markdown,
HTML, CSV, JSON, the plot and the cache into a temporary folder and swaps it in; `push` uploads a
built folder to the Hugging Face hub. `build_and_publish` does build + publish under a lock.
"""

from __future__ import annotations

import os
from pathlib import Path

from vlbench.leaderboard.build import Board, BuildReport, Entry, InvalidEntry, build, rank_board
from vlbench.leaderboard.page import to_html
from vlbench.leaderboard.publish import (
    CACHE_FOLDER,
    build_lock,
    publish,
    published_metrics,
    push,
    render_files,
)
from vlbench.leaderboard.render import to_csv, to_json, to_markdown

__all__ = [
    "Board", "BuildReport", "Entry", "InvalidEntry", "build", "build_and_publish", "publish", "push",
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
) -> tuple[BuildReport, list[Path]]:
    """Build from `submissions` and publish into `out`, reusing `<out>/cache` (or `cache_dir`)."""
    out = Path(out)
    with build_lock(out):
        report = build(submissions, data_dir, resamples=resamples, seed=seed,
                       cache_dir=cache_dir if cache_dir is not None else out / CACHE_FOLDER,
                       rebuild=rebuild, quiet=quiet, published=published_metrics(out))
        return report, publish(report, out)
