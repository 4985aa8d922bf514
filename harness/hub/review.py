"""What a pull request may have merged: every file it changes, checked and scored, and one verdict.

A pull request is mergeable (READY, or DRAFT while the author has not published it) only when
every file it changes (relative to where it started) is a valid submission at
`submissions/<benchmark>/<name>` that adds a new entry or replaces the same team's own entry:
one that intake merged from a pull request by the same hub account, with the same `meta.team`.
A deletion, another team's entry, an entry no merge recorded an owner for, an invalid file, a
path elsewhere under `submissions/`, or conflicts with main keep it open (REFUSED); a path outside
`submissions/` closes it (CLOSE). Nothing a pull request holds is executed: files are only read,
within the caps, by the validation every submission goes through.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from vlbench.benchmark import Metric
from vlbench.errors import InvalidSubmission, UsageError, plural
from vlbench.hashing import sha256_file
from vlbench.hub import Hub, plain
from vlbench.hub.board import MainBoards, Placement, Scoring
from vlbench.hub.layout import ENTRY, OUTSIDE, Place, place
from vlbench.hub.markers import CLOSE, DRAFT, READY, REFUSED
from vlbench.hub.pulls import (
    MAX_CHANGES,
    Change,
    Owners,
    PullState,
    TooManyChanges,
    Trees,
    download,
)
from vlbench.leaderboard.build import Entry
from vlbench.leaderboard.cache import canonical
from vlbench.registry import registry
from vlbench.results import ResultRecord
from vlbench.scoring import score_file


class NotReviewable(Exception):
    """This machine cannot check the pull request (e.g. a benchmark's ground truth is not prepared
    here): not the pull request's fault, so it gets no comment; the next run tries again."""


@dataclass
class Problem:
    pointer: str
    code: str
    message: str
    hint: str = ""


@dataclass
class FileReview:
    path: str
    change: str  # added, modified, deleted
    where: Place
    problems: list[Problem] = field(default_factory=list)
    error_count: int = 0  # problems in all (validation lists the first --max-errors)
    counts_by_code: dict[str, int] = field(default_factory=dict)
    result: ResultRecord | None = None
    metric: Metric | None = None
    placement: Placement | None = None  # its row on the board the build would publish with it
    replaces: bool = False

    def refuse(self, code: str, message: str, hint: str = "", pointer: str = "") -> None:
        self.problems.append(Problem(pointer, code, message, hint))
        self.error_count += 1
        self.counts_by_code[code] = self.counts_by_code.get(code, 0) + 1

    @property
    def ok(self) -> bool:
        return self.where.kind == ENTRY and not self.problems and self.result is not None

    @property
    def outside(self) -> bool:
        return self.where.kind == OUTSIDE

    @property
    def benchmark(self) -> str:
        return self.where.benchmark or ""

    @property
    def version(self) -> str:
        return self.result.benchmark_version if self.result else ""

    @property
    def method(self) -> str | None:
        return _text(self.result.meta.get("method")) if self.result else None

    @property
    def team(self) -> str | None:
        return _text(self.result.meta.get("team")) if self.result else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def same_team(a: str | None, b: str | None) -> bool:
    """The same `meta.team`, case and spacing aside (no team on either side is the same, too)."""
    def norm(team: str | None) -> str:
        return " ".join((team or "").casefold().split())

    return norm(a) == norm(b)


@dataclass
class Review:
    num: int
    author: str
    head: str
    base: str
    main: str
    draft: bool
    files: list[FileReview] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # about the pull request as a whole

    @property
    def verdict(self) -> str:
        if any(f.outside for f in self.files):
            return CLOSE
        if self.problems or not self.files or not all(f.ok for f in self.files):
            return REFUSED
        return DRAFT if self.draft else READY

    @property
    def entries(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files if f.ok)

    def summary(self) -> str:
        """One line for the maintainer's terminal (plain text)."""
        parts = []
        for f in self.files:
            if f.ok and f.result is not None and f.metric is not None:
                value = f.metric.format(f.result.scores.get(f.result.main_score))
                rank = f", rank {f.placement.rank} of {f.placement.rows}" if f.placement is not None else ""
                parts.append(f"{f.path} {f.result.main_score} {value}{rank}")
            else:
                parts.append(f"{f.path}: {plural(max(f.error_count, 1), 'problem')}")
        parts += self.problems
        return plain("; ".join(parts) or "no files", 400)


