"""`vlbench tasks`: the installed benchmarks, their versions and whether their data is present."""

from __future__ import annotations

import argparse
import json

from vlbench.commands import EXIT_OK
from vlbench.ground_truth import data_status, default_data_dir
from vlbench.registry import registry


def cmd_tasks(args: argparse.Namespace) -> int:
    reg = registry()
    rows = []
    for b in sorted(reg.benchmarks.values(), key=lambda b: (b.task, b.id)):
        rows.append(
            {
                "benchmark": b.id,
                "task": b.task,
                "version": b.version,
                "main_score": b.main_score,
                "data": data_status(b, args.data_dir),
                "description": b.description,
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        from tabulate import tabulate

        print(tabulate([{k: v for k, v in r.items() if k != "description"} for r in rows], headers="keys", disable_numparse=True))
        print(f"\ndata folder: {args.data_dir or default_data_dir()}")
    return EXIT_OK
