"""Score the submissions folder into boards: cache, validation, tie-aware ranks, markers, reported rows.

Every `submissions/<benchmark>/*.json(.gz)` file is validated and scored against the ground truth
in the data folder (benchmarks whose data is absent are listed as skipped, not guessed), or taken
from the score cache when nothing it depends on changed. Rows are grouped by benchmark *and
version* (results of different versions never share a table); `ranking.py` makes each board's
rows (one per method, a method's seeds as one) and ranks them with ties.

What a build publishes depends only on the submissions, the ground truth and vlbench's version,
never on the machine: why this machine could not compute a metric (no Java, a missing jar, a
local path) goes to the build's own output (`BuildReport.local_reasons`), and the published
record says only that the metric was not computed.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Container
from dataclasses import dataclass, field
from pathlib import Path

from vlbench.benchmark import Benchmark
from vlbench.errors import InvalidSubmission, UsageError
from vlbench.ground_truth import locate_ground_truth
from vlbench.hashing import sha256_file
from vlbench.item_table import ItemTable
from vlbench.leaderboard.cache import NOT_COMPUTED, CachedScore, ScoreCache, cache_key, canonical
from vlbench.leaderboard.ranking import FloorNote, MethodRow, rank_board
from vlbench.leaderboard.sources import (
    REPORTED_FOLDER,
    ReferenceList,
    ReportedRow,
    read_reference_list,
    read_reported,
)
from vlbench.progress import progress
from vlbench.registry import registry
from vlbench.results import ResultRecord
from vlbench.scoring import score_file


@dataclass
class Entry:
    path: str  # relative to the submissions folder, POSIX separators
    result: ResultRecord
    items: dict[str, ItemTable]
    reference: bool = False  # on the maintainers' reference list (the † marker)
    rank: int = 0  # the rank of the board row that shows it (its method's)
    floor: bool = False  # a chance floor (listed with `floor`): ranked, never a best mark

    @property
    def main(self) -> float:
        value = self.result.scores.get(self.result.main_score)
        return float("-inf") if value is None else value


@dataclass
class Board:
    benchmark: Benchmark
    entries: list[Entry] = field(default_factory=list)
    reported: list[ReportedRow] = field(default_factory=list)
    retired: bool = False  # a benchmark version whose ground truth vlbench no longer ships
    rows: list[MethodRow] = field(default_factory=list)  # what the board shows, ranked (rank_board)
    floor_notes: list[FloorNote] = field(default_factory=list)  # columns where a floor beats every contender


# Results of retired benchmark versions: submissions/retired/<benchmark>@<version>/<name>.json, each
# the score-cache entry (result record and per-item statistics) of a submission scored while its
# version was current. They keep their own table; they are never rescored or compared with the
# current version.
RETIRED_FOLDER = "retired"


def read_retired(root: Path) -> tuple[dict[tuple[str, str], Board], list[tuple[str, str]]]:
    boards: dict[tuple[str, str], Board] = {}
    skipped: list[tuple[str, str]] = []
    reg = registry()
    folder = root / RETIRED_FOLDER
    for path in sorted(folder.glob("*/*.json")) if folder.is_dir() else []:
        relative = path.relative_to(root).as_posix()
        benchmark_id, at, version = path.parent.name.partition("@")
        if not at or benchmark_id not in reg.benchmarks:
            skipped.append((relative, f"folder {path.parent.name!r} is not <benchmark id>@<version>"))
            continue
        current = reg.benchmark(benchmark_id)
        if version == current.version:
            skipped.append((relative, f"v{version} is {benchmark_id}'s current version: put the submission in {benchmark_id}/"))
            continue
        try:
            entry = CachedScore.from_json(path.read_bytes())
        except (OSError, ValueError, KeyError, TypeError) as exc:
            skipped.append((relative, f"not a retired result file ({type(exc).__name__})"))
            continue
        result = entry.result
        if result is None or (result.benchmark, result.benchmark_version) != (benchmark_id, version):
            skipped.append((relative, f"holds no scored result of {benchmark_id} v{version}"))
            continue
        description = (f"Retired version {version}: scored while it was current and kept as it was (its ground "
                       f"truth is no longer shipped); not comparable with v{current.version}.")
        retired = dataclasses.replace(current, version=version, description=description)
        board = boards.setdefault((benchmark_id, version), Board(retired, retired=True))
        board.entries.append(Entry(relative, result, entry.items))
    return boards, skipped


@dataclass
class InvalidEntry:
    path: str
    error_count: int
    errors: list[dict[str, str]]  # Issue.to_dict(): code, pointer, message, hint

    def summary(self) -> str:
        first = self.errors[0] if self.errors else {"pointer": "", "code": "", "message": ""}
        noun = "problem" if self.error_count == 1 else "problems"
        return f"{self.error_count} {noun}; first: {first['pointer'] or '(document)'}: [{first['code']}] {first['message']}"


@dataclass
class BuildReport:
    boards: list[Board]
    skipped: list[tuple[str, str]]  # (path, reason)
    invalid: list[InvalidEntry]
    cache: ScoreCache
    scored: list[str] = field(default_factory=list)  # paths scored in this build (cache misses)
    notes: list[str] = field(default_factory=list)
    # path -> {metric: why this machine could not compute it}: the build's output, never published
    local_reasons: dict[str, dict[str, str]] = field(default_factory=dict)

    def local_notes(self) -> list[str]:
        """One line per metric and cause, naming its files once."""
        causes: dict[tuple[str, str], list[str]] = {}
        for path, reasons in sorted(self.local_reasons.items()):
            for metric, reason in sorted(reasons.items()):
                causes.setdefault((metric, reason), []).append(path)
        return [f"{metric} not computed on this machine for {_files(paths)}: {reason}"
                for (metric, reason), paths in causes.items()]


def _files(paths: list[str], listed: int = 5) -> str:
    shown = ", ".join(paths[:listed])
    more = f" and {len(paths) - listed} more" if len(paths) > listed else ""
    return f"{len(paths)} file{'s' if len(paths) != 1 else ''} ({shown}{more})"


def submission_file_name(name: str) -> bool:
    """Whether a file with this name, directly in a benchmark's folder, is a submission the build
    scores (the hub's intake places main's files by this rule too)."""
    return name.endswith((".json", ".json.gz"))


def _submission_files(root: Path) -> list[Path]:
    files = (p for p in root.glob("*/*") if submission_file_name(p.name) and p.is_file())
    return sorted((p for p in files if p.parent.name != REPORTED_FOLDER), key=lambda p: p.relative_to(root).as_posix())


def _score(path: Path, folder: str, data_dir: str | os.PathLike | None, resamples: int,
           seed: int) -> tuple[CachedScore, dict[str, str]]:
    """The cache entry (machine-independent) and the local reasons of metrics not computed."""
    try:
        ev = score_file(path, benchmark_id=None, data_dir=data_dir, bootstrap=resamples, seed=seed)
    except InvalidSubmission as exc:
        return CachedScore(None, {}, [i.to_dict() for i in exc.issues], exc.issues.total), {}
    if ev.result.benchmark != folder:
        issue = {"code": "wrong_folder", "pointer": "/benchmark",
                 "message": f"declares benchmark {ev.result.benchmark} but sits in {folder}/",
                 "hint": f"move the file to {ev.result.benchmark}/ or fix its benchmark"}
        return CachedScore(None, {}, [issue], 1), {}
    local = {str(k): str(v) for k, v in ev.result.extra.get("unavailable", {}).items() if v != NOT_COMPUTED}
    return CachedScore(canonical(ev.result), ev.items, []), local


def _refuse_lost_metrics(boards: list[Board], published: dict[str, set[str]],
                         local_reasons: dict[str, dict[str, str]] | None = None) -> None:
    """A metric the board would show that this machine could not compute: refuse, never 'n/a'.

    A board shows a column for every metric key in its entries' scores (a `None` score is still a
    key: the task reports the metric but could not compute it), every metric another entry has a
    value for, and every metric the current leaderboard publishes. A metric a task leaves out of
    its scores altogether (e.g. SPICE without its jar) is not shown, so it is not refused.

    The refusal gives one sentence per cause (a metric and why it could not be computed), naming
    its files once, then what the task's metrics need and where cached results help."""
    local_reasons = local_reasons or {}
    causes: dict[tuple[str, str], list[str]] = {}
    hints: list[str] = []
    for board in boards:
        shown = set(published.get(board.benchmark.id, set()))
        shown |= {k for e in board.entries for k in e.result.scores}
        for e in board.entries:
            for metric in sorted(e.result.extra.get("unavailable", {})):
                if metric in shown and e.result.scores.get(metric) is None:
                    reason = local_reasons.get(e.path, {}).get(metric) or e.result.extra["unavailable"][metric]
                    causes.setdefault((metric, reason), []).append(e.path)
                    hint = getattr(registry().task_of(board.benchmark), "metrics_install_hint", "")
                    if hint and hint not in hints:
                        hints.append(hint)
    if not causes:
        return
    sentences = [f"{metric} could not be computed for {_files(paths)}: {reason.rstrip('.')}."
                 for (metric, reason), paths in causes.items()]
    # a hint whose command the reasons give already is not repeated
    needs = [h for h in hints if not any(h.rsplit(": ", 1)[-1] in reason for _, reason in causes)]
    raise UsageError(
        "cannot publish: this machine could not compute metrics the leaderboard shows, and no cached result "
        "covers them. " + " ".join(sentences)
        + (f" {' '.join(needs)}." if needs else "")
        + " Install what is missing, or build into the leaderboard folder whose cache/ holds these results "
        "(e.g. the committed leaderboard/)."
    )


