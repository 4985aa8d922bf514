"""The board as main holds it, for the rank a submission would take.

Main's entries of a benchmark are downloaded (within the caps) and scored as `leaderboard build`
scores them, or taken from the build's score cache (`<out>/cache`, read only) when it holds them
under the same key; a score is kept for the run by the file's git oid, so after intake merges a
pull request nothing is scored again. Ranks follow `leaderboard.build.rank_board` exactly (the
same order, and an entry shares the rank of the one above it when their main scores are equal or
a paired bootstrap test on the same items cannot separate them), computed for the board once and
then for a candidate from the one entry it would sit under (the ranks above it do not depend on
it); the paired tests are kept by the two files' oids.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from vlbench.benchmark import Benchmark
from vlbench.errors import InvalidSubmission
from vlbench.ground_truth import locate_ground_truth
from vlbench.hashing import sha256_file
from vlbench.hub import Hub
from vlbench.hub.layout import ENTRY, SUBMISSIONS, place
from vlbench.hub.pulls import Trees, download, oid, size_of
from vlbench.leaderboard.build import Entry
from vlbench.leaderboard.cache import ScoreCache, cache_key, canonical
from vlbench.registry import registry
from vlbench.scoring import score_file
from vlbench.stats import paired_bootstrap
from vlbench.submission import ValidationOptions


@dataclass(frozen=True)
class Scoring:
    """How entries are scored and ranked (the build's settings)."""

    options: ValidationOptions
    resamples: int = 1000
    seed: int = 0
    alpha: float = 0.05
    cache_dir: Path | None = None  # a built leaderboard's score cache, read only


@dataclass
class Ranked:
    entry: Entry
    oid: str


@dataclass
class Placement:
    rank: int
    size: int  # entries on the board with this one (a replaced entry counted once)
    shared: bool  # the rank is shared with the entry above


def sort_key(benchmark: Benchmark) -> Callable[[Entry], tuple[Any, ...]]:
    higher = benchmark.metric(benchmark.main_score).higher_is_better
    return lambda e: (-e.main if higher else e.main, str(e.result.meta.get("method", "")), e.path)


class MainBoards:
    def __init__(self, hub: Hub, trees: Trees, scoring: Scoring, workdir: Path) -> None:
        self.hub, self.trees, self.scoring, self.workdir = hub, trees, scoring, workdir
        self.scored: dict[str, Entry | None] = {}  # git oid -> entry (None: not a valid entry)
        self.pvalues: dict[tuple[str, str], float] = {}
        self.boards: dict[tuple[str, str], list[Ranked]] = {}  # (main commit, benchmark) -> ranked
        self.cache = ScoreCache(scoring.cache_dir) if scoring.cache_dir is not None else None
        self.ground_truth: dict[str, str] = {}

    def files(self, main: str, benchmark: str) -> dict[str, Any]:
        """Main's files in the benchmark's folder: repo path -> listing entry."""
        listing = self.trees.listing(main, f"{SUBMISSIONS}/{benchmark}")
        return {p: e for p, e in listing.items() if not hasattr(e, "tree_id") and hasattr(e, "blob_id")}

    def entry(self, path: str, revision: str, listed: Any) -> Entry | None:
        """Main's file scored as the build scores it (None when invalid, too big or misplaced)."""
        key = oid(listed) or ""
        if key not in self.scored:
            self.scored[key] = self._score_main(path, revision, listed)
        found = self.scored[key]
        return None if found is None else dataclasses.replace(found, path=path.split("/", 1)[1])

    def remember(self, file_oid: str, entry: Entry) -> None:
        """A candidate's score, kept for when main holds the same bytes (after its merge)."""
        if file_oid:
            self.scored.setdefault(file_oid, entry)

    def _score_main(self, path: str, revision: str, listed: Any) -> Entry | None:
        benchmark = path.split("/")[1]
        if place(path, registry().benchmarks).kind != ENTRY or size_of(listed) > self.scoring.options.max_bytes:
            return None
        local = download(self.hub, path, revision, self.workdir)
        if self.cache is not None:
            hit, cached = self._cached(benchmark, local)
            if hit:
                return None if cached is None or cached.result is None else Entry(path, cached.result, cached.items)
        try:
            ev = score_file(local, self.scoring.options, bootstrap=self.scoring.resamples, seed=self.scoring.seed)
        except InvalidSubmission:
            return None
        if ev.result.benchmark != benchmark:
            return None
        return Entry(path, canonical(ev.result), ev.items)

    def _cached(self, benchmark_id: str, local: Path) -> tuple[bool, Any]:
        """The build's cache entry for this file, under the key `leaderboard.build.build` uses."""
        assert self.cache is not None
        benchmark = registry().benchmark(benchmark_id)
        if benchmark_id not in self.ground_truth:
            self.ground_truth[benchmark_id] = locate_ground_truth(benchmark, self.scoring.options.data_dir).combined_sha256
        key = cache_key(f"{sha256_file(local)} bootstrap {self.scoring.resamples} seed {self.scoring.seed}", benchmark,
                        self.ground_truth[benchmark_id])
        found = self.cache.get(benchmark, key)
        return found is not None, found

    def ranked(self, main: str, benchmark: Benchmark) -> list[Ranked]:
        key = (main, benchmark.id)
        if key not in self.boards:
            folder = self.files(main, benchmark.id)
            ranked = []
            for path, listed in sorted(folder.items()):
                entry = self.entry(path, main, listed)
                if entry is not None and entry.result.benchmark_version == benchmark.version:
                    ranked.append(Ranked(entry, oid(listed) or ""))
            ranked.sort(key=lambda r: sort_key(benchmark)(r.entry))
            for i, r in enumerate(ranked):
                r.entry.rank = 1 if i == 0 else self._rank_below(benchmark, ranked[i - 1], r, i)
            self.boards[key] = ranked
        return self.boards[key]

    def _rank_below(self, benchmark: Benchmark, above: Ranked, entry: Ranked, index: int) -> int:
        """rank_board's rule for the entry at `index` under `above`."""
        same = entry.entry.main == above.entry.main
        if not same and entry.entry.items and above.entry.items and self.scoring.resamples > 0:
            same = self._pvalue(benchmark, above, entry) >= self.scoring.alpha
        return above.entry.rank if same else index + 1

    def _pvalue(self, benchmark: Benchmark, above: Ranked, below: Ranked) -> float:
        key = (above.oid, below.oid)
        if key not in self.pvalues:
            task = registry().task_of(benchmark)
            comparisons = paired_bootstrap(above.entry.items, below.entry.items,
                                           lambda m: task.metrics_from_means(benchmark, m),
                                           self.scoring.resamples, self.scoring.seed)
            self.pvalues[key] = next(c for c in comparisons if c.metric == benchmark.main_score).p_value
        return self.pvalues[key]

    def place(self, main: str, benchmark: Benchmark, candidate: Entry, candidate_oid: str) -> Placement:
        """The rank `candidate` takes on main's board (replacing the entry at its path, if any)."""
        others = [r for r in self.ranked(main, benchmark) if r.entry.path != candidate.path]
        if len(others) != len(self.ranked(main, benchmark)):
            # the replaced entry leaves: the ranks of the rest are those of a board without it
            others = [Ranked(dataclasses.replace(r.entry), r.oid) for r in others]
            for i, r in enumerate(others):
                r.entry.rank = 1 if i == 0 else self._rank_below(benchmark, others[i - 1], r, i)
        key = sort_key(benchmark)
        index = sum(1 for r in others if key(r.entry) < key(candidate))
        me = Ranked(dataclasses.replace(candidate), candidate_oid)
        if index == 0:
            return Placement(1, len(others) + 1, False)
        rank = self._rank_below(benchmark, others[index - 1], me, index)
        return Placement(rank, len(others) + 1, rank != index + 1)