class Reviewer:
    """Checks pull requests against main for one intake run (listings and scores kept for the run)."""

    def __init__(self, hub: Hub, scoring: Scoring, workdir: Path) -> None:
        self.hub, self.scoring, self.workdir = hub, scoring, workdir
        self.trees = Trees(hub)
        self.boards = MainBoards(hub, self.trees, scoring, workdir)
        self.owners = Owners(hub)

    def review(self, pull: PullState, main: str) -> Review:
        assert pull.head is not None and pull.base is not None
        review = Review(pull.num, pull.author, pull.head, pull.base, main, pull.status == "draft")
        try:
            changes = self.trees.changes(pull.base, pull.head, MAX_CHANGES)
        except TooManyChanges:
            review.problems.append(f"the pull request changes more than {MAX_CHANGES} files; a submission pull "
                                   "request adds one file per entry (split it)")
            return review
        if not changes:
            review.problems.append("the pull request changes no file")
        benchmarks = registry().benchmarks
        candidates: dict[int, tuple[Entry, str]] = {}  # id(file review) -> its entry and sha256
        for change in changes:
            f = FileReview(change.path, change.kind, place(change.path, benchmarks))
            review.files.append(f)
            candidate = self._check(f, change, pull, main)
            if candidate is not None:
                candidates[id(f)] = candidate
        self._place([f for f in review.files if f.ok and id(f) in candidates], candidates, main)
        if pull.conflicts:
            listed = pull.conflicts if isinstance(pull.conflicts, list) else []
            review.problems.append("it conflicts with main" + (f" in {', '.join(plain(p, 200) for p in listed[:10])}"
                                                               if listed else "") + ": rebase it on main")
        return review

    def _place(self, files: list[FileReview], candidates: dict[int, tuple[Entry, str]], main: str) -> None:
        """Each valid entry's row on the board the build would publish once the pull request is
        merged: main's entries with all of the pull request's valid entries of that benchmark."""
        for benchmark_id in sorted({f.benchmark for f in files}):
            mine = [f for f in files if f.benchmark == benchmark_id]
            try:
                placed = self.boards.place(main, registry().benchmark(benchmark_id), [candidates[id(f)] for f in mine])
            except UsageError as exc:  # no board from main (the build refuses its reference list; the hub failed)
                raise NotReviewable(plain(str(exc), 400)) from None
            for f, placement in zip(mine, placed):
                f.placement = placement

    def _check(self, f: FileReview, change: Change, pull: PullState, main: str) -> tuple[Entry, str] | None:
        """Checks one change; returns the entry it would put on the board and its sha256 (None
        when it is no valid entry)."""
        if f.where.kind != ENTRY:
            f.refuse("outside_submissions" if f.outside else "not_a_submission_path", f.where.reason)
            return None
        if change.kind == "deleted":
            f.refuse("deletes_entry", "the pull request deletes this entry",
                     "entries are withdrawn by the maintainers; ask them in a discussion")
            return None
        if change.size > self.scoring.options.max_bytes:
            f.refuse("file_too_large", f"the file is {change.size:,} bytes; the limit is "
                     f"{self.scoring.options.max_bytes:,}", "submit top-K lists (K >= 10) rather than full rankings")
            return None
        local = download(self.hub, change.path, pull.head or "", self.workdir)
        try:
            ev = score_file(local, self.scoring.options, bootstrap=self.scoring.resamples, seed=self.scoring.seed)
        except InvalidSubmission as exc:
            for issue in exc.issues:
                f.problems.append(Problem(issue.pointer, issue.code, issue.message, issue.hint))
            f.error_count = exc.issues.total
            f.counts_by_code = dict(exc.issues.by_code)
            return None
        except UsageError as exc:
            raise NotReviewable(f"{change.path}: {plain(str(exc), 300)}") from None
        benchmark = registry().benchmark(f.benchmark)
        if ev.result.benchmark != f.benchmark:
            f.refuse("wrong_folder", f"declares benchmark {plain(ev.result.benchmark, 80)} but sits in {f.benchmark}/",
                     f"move the file to submissions/{plain(ev.result.benchmark, 80)}/ or fix its benchmark",
                     "/benchmark")
            return None
        f.result = canonical(ev.result)
        f.metric = benchmark.metric(benchmark.main_score)
        on_main = self.boards.files(main, f.benchmark).get(change.path)
        if on_main is not None and getattr(on_main, "blob_id", None) != change.oid:
            self._check_owner(f, pull, main, on_main)
        sha256 = sha256_file(local)
        return self.boards.remember(change.oid, Entry(change.path.split("/", 1)[1], f.result, ev.items), sha256), sha256

    def _check_owner(self, f: FileReview, pull: PullState, main: str, on_main: object) -> None:
        """A change to an entry main holds: only its owner's, under the same team name."""
        f.replaces = True
        owner = self.owners.owner(f.path)
        current = self.boards.entry(f.path, main, on_main)
        team = _text(current.result.meta.get("team")) if current is not None else None
        if owner is None:
            f.refuse("unowned_entry", "it replaces an entry that no intake merge recorded an owner for",
                     "only the maintainers change it; submit under a new file name, or ask them")
        elif owner != pull.author:
            f.refuse("another_teams_entry", f"it replaces {plain(team or 'another team', 80)}'s entry, submitted by "
                     "another hub account", "submit under a new file name")
        elif not same_team(team, f.team):
            f.refuse("team_changed", f"it changes the entry's team from {plain(team or '(none)', 80)} to "
                     f"{plain(f.team or '(none)', 80)}", "keep meta.team, or ask the maintainers to rename it")

