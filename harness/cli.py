"""`vlbench` command line. Exit codes: 0 ok, 1 invalid submission, 2 usage or I/O error."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import traceback
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlbench import __version__
from vlbench.api import MAX_ERRORS, MAX_FILE_BYTES, MAX_RESAMPLES, MAX_SEED
from vlbench.benchmark import Benchmark, Metric
from vlbench.errors import InvalidSubmission, UsageError, VlbenchError, clip
from vlbench.ground_truth import data_status, default_data_dir
from vlbench.jsonio import DEFAULT_MAX_BYTES, DEFAULT_MAX_DECOMPRESSED
from vlbench.progress import quiet_bars, stage
from vlbench.registry import cli_plugins, registry
from vlbench.results import ResultRecord, load_items
from vlbench.source_check import SourceDeviation

if TYPE_CHECKING:
    from vlbench.submission import ValidationOptions

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """Exact option names only (`--boot 10` is an error, not `--bootstrap 10`), in every
    subcommand too: the subparsers and the plugins' parsers are made with this class."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # argparse exits 2 too; keep its usage text
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def count(low: int, high: int) -> Any:
    """An argparse type: a whole number in [low, high] (refused as a usage error otherwise)."""

    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", ""), 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is outside the allowed range {low:,} to {high:,}")
        return value

    parse.__name__ = "number"  # argparse names the type in its own messages
    return parse


BOOTSTRAP = count(0, MAX_RESAMPLES)
COMPARE_BOOTSTRAP = count(1, MAX_RESAMPLES)
SEED = count(0, MAX_SEED)


