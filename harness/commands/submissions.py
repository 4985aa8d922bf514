"""`vlbench validate` and `vlbench score`: one submission or several, through
`submission.validate` and `scoring.score_file`, with the options both commands share."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from vlbench.benchmark import Benchmark
from vlbench.bounded_read import refuse_past_caps
from vlbench.commands import EXIT_INVALID, EXIT_OK
from vlbench.commands.output import (
    metric_for,
    print_issues,
    print_notes,
    print_result,
    simple_table,
)
from vlbench.errors import InvalidSubmission, UsageError
from vlbench.registry import registry

if TYPE_CHECKING:
    from vlbench.submission import ValidationOptions


def _override(args: argparse.Namespace) -> Benchmark | None:
    if not getattr(args, "references", None):
        if getattr(args, "subset", False):
            raise UsageError("--subset needs --references FILE: a benchmark is scored on all its images "
                             "(for part of one, give its references file with --references)")
        return None
    task = registry().references_task()
    if task is None:
        raise UsageError("--references needs the captioning task, which is not installed")
    benchmark = task.references_benchmark(Path(args.references), subset=getattr(args, "subset", False))
    refuse_past_caps(args.references, args.max_bytes, args.max_decompressed, "references")
    return benchmark


def _submission_options(args: argparse.Namespace) -> ValidationOptions:
    """What `validate` and `score` share: the options of the common subparser setup."""
    from vlbench.submission import ValidationOptions

    return ValidationOptions(
        benchmark_id=args.benchmark,
        data_dir=args.data_dir,
        max_bytes=args.max_bytes,
        max_decompressed=args.max_decompressed,
        max_errors=args.max_errors,
        benchmark_override=_override(args),
        input_format=args.input_format,
        strict=args.strict,
    )


def cmd_validate(args: argparse.Namespace) -> int:
    from vlbench.submission import validate

    sub = validate(args.submission, _submission_options(args))
    if args.json:
        print(json.dumps({"source": args.submission, "valid": True, "benchmark": sub.benchmark.id,
                          "error_count": 0, "errors": []}, indent=2))
    else:
        print(f"VALID: {args.submission} is a valid {sub.benchmark.id} submission "
              f"(benchmark v{sub.benchmark.version})")
    return EXIT_OK


def _check_out(out: str | None, submission: str, force: bool = False) -> None:
    """Refuse a bad --out before any work (a refused run must write nothing): the output rule
    (`output_rule`: only a result record and per-item file vlbench wrote are replaced, unless
    --force; no missing folder is made), and never the submission itself."""
    if not out:
        return
    from vlbench.scoring import check_evaluation_target

    path = Path(out)
    given = Path(submission)
    if given.exists() and given.is_file():
        from vlbench.results import per_item_path

        for target in (path, per_item_path(path)):
            if target.exists() and target.resolve() == given.resolve():
                raise UsageError(f"--out {out} would overwrite the submission {submission}; name another file")
    check_evaluation_target(path, force=force)


def cmd_score(args: argparse.Namespace) -> int:
    if len(args.submission) > 1 or args.out_dir:
        return _score_many(args)
    if args.verbose:
        raise UsageError("--verbose is for several submissions (one submission always prints its full table)")
    from vlbench.scoring import score_file, write_evaluation

    submission = args.submission[0]
    _check_out(args.out, submission, args.force)
    evaluation = score_file(submission, _submission_options(args), bootstrap=args.bootstrap, seed=args.seed,
                            out=args.out)
    result = evaluation.result
    if args.out:
        write_evaluation(evaluation, args.out, force=args.force)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return EXIT_OK
    print_result(evaluation, submission)
    print_notes([result])
    if args.out:
        print(f"result written to {args.out}")
    return EXIT_OK


def _score_many(args: argparse.Namespace) -> int:
    """Several submissions: one summary table (each file's table with --verbose); the result
    records go to --out-dir, all written after every file was scored."""
    from vlbench.output_rule import check_folder_to_fill, make_folder
    from vlbench.scoring import score_file, write_evaluation

    if args.out:
        raise UsageError("--out names one result file; with several submissions, give a folder with --out-dir")
    targets: list[Path] = []
    if args.out_dir:
        folder = check_folder_to_fill(args.out_dir, "--out-dir")
        for name in args.submission:
            given = Path(name)
            stem = given.name.removesuffix(".gz").removesuffix(".json")
            target = folder / f"{given.parent.name}-{stem}.json" if given.parent.name else folder / f"{stem}.json"
            if target in targets:
                raise UsageError(f"two submissions would write {target}; score them in separate runs")
            targets.append(target)
            if folder.is_dir():
                _check_out(str(target), name, args.force)
    done, invalid, scored_targets = [], 0, []
    for i, name in enumerate(args.submission):
        try:
            evaluation = score_file(name, _submission_options(args), bootstrap=args.bootstrap, seed=args.seed,
                                    out=targets[i] if targets else None)
        except InvalidSubmission as exc:
            print_issues(exc, False)
            invalid += 1
            continue
        done.append((name, evaluation))
        scored_targets += targets[i:i + 1]
        if args.verbose and not args.json:
            print(f"\n== {name}")
            print_result(evaluation, name)
    if done and args.out_dir:
        make_folder(folder)
    for (_, evaluation), target in zip(done, scored_targets):
        write_evaluation(evaluation, target, force=args.force)
    if args.json:
        print(json.dumps([e.result.to_dict() for _, e in done], indent=2))
        return EXIT_INVALID if invalid else EXIT_OK
    rows = []
    for name, evaluation in done:
        r, b = evaluation.result, evaluation.submission.benchmark
        metric = metric_for(b, r.main_score)
        ci = r.ci95.get(r.main_score)
        unit = "%" if metric.display == "percent" else ""
        method = str(r.meta.get("method", ""))
        rows.append([name, b.id, method if len(method) <= 36 else method[:35] + "…", r.main_score,
                     metric.format(r.scores.get(r.main_score)) + unit,
                     f"[{metric.format(ci[0])}, {metric.format(ci[1])}]" if ci else ""])
    print()
    print(simple_table(rows, ["submission", "benchmark", "method", "main score", "value", "95% CI"]))
    print_notes([e.result for _, e in done], [n for n, _ in done])
    written = f"; result records in {args.out_dir}" if args.out_dir else ""
    print(f"\n{len(done)} scored, {invalid} invalid{written}" + ("" if args.verbose else "; every metric: --verbose"))
    return EXIT_INVALID if invalid else EXIT_OK
