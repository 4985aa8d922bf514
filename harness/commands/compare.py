"""`vlbench compare`: the paired bootstrap test between two result records of one benchmark."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vlbench.commands import EXIT_OK
from vlbench.commands.output import metric_for
from vlbench.errors import UsageError
from vlbench.registry import registry
from vlbench.results import ResultRecord, load_items


def cmd_compare(args: argparse.Namespace) -> int:
    from vlbench.stats import paired_bootstrap

    a, b = ResultRecord.load(args.result_a), ResultRecord.load(args.result_b)
    if (a.benchmark, a.benchmark_version) != (b.benchmark, b.benchmark_version):
        raise UsageError(
            f"results are on different benchmarks: {a.benchmark} v{a.benchmark_version} vs "
            f"{b.benchmark} v{b.benchmark_version}"
        )
    if a.ground_truth_sha256 != b.ground_truth_sha256:
        raise UsageError("results were scored against different ground truth (sha256 differs)")
    items = []
    for r, path in ((a, args.result_a), (b, args.result_b)):
        if not r.per_item:
            raise UsageError(f"{path} records no per-item file (the paired test needs one): score the "
                             "submission again with --out, which writes it next to the record")
        where = Path(path).parent / Path(r.per_item).name
        if not where.exists():
            raise UsageError(f"{path} names the per-item file {where}, which is missing: keep it next "
                             "to the record, or score the submission again with --out")
        items.append(load_items(where))
    reg = registry()
    benchmark = reg.benchmark(a.benchmark)
    task = reg.task_of(benchmark)
    try:
        rows = paired_bootstrap(
            items[0], items[1], lambda m: task.metrics_from_means(benchmark, m), args.bootstrap, args.seed
        )
    except ValueError as exc:
        raise UsageError(f"{args.result_a} and {args.result_b} cannot be paired: {exc}") from None
    if args.json:
        print(json.dumps([r.__dict__ for r in rows], indent=2))
        return EXIT_OK
    table = []
    for r in rows:
        metric = metric_for(benchmark, r.metric)
        table.append([r.metric, metric.format(r.a), metric.format(r.b), metric.format(r.difference),
                      f"[{metric.format(r.ci95[0])}, {metric.format(r.ci95[1])}]", f"{r.p_value:.4f}"])
    print(f"A = {a.meta.get('method', args.result_a)}, B = {b.meta.get('method', args.result_b)}")
    from tabulate import tabulate

    print(tabulate(table, headers=["metric", "A", "B", "A-B", "95% CI of A-B", "p"], disable_numparse=True))
    return EXIT_OK