def _add_limits(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-bytes", type=count(1, MAX_FILE_BYTES), default=DEFAULT_MAX_BYTES,
                   help="largest file accepted (bytes)")
    p.add_argument(
        "--max-decompressed",
        type=count(1, MAX_FILE_BYTES),
        default=DEFAULT_MAX_DECOMPRESSED,
        help="largest decompressed size of a .json.gz (bytes)",
    )
    p.add_argument("--max-errors", type=count(1, MAX_ERRORS), default=50,
                   help="errors listed in full (the rest are counted)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="vlbench", description="Benchmark harness for vision-language models.")
    parser.add_argument("--version", action="version", version=f"vlbench {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("tasks", help="list benchmarks, versions and whether their data is present")
    p.add_argument("--data-dir", help="prepared data folder (default: $VLBENCH_DATA or ~/.cache/vlbench)")
    p.add_argument("--json", action="store_true")

    for name, helptext in (("validate", "check a submission; list every problem"),
                           ("score", "validate and score submissions (several: one summary table)")):
        p = sub.add_parser(name, help=helptext)
        if name == "score":
            p.add_argument("submission", nargs="+", help="submission file(s) (.json or .json.gz)")
        else:
            p.add_argument("submission", help="submission file (.json or .json.gz)")
        p.add_argument("--benchmark", help="benchmark id, for a bare predictions file without the envelope")
        p.add_argument("--references", help="captions: score against this COCO captions annotation file")
        p.add_argument("--subset", action="store_true",
                       help="captions, with --references: score the images the results caption (as "
                       "pycocoevalcap does), not every reference image; records how many of how many")
        p.add_argument("--data-dir", help="prepared data folder")
        p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
        _add_limits(p)
        p.add_argument("--format", dest="input_format", metavar="FORMAT",
                       help="read another tool's prediction file as it is (grounding: mdetr, glip; "
                       "needs --benchmark); default: vlbench, or detected in a bare file")
        p.add_argument("--strict", action="store_true",
                       help="refuse what is otherwise scored with a warning (e.g. a grounding "
                       "submission that leaves phrases out)")
        if name == "score":
            p.add_argument("--out", help="write the result record here (atomically); one submission")
            p.add_argument("--out-dir", help="several submissions: write each result record into this folder, "
                           "as <benchmark>-<file name>")
            p.add_argument("--verbose", action="store_true",
                           help="several submissions: print each one's full table, not only the summary")
            p.add_argument("--bootstrap", type=BOOTSTRAP, default=1000,
                           help=f"bootstrap resamples for 95%% CIs (0: none; at most {MAX_RESAMPLES:,})")
            p.add_argument("--seed", type=SEED, default=0, help="bootstrap seed (a whole number >= 0)")

    p = sub.add_parser("compare", help="paired bootstrap test between two results on the same benchmark")
    p.add_argument("result_a")
    p.add_argument("result_b")
    p.add_argument("--bootstrap", type=COMPARE_BOOTSTRAP, default=1000, help="paired resamples (1 to 100,000)")
    p.add_argument("--seed", type=SEED, default=0)
    p.add_argument("--json", action="store_true")

    lb = sub.add_parser("leaderboard", help="build the leaderboard tables from the submissions folder")
    lsub = lb.add_subparsers(dest="leaderboard_command", metavar="LEADERBOARD_COMMAND", parser_class=_Parser)
    p = lsub.add_parser("build", help="score every submission and write Markdown, HTML, CSV and JSON tables")
    p.add_argument("--submissions", default="submissions", help="folder of <benchmark>/<entry>.json files")
    p.add_argument("--out", default="leaderboard", help="output folder")
    p.add_argument("--data-dir", help="prepared data folder")
    p.add_argument("--bootstrap", type=BOOTSTRAP, default=1000)
    p.add_argument("--seed", type=SEED, default=0)
    p.add_argument("--rebuild", action="store_true", help="ignore the score cache (<out>/cache): rescore everything")
    p.add_argument("--quiet", action="store_true", help="no progress bar, one summary line")
    p.add_argument("--allow-drop", action="store_true",
                   help="publish even though boards or entries of the current --out folder would be dropped")
    p = lsub.add_parser(
        "push", help="make a Hugging Face hub repo hold a built leaderboard folder (token: $HF_TOKEN or `hf auth login`)",
        description="Creates the repo when missing (a Space is a static one), uploads the built folder without its "
                    "score cache and build marker, writes the README's front matter (Space: sdk static and title; "
                    "dataset: the viewer shows leaderboard.csv), and deletes the files an earlier push uploaded "
                    "that the build no longer has; files vlbench does not write are left in the repo.")
    p.add_argument("--repo-id", required=True, help="hub repository, e.g. org/vlbench-leaderboard")
    p.add_argument("--repo-type", choices=["dataset", "space"], default="dataset")
    p.add_argument("--folder", default="leaderboard", help="the built folder to upload")
    p.add_argument("--title", default="vlbench leaderboard", help="the repo's title (README front matter)")
    p.add_argument("--dry-run", action="store_true", help="list what would be uploaded; upload nothing")

    # Importers and data builders belong to task packages, which add their commands to these
    # groups through registry.cli_plugins (e.g. `import grounding`, `data mini`).
    imp = sub.add_parser("import", help="convert another tool's prediction format into a vlbench submission")
    isub = imp.add_subparsers(dest="import_command", metavar="TASK", parser_class=_Parser)

    data = sub.add_parser("data", help="write the mini benchmark, or prepare a real benchmark's ground truth")
    dsub = data.add_subparsers(dest="data_command", metavar="DATA_COMMAND", parser_class=_Parser)
    p = dsub.add_parser(
        "prepare", help="build a benchmark's ground truth from official files or a hub id",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="sources (the hub datasets named here are known to work; see the README for the ones refused):\n"
               + "\n".join(f"  {b.id}: {b.source_hint}" for b in registry().benchmarks.values() if b.source_hint))
    p.add_argument("benchmark")
    p.add_argument("--source", required=True, help="local path, or a Hugging Face hub dataset id")
    p.add_argument("--data-dir", help="where to write (default: $VLBENCH_DATA or ~/.cache/vlbench)")
    p.add_argument("--force", action="store_true",
                   help="prepare from a source that differs from the benchmark's (recorded in the ground truth)")
    for plugin in cli_plugins():
        plugin.add_cli(sub, {"leaderboard": lsub, "data": dsub, "import": isub})
    return parser


def _metric_for(benchmark: Benchmark, key: str) -> Metric:
    try:
        return benchmark.metric(key)
    except KeyError:
        return Metric(key, "")


def _print_issues(exc: InvalidSubmission, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"source": exc.source, **exc.issues.to_dict()}, indent=2))
        return
    print(f"INVALID: {exc}", file=sys.stderr)
    print(exc.issues.report(), file=sys.stderr)


