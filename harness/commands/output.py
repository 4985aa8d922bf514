"""What the commands print: score tables, counts, notes and the list of a submission's problems.

`simple_table` stands in for tabulate's "simple" format on the score path, where start-up is most
of a command's time (tabulate imports wcwidth and importlib.metadata)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from vlbench.backports import strict_zip
from vlbench.benchmark import Benchmark, Metric
from vlbench.errors import InvalidSubmission
from vlbench.results import ResultRecord


def metric_for(benchmark: Benchmark, key: str) -> Metric:
    try:
        return benchmark.metric(key)
    except KeyError:
        return Metric(key, "")


def print_issues(exc: InvalidSubmission, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"source": exc.source, **exc.issues.to_dict()}, indent=2))
        return
    print(f"INVALID: {exc}", file=sys.stderr)
    print(exc.issues.report(), file=sys.stderr)


def _singular(noun: str) -> str:
    """The count keys' English plurals: queries, classes, boxes, matches, images, folds."""
    if noun.endswith("ies"):
        return noun[:-3] + "y"
    if noun.endswith(("sses", "xes", "ches", "shes")):
        return noun[:-2]
    if noun.endswith("s") and not noun.endswith("ss"):
        return noun[:-1]
    return noun


def describe_counts(n: dict[str, Any]) -> str:
    """`{'images': 250, 'folds': 1}` -> `250 images, 1 fold` (for people, not a dict repr)."""
    parts = []
    for key, value in n.items():
        noun = key.replace("_", " ")
        if value == 1:
            noun = _singular(noun)
        parts.append(f"{value:,} {noun}" if isinstance(value, int) else f"{value} {noun}")
    return ", ".join(parts)


def score_table(result: ResultRecord, benchmark: Benchmark) -> str:
    rows = []
    for key, value in result.scores.items():
        metric = metric_for(benchmark, key)
        ci = result.ci95.get(key)
        ci_text = f"[{metric.format(ci[0])}, {metric.format(ci[1])}]" if ci else ""
        unit = "%" if metric.display == "percent" else ""
        rows.append([key + (" *" if key == result.main_score else ""), metric.format(value) + unit, ci_text])
    return simple_table(rows, ["metric", "value", "95% CI"])


def simple_table(rows: list[list[str]], headers: list[str]) -> str:
    """tabulate's "simple" format for text cells, without importing tabulate (and wcwidth,
    importlib.metadata): `vlbench score` prints one table, and start-up is most of its time."""
    widths = [max([len(h) + 2, *(len(r[j]) for r in rows)]) for j, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in strict_zip(cells, widths)).rstrip()

    return "\n".join([line(headers), "  ".join("-" * w for w in widths), *map(line, rows)])


def result_header(evaluation: Any, source: str | None = None) -> str:
    """What was scored against what, in plain words: the benchmark and the method; for a file
    scored against a references file of its own (`--references`), the two files."""
    from vlbench.registry import registry

    result, sub = evaluation.result, evaluation.submission
    b = sub.benchmark
    name = Path(source).name if source else "the submission"
    if registry().benchmarks.get(b.id) is not b and b.files:  # an ad-hoc benchmark made from a file
        method = "" if sub.bare else f" - {result.meta.get('method', '')}"
        return f"{name} scored against the references in {Path(b.files[0].path).name} ({b.task}){method}"
    method = f"{name} (a bare predictions file: no method named)" if sub.bare else result.meta.get("method", "")
    return f"{b.id} v{b.version} ({b.task}) - {method}"


def print_result(evaluation: Any, source: str | None = None) -> None:
    result, b = evaluation.result, evaluation.submission.benchmark
    print(result_header(evaluation, source))
    print(score_table(result, b))
    print(f"\n* main score. {describe_counts(result.n)}. submission sha256 {result.submission_sha256[:12]}, "
          f"ground truth sha256 {result.ground_truth_sha256[:12]}, {result.elapsed_s:.2f} s")


def print_notes(results: list[ResultRecord], prefixes: list[str] | None = None) -> None:
    """Warnings for each result; notes and unavailable metrics once per run, however many files
    say the same (every caption file would repeat SPICE's)."""
    for i, result in enumerate(results):
        where = f"{prefixes[i]}: " if prefixes else ""
        for warning in result.extra.get("warnings", []):
            print(f"warning: {where}{warning}", file=sys.stderr)
    unavailable = dict.fromkeys((m, r) for res in results for m, r in res.extra.get("unavailable", {}).items())
    for metric, reason in unavailable:
        print(f"note: {metric} unavailable: {reason}", file=sys.stderr)
    for note in dict.fromkeys(n for res in results for n in res.extra.get("notes", [])):
        print(f"note: {note}")