def _refuse_benchmark_folder(root: Path, benchmark_ids: Container[str]) -> None:
    """`--submissions submissions/mini-retrieval`: one benchmark's folder, not the folder of folders."""
    loose = [p.name for p in root.iterdir() if p.name.endswith((".json", ".json.gz")) and p.is_file()]
    if loose and (root.name in benchmark_ids or not _submission_files(root)):
        raise UsageError(f"--submissions {root} holds submission files itself ({loose[0]}...); give the folder "
                         f"that holds the <benchmark>/ folders (e.g. {root.parent})")


def build(
    submissions: str | os.PathLike,
    data_dir: str | os.PathLike | None = None,
    alpha: float = 0.05,
    resamples: int = 1000,
    seed: int = 0,
    cache_dir: str | os.PathLike | None = None,
    rebuild: bool = False,
    quiet: bool = False,
    published: dict[str, set[str]] | None = None,
) -> BuildReport:
    """Score (or take from the cache) every submission; `published`: metrics per benchmark that the
    current leaderboard shows, which a build must not lose."""
    root = Path(submissions)
    if not root.is_dir():
        raise UsageError(f"no submissions folder at {root}")
    reg = registry()
    _refuse_benchmark_folder(root, reg.benchmarks)
    references: ReferenceList = read_reference_list(root)
    reported = read_reported(root, reg.benchmarks)
    cache = ScoreCache(Path(cache_dir) if cache_dir is not None else None, enabled=not rebuild)
    boards: dict[tuple[str, str], Board] = {}
    skipped: list[tuple[str, str]] = []
    invalid: list[InvalidEntry] = []
    scored: list[str] = []
    local_reasons: dict[str, dict[str, str]] = {}
    ground_truth: dict[str, str] = {}
    files = _submission_files(root)
    for path in progress(files, "scoring submissions", unit="file", show=not quiet):
        relative = path.relative_to(root).as_posix()
        folder = path.parent.name
        if folder not in reg.benchmarks:
            skipped.append((relative, f"folder {folder!r} is not a benchmark id"))
            continue
        benchmark = reg.benchmark(folder)
        try:
            if folder not in ground_truth:
                ground_truth[folder] = locate_ground_truth(benchmark, data_dir).combined_sha256
        except UsageError as exc:
            skipped.append((relative, str(exc).splitlines()[0]))
            continue
        submission_sha = sha256_file(path)
        key = cache_key(f"{submission_sha} bootstrap {resamples} seed {seed}", benchmark, ground_truth[folder])
        entry = cache.get(benchmark, key)
        if entry is None:
            try:
                entry, local = _score(path, folder, data_dir, resamples, seed)
            except UsageError as exc:
                skipped.append((relative, str(exc).splitlines()[0]))
                continue
            cache.put(benchmark, key, entry)
            scored.append(relative)
            if local:
                local_reasons[relative] = local
        elif entry.result is not None:
            canonical(entry.result)  # an entry cached by an older vlbench may hold a local reason
        if entry.result is None:
            invalid.append(InvalidEntry(relative, entry.error_count, entry.errors))
            continue
        board = boards.setdefault((benchmark.id, benchmark.version), Board(benchmark))
        board.entries.append(Entry(relative, entry.result, entry.items, references.marks(relative, submission_sha),
                                   floor=references.floor(relative, submission_sha)))
    for row in reported:
        benchmark = reg.benchmark(row.benchmark)
        boards.setdefault((benchmark.id, benchmark.version), Board(benchmark)).reported.append(row)
    retired, retired_skipped = read_retired(root)
    boards.update(retired)
    skipped += retired_skipped
    # Scored boards first (a visitor comes for them), then boards of paper numbers only, then
    # retired versions; by benchmark id within each.
    ordered = [boards[k] for k in sorted(boards, key=lambda k: (boards[k].retired, not boards[k].entries, k))]
    _refuse_lost_metrics(ordered, published or {}, local_reasons)
    for board in ordered:
        rank_board(board, alpha, resamples, seed)
    notes = [f"{path} is on the reference list (REFERENCE_ENTRIES) but not on a board (missing, invalid or skipped)"
             for path in sorted(set(references.pins) - {e.path for b in ordered for e in b.entries})]
    return BuildReport(ordered, skipped, invalid, cache, scored, notes, local_reasons)