def describe_counts(n: dict[str, Any]) -> str:
    """`{'images': 250, 'folds': 1}` -> `250 images, 1 fold` (for people, not a dict repr)."""
    parts = []
    for key, value in n.items():
        noun = key.replace("_", " ")
        if value == 1 and noun.endswith("s") and not noun.endswith("ss"):
            noun = noun[:-1]
        parts.append(f"{value:,} {noun}" if isinstance(value, int) else f"{value} {noun}")
    return ", ".join(parts)


def _override(args: argparse.Namespace) -> Benchmark | None:
    if not getattr(args, "references", None):
        if getattr(args, "subset", False):
            raise UsageError("--subset needs --references FILE: a benchmark is scored on all its images "
                             "(for part of one, give its references file with --references)")
        return None
    task = registry().references_task()
    if task is None:
        raise UsageError("--references needs the captioning task, which is not installed")
    return task.references_benchmark(Path(args.references), subset=getattr(args, "subset", False))


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


def _score_table(result: ResultRecord, benchmark: Benchmark) -> str:
    rows = []
    for key, value in result.scores.items():
        metric = _metric_for(benchmark, key)
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
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(headers), "  ".join("-" * w for w in widths), *map(line, rows)])


def _check_out(out: str | None, submission: str) -> None:
    """Refuse a bad --out before any work (a refused run must write nothing)."""
    if not out:
        return
    from vlbench.atomic_files import check_output_path
    from vlbench.results import per_item_path

    path = check_output_path(out, "result record")
    given = Path(submission)
    for target in (path, per_item_path(path)):
        if target.exists() and given.exists() and target.resolve() == given.resolve():
            raise UsageError(f"--out {out} would overwrite the submission {submission}; name another file")


def cmd_score(args: argparse.Namespace) -> int:
    if len(args.submission) > 1 or args.out_dir:
        return _score_many(args)
    if args.verbose:
        raise UsageError("--verbose is for several submissions (one submission always prints its full table)")
    from vlbench.scoring import score_file, write_evaluation

    submission = args.submission[0]
    _check_out(args.out, submission)
    evaluation = score_file(submission, _submission_options(args), bootstrap=args.bootstrap, seed=args.seed)
    result = evaluation.result
    if args.out:
        write_evaluation(evaluation, args.out)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return EXIT_OK
    _print_result(evaluation)
    _print_notes([result])
    if args.out:
        print(f"result written to {args.out}")
    return EXIT_OK


def _print_result(evaluation: Any) -> None:
    result, b = evaluation.result, evaluation.submission.benchmark
    print(f"{b.id} v{b.version} ({b.task}) - {result.meta.get('method', '')}")
    print(_score_table(result, b))
    print(f"\n* main score. {describe_counts(result.n)}. submission sha256 {result.submission_sha256[:12]}, "
          f"ground truth sha256 {result.ground_truth_sha256[:12]}, {result.elapsed_s:.2f} s")


def _print_notes(results: list[ResultRecord], prefixes: list[str] | None = None) -> None:
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


