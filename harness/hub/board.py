"""The board `leaderboard build` would publish from main with a pull request's entries added, and
the row each entry's rank is read from.

Main's entries of a benchmark are the files the build puts on that board
(`submissions/<benchmark>/*.json(.gz)`, within the caps), scored as the build scores them or taken
from the build's score cache (`<out>/cache`, read only) when it holds them under the same key, and
marked as main's `submissions/REFERENCE_ENTRIES` marks them (reference, chance floor; a list the
build refuses is no board). A score is kept for the run by the file's git oid, so after intake
merges a pull request nothing is scored again.

The ranking rule is not restated here: main's entries with the pull request's valid entries of the
benchmark (each in place of the entry at its path, if any), in the build's order, make a `Board`
that `ranking.rank_board` ranks as the build does (rows are methods, a method's seeds one row that
shows their mean; ranks 1..N over the rows, shared where a paired test at the level of methods
cannot separate neighbours or they show the same score; floors ranked). An entry's row gives its
rank, the number of rows, how many other rows share the rank, and the method's seeds when its
`meta.method` joins them. One `ranking.StatsMemo` for the run keeps the bootstrap statistics (a
seeded row's interval, the paired test of two rows) by the tables they come from, so after the
first pull request on a board each costs only the statistics of its own rows (an interval, the
tests against its new neighbours), with exactly the result of ranking without the memo.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlbench.benchmark import Benchmark
from vlbench.errors import InvalidSubmission, UsageError
from vlbench.ground_truth import locate_ground_truth
from vlbench.hashing import sha256_file
from vlbench.hub import Hub
from vlbench.hub.layout import SUBMISSIONS
from vlbench.hub.pulls import Trees, download, is_folder, oid, size_of
from vlbench.leaderboard.build import Board, Entry, submission_file_name
from vlbench.leaderboard.cache import ScoreCache, cache_key, canonical
from vlbench.leaderboard.ranking import StatsMemo, rank_board
from vlbench.leaderboard.sources import REFERENCE_LIST, ReferenceList, read_reference_list
from vlbench.registry import registry
from vlbench.scoring import score_file
from vlbench.submission import ValidationOptions


@dataclass(frozen=True)
class Scoring:
    """How entries are scored and ranked (the build's settings)."""

    options: ValidationOptions
    resamples: int = 1000
    seed: int = 0
    alpha: float = 0.05
    cache_dir: Path | None = None  # a built leaderboard's score cache, read only


@dataclass(frozen=True)
class Placement:
    """Where a candidate's row sits on the board the build would publish with it."""

    rank: int
    rows: int  # the board's rows with the candidate (a method's seeds are one row)
    shared_with: int  # other rows with the same rank
    method: str  # the row's name (for seeds: the method's name without the seed marker)
    seeds: int  # runs the row shows: 1, or the method's seeds, the candidate among them
    shown: float | None  # the main score the row shows (the seeds' mean), as published


@dataclass(frozen=True)
class _Scored:
    entry: Entry | None  # None: not an entry of the board (invalid, too big, another benchmark)
    sha256: str  # of the file's bytes (the reference list may pin it)


class MainBoards:
    def __init__(self, hub: Hub, trees: Trees, scoring: Scoring, workdir: Path) -> None:
        self.hub, self.trees, self.scoring, self.workdir = hub, trees, scoring, workdir
        self.scored: dict[tuple[str, str], _Scored] = {}  # (git oid, benchmark folder) -> the file scored
        self.boards: dict[tuple[str, str], list[tuple[str, _Scored]]] = {}  # (main, benchmark) -> (path, entry)
        self.references: dict[str, ReferenceList] = {}  # the reference list's git oid -> its contents
        self.memo = StatsMemo()
        self.cache = ScoreCache(scoring.cache_dir) if scoring.cache_dir is not None else None
        self.ground_truth: dict[str, str] = {}

    def files(self, main: str, benchmark: str) -> dict[str, Any]:
        """Main's files in the benchmark's folder: repo path -> listing entry."""
        listing = self.trees.listing(main, f"{SUBMISSIONS}/{benchmark}")
        return {p: e for p, e in listing.items() if not is_folder(e)}

    def entry(self, path: str, revision: str, listed: Any) -> Entry | None:
        """Main's file scored as the build scores it (None when not on the build's board)."""
        found = self._scored(path, revision, listed).entry
        return None if found is None else dataclasses.replace(found, path=_relative(path))

    def remember(self, file_oid: str, entry: Entry, sha256: str) -> Entry:
        """A candidate's score (`entry.path` relative to submissions/), kept for when main holds the
        same bytes in the same folder (after its merge); returns the entry kept for them (an
        earlier one, when the run met them before)."""
        if not file_oid:
            return entry
        kept = self.scored.setdefault((file_oid, entry.path.split("/", 1)[0]), _Scored(entry, sha256)).entry
        return dataclasses.replace(kept, path=entry.path) if kept is not None else entry

    def _scored(self, path: str, revision: str, listed: Any) -> _Scored:
        """What the build makes of main's file: whether it is an entry depends on its bytes and its
        folder (a file declaring another benchmark is off the board), and on its name and size."""
        parts = path.split("/")
        if len(parts) != 3 or not submission_file_name(parts[2]) or size_of(listed) > self.scoring.options.max_bytes:
            return _Scored(None, "")
        key = (oid(listed) or f"{revision}:{path}", parts[1])
        if key not in self.scored:
            self.scored[key] = self._score_main(path, revision)
        return self.scored[key]

    def _score_main(self, path: str, revision: str) -> _Scored:
        benchmark = path.split("/")[1]
        local = download(self.hub, path, revision, self.workdir)
        sha256 = sha256_file(local)
        if self.cache is not None:
            hit, cached = self._cached(benchmark, sha256)
            if hit:
                if cached is None or cached.result is None:
                    return _Scored(None, sha256)
                return _Scored(Entry(_relative(path), canonical(cached.result), cached.items), sha256)
        try:
            ev = score_file(local, self.scoring.options, bootstrap=self.scoring.resamples, seed=self.scoring.seed)
        except InvalidSubmission:
            return _Scored(None, sha256)
        if ev.result.benchmark != benchmark:
            return _Scored(None, sha256)
        return _Scored(Entry(_relative(path), canonical(ev.result), ev.items), sha256)

    def _cached(self, benchmark_id: str, sha256: str) -> tuple[bool, Any]:
        """The build's cache entry for this file, under the key `leaderboard.build.build` uses."""
        assert self.cache is not None
        benchmark = registry().benchmark(benchmark_id)
        if benchmark_id not in self.ground_truth:
            self.ground_truth[benchmark_id] = locate_ground_truth(benchmark, self.scoring.options.data_dir).combined_sha256
        key = cache_key(f"{sha256} bootstrap {self.scoring.resamples} seed {self.scoring.seed}", benchmark,
                        self.ground_truth[benchmark_id])
        found = self.cache.get(benchmark, key)
        return found is not None, found

    def main_entries(self, main: str, benchmark: Benchmark) -> list[tuple[Entry, str]]:
        """Main's entries on the benchmark's board, in the build's order (by path), each with the
        sha256 of its bytes; paths relative to submissions/, as the build gives them."""
        key = (main, benchmark.id)
        if key not in self.boards:
            folder = self.files(main, benchmark.id)
            self.boards[key] = [(_relative(path), s) for path, listed in sorted(folder.items())
                                if (s := self._scored(path, main, listed)).entry is not None]
        return [(dataclasses.replace(s.entry, path=path), s.sha256) for path, s in self.boards[key]
                if s.entry is not None]

    def reference_list(self, main: str) -> ReferenceList:
        """Main's `submissions/REFERENCE_ENTRIES`, read as the build reads it (UsageError when the
        build would refuse it)."""
        listed = self.trees.listing(main, SUBMISSIONS).get(f"{SUBMISSIONS}/{REFERENCE_LIST}")
        if listed is None or is_folder(listed):
            return ReferenceList({})
        key = oid(listed) or f"{main}:{REFERENCE_LIST}"
        if key not in self.references:
            local = download(self.hub, f"{SUBMISSIONS}/{REFERENCE_LIST}", main, self.workdir)
            try:
                self.references[key] = read_reference_list(local.parent)
            except UsageError as exc:
                why = str(exc).split(": ", 1)[-1]
                raise UsageError(f"main's {SUBMISSIONS}/{REFERENCE_LIST} (at {main[:12]}) is refused by "
                                 f"leaderboard build, so no board can be built from main: {why}") from None
        return self.references[key]

    def board(self, main: str, benchmark: Benchmark, candidates: Sequence[tuple[Entry, str]] = ()) -> Board:
        """The board `leaderboard build` would publish from main with `candidates` (entries with
        paths relative to submissions/, and the sha256 of their bytes) in place of the entries at
        their paths, if any, ranked by `ranking.rank_board`."""
        references = self.reference_list(main)

        def marked(entry: Entry, sha256: str) -> Entry:
            return dataclasses.replace(entry, reference=references.marks(entry.path, sha256),
                                       floor=references.floor(entry.path, sha256), rank=0)

        paths = {e.path for e, _ in candidates}
        entries = [marked(e, sha) for e, sha in self.main_entries(main, benchmark) if e.path not in paths]
        entries += [marked(e, sha) for e, sha in candidates]
        board = Board(benchmark, sorted(entries, key=lambda e: e.path))
        rank_board(board, self.scoring.alpha, self.scoring.resamples, self.scoring.seed, memo=self.memo)
        return board

    def place(self, main: str, benchmark: Benchmark, candidates: Sequence[tuple[Entry, str]]) -> list[Placement]:
        """Where each candidate's row sits on main's board with all of them (a pull request's
        entries of one benchmark, as merging it would leave the board)."""
        board = self.board(main, benchmark, candidates)
        rows = {e.path: r for r in board.rows for e in r.entries}
        main_score = benchmark.main_score
        placed = []
        for entry, _ in candidates:
            row = rows[entry.path]
            placed.append(Placement(row.rank, len(board.rows), sum(r.rank == row.rank for r in board.rows) - 1,
                                    row.name, len(row.entries), row.shown(main_score)))
        return placed


def _relative(path: str) -> str:
    """A repo path as the build names the entry: relative to submissions/."""
    return path.split("/", 1)[1]
