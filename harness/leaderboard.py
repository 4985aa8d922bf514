"""Leaderboard tables, generated from the submissions folder (never edited by hand).

Every `submissions/<benchmark>/*.json(.gz)` file is validated and scored against the ground truth
in the data folder (benchmarks whose data is absent are listed as skipped, not guessed). Rows are
grouped by benchmark *and version* (results of different versions never share a table), sorted by
the main score, and ranked with ties: an entry shares the rank of the one above it unless a paired
bootstrap test on the same items says they differ (p < alpha). Reference submissions made by
baseline recipes carry a marker. Outputs: Markdown, HTML (every user string escaped), CSV, JSON.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from vlbench import __version__
from vlbench.errors import InvalidSubmission, UsageError
from vlbench.jsonio import atomic_write_bytes
from vlbench.registry import Benchmark, ItemTable, registry
from vlbench.results import ResultRecord
from vlbench.scoring import score_file
from vlbench.stats import paired_bootstrap

BASELINE_MARK = "†"


@dataclass
class Entry:
    path: str
    result: ResultRecord
    items: dict[str, ItemTable]
    rank: int = 0

    @property
    def main(self) -> float:
        value = self.result.scores.get(self.result.main_score)
        return float("-inf") if value is None else value


@dataclass
class Board:
    benchmark: Benchmark
    entries: list[Entry] = field(default_factory=list)


@dataclass
class BuildReport:
    boards: list[Board]
    skipped: list[tuple[str, str]]  # (path, reason)
    invalid: list[tuple[str, str]]


def _submission_files(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*/*") if p.name.endswith((".json", ".json.gz")) and p.is_file())


def _rank(board: Board, alpha: float, resamples: int, seed: int) -> None:
    task = registry().task_of(board.benchmark)
    higher = board.benchmark.metric(board.benchmark.main_score).higher_is_better
    board.entries.sort(key=lambda e: (-e.main if higher else e.main, e.result.meta.get("method", ""), e.path))
    for i, entry in enumerate(board.entries):
        if i == 0:
            entry.rank = 1
            continue
        above = board.entries[i - 1]
        same = False
        if entry.items and above.items:
            comparisons = paired_bootstrap(
                above.items, entry.items, lambda m: task.metrics_from_means(board.benchmark, m), resamples, seed
            )
            main = next(c for c in comparisons if c.metric == board.benchmark.main_score)
            same = main.p_value >= alpha
        entry.rank = above.rank if same or entry.main == above.main else i + 1


def build(
    submissions: str | os.PathLike,
    data_dir: str | os.PathLike | None = None,
    alpha: float = 0.05,
    resamples: int = 1000,
    seed: int = 0,
) -> BuildReport:
    root = Path(submissions)
    if not root.is_dir():
        raise UsageError(f"no submissions folder at {root}")
    reg = registry()
    boards: dict[tuple[str, str], Board] = {}
    skipped: list[tuple[str, str]] = []
    invalid: list[tuple[str, str]] = []
    files = _submission_files(root)
    for path in tqdm(files, desc="scoring submissions", unit="file", disable=not sys.stderr.isatty()):
        folder = path.parent.name
        if folder not in reg.benchmarks:
            skipped.append((str(path), f"folder {folder!r} is not a benchmark id"))
            continue
        try:
            ev = score_file(path, benchmark_id=None, data_dir=data_dir, bootstrap=resamples, seed=seed)
        except InvalidSubmission as exc:
            invalid.append((str(path), f"{exc.issues.total} problems, first: {next(iter(exc.issues))}"))
            continue
        except UsageError as exc:
            skipped.append((str(path), str(exc).splitlines()[0]))
            continue
        if ev.result.benchmark != folder:
            invalid.append((str(path), f"declares benchmark {ev.result.benchmark} but sits in {folder}/"))
            continue
        benchmark = reg.benchmark(folder)
        key = (benchmark.id, benchmark.version)
        boards.setdefault(key, Board(benchmark)).entries.append(
            Entry(str(path.relative_to(root)), ev.result, ev.items)
        )
    for board in boards.values():
        _rank(board, alpha, resamples, seed)
    return BuildReport([boards[k] for k in sorted(boards)], skipped, invalid)


def _name(entry: Entry) -> str:
    method = str(entry.result.meta.get("method", "?"))
    return method + (f" {BASELINE_MARK}" if entry.result.meta.get("reference") else "")


def _value(board: Board, entry: Entry, key: str) -> str:
    metric = board.benchmark.metric(key)
    value = entry.result.scores.get(key)
    text = metric.format(value)
    ci = entry.result.ci95.get(key)
    if ci and value is not None:
        half = (ci[1] - ci[0]) / 2
        text += f" ± {metric.format(half)}"
    return text


def _columns(board: Board) -> list[str]:
    """Headline metrics: declared, present, and not a per-group breakdown (`R@1/people`)."""
    present = {k for e in board.entries for k in e.result.scores}
    return [m.key for m in board.benchmark.metrics if m.key in present and "/" not in m.key]


def _breakdown(board: Board, entry: Entry) -> tuple[list[str], list[list[str]]]:
    """`metric/group` scores as a small table: a row per group, a column per metric."""
    groups: dict[str, dict[str, str]] = {}
    bases: list[str] = []
    for key, value in entry.result.scores.items():
        if "/" not in key or value is None:
            continue
        base, group = key.split("/", 1)
        if base not in bases:
            bases.append(base)
        try:
            metric = board.benchmark.metric(base)
        except KeyError:
            metric = board.benchmark.metric(board.benchmark.main_score)
        groups.setdefault(group, {})[base] = metric.format(value)
    return bases, [[g, *(row.get(b, "") for b in bases)] for g, row in groups.items()]


def to_markdown(report: BuildReport) -> str:
    out = io.StringIO()
    out.write(f"<!-- generated by vlbench {__version__} (vlbench leaderboard build); do not edit -->\n")
    out.write("# vlbench leaderboard\n\n")
    out.write(
        f"Ranks are shared when a paired bootstrap test on the main score cannot separate an entry "
        f"from the one above it (p >= 0.05). ± is half the 95% bootstrap interval. {BASELINE_MARK}: "
        "reference submission made by a baseline recipe.\n"
    )
    for board in report.boards:
        b = board.benchmark
        cols = _columns(board)
        description = b.description.rstrip()
        description += "" if description.endswith(".") else "."
        out.write(f"\n## {b.id} (v{b.version}, {b.task})\n\n{description} Main score: `{b.main_score}`.\n\n")
        header = ["rank", "method", "team", *cols]
        out.write("| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n")
        for e in board.entries:
            cells = [str(e.rank), _md(_name(e)), _md(str(e.result.meta.get("team", ""))), *(_value(board, e, k) for k in cols)]
            out.write("| " + " | ".join(cells) + " |\n")
        for e in board.entries:
            bases, rows = _breakdown(board, e)
            if not rows:
                continue
            out.write(f"\n{_md(_name(e))}, by group:\n\n| group | " + " | ".join(bases) + " |\n")
            out.write("|" + "---|" * (len(bases) + 1) + "\n")
            for row in rows:
                out.write("| " + " | ".join(_md(c) for c in row) + " |\n")
    if report.skipped or report.invalid:
        out.write("\n## Not on the board\n\n")
        for path, why in report.invalid:
            out.write(f"- `{_md(path)}`: invalid: {_md(why)}\n")
        for path, why in report.skipped:
            out.write(f"- `{_md(path)}`: skipped: {_md(why)}\n")
    return out.getvalue()


def _md(text: str) -> str:
    # Submission metadata is untrusted: no markup, no table breaks.
    return html.escape(text.replace("|", "\\|").replace("\n", " ").replace("`", "'"), quote=False)


def to_html(report: BuildReport) -> str:
    parts = [
        "<!doctype html>",
        f"<!-- generated by vlbench {__version__} (vlbench leaderboard build); do not edit -->",
        '<html lang="en"><head><meta charset="utf-8"><title>vlbench leaderboard</title>',
        "<style>body{font-family:sans-serif;max-width:70em;margin:auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}td:nth-child(2),td:nth-child(3){text-align:left}</style>",
        "</head><body><h1>vlbench leaderboard</h1>",
    ]
    for board in report.boards:
        b = board.benchmark
        cols = _columns(board)
        parts.append(f"<h2>{html.escape(b.id)} (v{html.escape(b.version)}, {html.escape(b.task)})</h2>")
        parts.append(f"<p>{html.escape(b.description)}</p><table><tr>")
        for h in ["rank", "method", "team", *cols]:
            arrow = ""
            if h in cols:
                arrow = " ↑" if b.metric(h).higher_is_better else " ↓"
            parts.append(f"<th>{html.escape(h)}{arrow}</th>")
        parts.append("</tr>")
        for e in board.entries:
            url = str(e.result.meta.get("url", ""))
            name = html.escape(_name(e))
            if url.startswith(("https://", "http://")):
                name = f'<a href="{html.escape(url, quote=True)}" rel="nofollow noopener">{name}</a>'
            cells = [str(e.rank), name, html.escape(str(e.result.meta.get("team", ""))), *(html.escape(_value(board, e, k)) for k in cols)]
            parts.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def to_rows(report: BuildReport) -> list[dict]:
    rows = []
    for board in report.boards:
        for e in board.entries:
            rows.append(
                {
                    "benchmark": board.benchmark.id,
                    "benchmark_version": board.benchmark.version,
                    "rank": e.rank,
                    "method": e.result.meta.get("method"),
                    "team": e.result.meta.get("team"),
                    "reference": bool(e.result.meta.get("reference")),
                    "submission": e.path,
                    "submission_sha256": e.result.submission_sha256,
                    "ground_truth_sha256": e.result.ground_truth_sha256,
                    "main_score": e.result.main_score,
                    "scores": e.result.scores,
                    "ci95": e.result.ci95,
                }
            )
    return rows


def to_csv(report: BuildReport) -> str:
    rows = to_rows(report)
    keys = sorted({k for r in rows for k in r["scores"]})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["benchmark", "benchmark_version", "rank", "method", "team", "reference", "submission", *keys])
    for r in rows:
        writer.writerow(
            [r["benchmark"], r["benchmark_version"], r["rank"], _csv_safe(r["method"]), _csv_safe(r["team"]),
             r["reference"], r["submission"], *(r["scores"].get(k, "") for k in keys)]
        )
    return out.getvalue()


def _csv_safe(value: object) -> str:
    # Spreadsheet formula injection: a cell starting with = + - @ is text, not a formula.
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def write(report: BuildReport, out_dir: str | os.PathLike) -> list[Path]:
    out = Path(out_dir)
    files = {
        "README.md": to_markdown(report),
        "index.html": to_html(report),
        "leaderboard.csv": to_csv(report),
        "leaderboard.json": json.dumps(
            {"harness_version": __version__, "entries": to_rows(report),
             "skipped": report.skipped, "invalid": report.invalid},
            indent=2, ensure_ascii=False,
        ) + "\n",
    }
    written = []
    for name, text in files.items():
        atomic_write_bytes(out / name, text.encode("utf-8"))
        written.append(out / name)
    return written