def _score_many(args: argparse.Namespace) -> int:
    """Several submissions: one summary table (each file's table with --verbose); the result
    records go to --out-dir, all written after every file was scored."""
    from vlbench.scoring import score_file, write_evaluation

    if args.out:
        raise UsageError("--out names one result file; with several submissions, give a folder with --out-dir")
    targets: list[Path] = []
    if args.out_dir:
        folder = Path(args.out_dir)
        if folder.exists() and not folder.is_dir():
            raise UsageError(f"--out-dir {args.out_dir} is a file; name a folder")
        for name in args.submission:
            given = Path(name)
            stem = given.name.removesuffix(".gz").removesuffix(".json")
            target = folder / f"{given.parent.name}-{stem}.json" if given.parent.name else folder / f"{stem}.json"
            if target in targets:
                raise UsageError(f"two submissions would write {target}; score them in separate runs")
            targets.append(target)
            _check_out(str(target), name)
    done, invalid, scored_targets = [], 0, []
    for i, name in enumerate(args.submission):
        try:
            evaluation = score_file(name, _submission_options(args), bootstrap=args.bootstrap, seed=args.seed)
        except InvalidSubmission as exc:
            _print_issues(exc, False)
            invalid += 1
            continue
        done.append((name, evaluation))
        scored_targets += targets[i:i + 1]
        if args.verbose and not args.json:
            print(f"\n== {name}")
            _print_result(evaluation)
    for (_, evaluation), target in zip(done, scored_targets, strict=False):
        write_evaluation(evaluation, target)
    if args.json:
        print(json.dumps([e.result.to_dict() for _, e in done], indent=2))
        return EXIT_INVALID if invalid else EXIT_OK
    rows = []
    for name, evaluation in done:
        r, b = evaluation.result, evaluation.submission.benchmark
        metric = _metric_for(b, r.main_score)
        ci = r.ci95.get(r.main_score)
        unit = "%" if metric.display == "percent" else ""
        method = str(r.meta.get("method", ""))
        rows.append([name, b.id, method if len(method) <= 36 else method[:35] + "…", r.main_score,
                     metric.format(r.scores.get(r.main_score)) + unit,
                     f"[{metric.format(ci[0])}, {metric.format(ci[1])}]" if ci else ""])
    print()
    print(simple_table(rows, ["submission", "benchmark", "method", "main score", "value", "95% CI"]))
    _print_notes([e.result for _, e in done], [n for n, _ in done])
    written = f"; result records in {args.out_dir}" if args.out_dir else ""
    print(f"\n{len(done)} scored, {invalid} invalid{written}" + ("" if args.verbose else "; every metric: --verbose"))
    return EXIT_INVALID if invalid else EXIT_OK


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
        metric = _metric_for(benchmark, r.metric)
        table.append([r.metric, metric.format(r.a), metric.format(r.b), metric.format(r.difference),
                      f"[{metric.format(r.ci95[0])}, {metric.format(r.ci95[1])}]", f"{r.p_value:.4f}"])
    print(f"A = {a.meta.get('method', args.result_a)}, B = {b.meta.get('method', args.result_b)}")
    from tabulate import tabulate

    print(tabulate(table, headers=["metric", "A", "B", "A-B", "95% CI of A-B", "p"], disable_numparse=True))
    return EXIT_OK


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from vlbench import leaderboard

    if args.leaderboard_command == "push":
        pushed = leaderboard.push(args.folder, args.repo_id, args.repo_type, dry_run=args.dry_run, title=args.title)
        verb = "would upload" if args.dry_run else "uploaded"
        for name, size in pushed.uploaded:
            print(f"{name}\t{size}")
        for name in pushed.deleted:
            print(f"deleted {name} (an earlier push's file this build no longer has)")
        if pushed.kept:
            print(f"left {len(pushed.kept)} files in the repo that vlbench did not write: {', '.join(pushed.kept)}")
        made = f" (created the {args.repo_type})" if pushed.created else ""
        print(f"{verb} {len(pushed.uploaded)} files from {args.folder} to {args.repo_type} {args.repo_id}{made}")
        return EXIT_OK
    if args.leaderboard_command != "build":
        raise UsageError("vlbench leaderboard: choose 'build' or 'push'")
    report, written = leaderboard.build_and_publish(
        args.submissions, args.out, args.data_dir, resamples=args.bootstrap, seed=args.seed,
        rebuild=args.rebuild, quiet=args.quiet, allow_drop=args.allow_drop,
    )
    entries = sum(len(b.entries) for b in report.boards)
    reused = report.cache.hits
    print(f"{entries} entries on {len(report.boards)} boards, {len(report.invalid)} invalid, "
          f"{len(report.skipped)} skipped; scored {len(report.scored)}, reused {reused} from the cache; "
          f"wrote {len(written)} files to {args.out}")
    if not args.quiet:
        for inv in report.invalid:
            print(f"invalid: {inv.path}: {inv.summary()}", file=sys.stderr)
        for path, why in report.skipped:
            print(f"skipped: {path}: {why}", file=sys.stderr)
        for note in report.notes:
            print(f"note: {note}", file=sys.stderr)
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    raise UsageError("vlbench import: name the task whose importer to use (vlbench import --help)")


@contextlib.contextmanager
def _source_deviations_shown() -> Iterator[None]:
    """Print each `--force` deviation a `prepare` reports, as it is reported."""
    with warnings.catch_warnings():
        warnings.simplefilter("always", SourceDeviation)
        others = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], *rest: Any, **kwargs: Any) -> None:
            if issubclass(category, SourceDeviation):
                print(f"warning: {message}", file=sys.stderr)
            else:
                others(message, category, *rest, **kwargs)

        warnings.showwarning = show
        yield


def cmd_data(args: argparse.Namespace) -> int:
    if args.data_command == "prepare":
        reg = registry()
        benchmark = reg.benchmark(args.benchmark)
        data_dir = Path(args.data_dir) if args.data_dir else default_data_dir()
        with stage(f"preparing {benchmark.id} from {args.source}"), _source_deviations_shown():
            written = reg.task_of(benchmark).prepare(benchmark, args.source, data_dir, force=args.force)
        for path in written:
            print(f"wrote {path}")
        return EXIT_OK
    raise UsageError("vlbench data: name what to do (vlbench data --help)")


COMMANDS = {
    "tasks": cmd_tasks,
    "validate": cmd_validate,
    "score": cmd_score,
    "compare": cmd_compare,
    "leaderboard": cmd_leaderboard,
    "import": cmd_import,
    "data": cmd_data,
}


def _take_debug(argv: list[str]) -> tuple[list[str], bool]:
    """Remove `--debug` wherever it is (argparse takes top-level options only before the command)."""
    if "--" in argv:
        cut = argv.index("--")
        head, debug = _take_debug(argv[:cut])
        return [*head, *argv[cut:]], debug
    return [a for a in argv if a != "--debug"], "--debug" in argv


def _silence_stdout() -> None:
    """After the reader of our output went away (`vlbench ... | head`): drop the rest quietly,
    including what the interpreter would flush at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # stdout is not a file descriptor (e.g. captured by a test)


def main(argv: Sequence[str] | None = None) -> int:
    typed = list(sys.argv[1:] if argv is None else argv)
    try:
        with quiet_bars():  # progress on a terminal only, also for plugins' own tqdm bars
            code = _main(typed)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        code = EXIT_OK
    return code


def _main(typed: list[str]) -> int:
    if typed == ["--version"]:  # what argparse prints, without discovering every plugin first
        print(f"vlbench {__version__}")
        return EXIT_OK
    parser = build_parser()
    argv, debug = _take_debug(typed)
    args = parser.parse_args(argv)
    args.debug = args.debug or debug
    # the command as typed, for handlers that record it (baseline submissions' meta)
    args.argv = typed
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    code = EXIT_USAGE
    try:
        # Commands added by plugins (registry.cli_plugins) carry their handler in `func`.
        handler = getattr(args, "func", None) or COMMANDS[args.command]
        return handler(args)
    except InvalidSubmission as exc:
        try:
            _print_issues(exc, getattr(args, "json", False))
        except BrokenPipeError:
            _silence_stdout()
        return EXIT_INVALID
    except BrokenPipeError:
        raise
    except VlbenchError as exc:
        failure, message, code = exc, str(exc), exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except MemoryError as exc:
        failure = exc
        message = ("not enough memory for this run; free memory, or use smaller values of "
                   "--bootstrap or --max-bytes")
    except RecursionError as exc:
        failure = exc
        message = "the input is nested too deeply to process; check how the file was produced"
    except OSError as exc:  # the environment: permissions, a full disk, a vanished file
        failure = exc
        where = f" {exc.filename}" if exc.filename else ""
        message = f"cannot access{where}: {exc.strerror or exc}"
    except Exception as exc:  # a bug; keep the traceback behind --debug
        failure = exc
        message = (f"internal error ({type(exc).__name__}: {clip(str(exc), 300)}); this is a bug in "
                   "vlbench: please report it with the output of --debug")
    if args.debug:
        traceback.print_exception(type(failure), failure, failure.__traceback__)
    print(f"error: {message}", file=sys.stderr)
    return code


