"""`vlbench` command line: the parser and the dispatch to `vlbench.commands` (one module per
command group, imported when its command runs). Exit codes: 0 ok, 1 invalid submission, 2 usage
or I/O error."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from vlbench import __version__
from vlbench.commands import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from vlbench.commands.output import print_issues, simple_table
from vlbench.errors import InvalidSubmission, VlbenchError, clip
from vlbench.jsonio import DEFAULT_MAX_BYTES, DEFAULT_MAX_DECOMPRESSED
from vlbench.limits import DEFAULT_MAX_ERRORS, MAX_ERRORS, MAX_FILE_BYTES, MAX_RESAMPLES, MAX_SEED
from vlbench.progress import quiet_bars
from vlbench.registry import cli_plugins, registry

# `simple_table` is the command line's table format, also for plugins
__all__ = ["EXIT_INVALID", "EXIT_OK", "EXIT_USAGE", "build_parser", "main", "simple_table"]


class _Parser(argparse.ArgumentParser):
    """Exact option names only (`--boot 10` is an error, not `--bootstrap 10`), in every
    subcommand too: the subparsers and the plugins' parsers are made with this class."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # argparse exits 2 too; keep its usage text
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """Arguments a (sub)command does not know are refused by that command, with its own usage
        (`vlbench score x --boot 10` shows score's, not the top level's)."""
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


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
    p.add_argument("--max-errors", type=count(1, MAX_ERRORS), default=DEFAULT_MAX_ERRORS,
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
            p.add_argument("--force", action="store_true",
                           help="replace an --out file (or one in --out-dir) that is not a result record "
                           "vlbench wrote (without it, such a file is refused)")
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

    p = sub.add_parser(
        "submit", help="validate a submission, then open a pull request adding it to the board's hub repo",
        description="Validates FILE as `vlbench validate` does (exit 1 with every problem when invalid), then opens a "
                    "pull request on the Hugging Face hub repo that adds it as submissions/<benchmark>/<name> and "
                    "prints its URL. Token: $HF_TOKEN or the one `hf auth login` saved.")
    p.add_argument("submission", help="submission file (.json or .json.gz) in vlbench's envelope")
    p.add_argument("--repo-id", help="the board's hub repo, e.g. org/vlbench-leaderboard")
    p.add_argument("--repo-type", choices=["dataset", "space", "model"], default="dataset")
    p.add_argument("--name", help="file name in the repo (default: FILE's own name)")
    p.add_argument("--data-dir", help="prepared data folder (for the local validation)")
    _add_limits(p)

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

    p = lsub.add_parser(
        "intake", help="check the hub repo's open pull requests: one comment per commit; merge the valid ones",
        description="Reads every open pull request of the board's hub repo, checks and scores each file it adds "
                    "(relative to where it started) and posts one comment per head commit: the score, its interval "
                    "and the rank it would take, or every problem. With --merge, merges the pull requests whose "
                    "every file is a valid new entry or the author's own entry, and closes those that change files "
                    "outside submissions/. Exit 0 whatever the pull requests hold; 2 without a token or repo, or "
                    "when some could not be handled (listed; the next run retries them).")
    p.add_argument("--repo-id", help="the board's hub repo, e.g. org/vlbench-leaderboard")
    p.add_argument("--repo-type", choices=["dataset", "space", "model"], default="dataset")
    p.add_argument("--merge", action="store_true", help="merge the mergeable pull requests; close the never-mergeable")
    p.add_argument("--dry-run", action="store_true", help="print what would be done; write nothing to the hub")
    p.add_argument("--publish", action="store_true",
                   help="then build the board from main's submissions/ into --out and push it to the repo")
    p.add_argument("--out", default="leaderboard",
                   help="the built leaderboard folder: its score cache spares rescoring main's entries; --publish "
                        "builds into it")
    p.add_argument("--title", default="vlbench leaderboard", help="--publish: the repo's title (README front matter)")
    p.add_argument("--data-dir", help="prepared data folder")
    p.add_argument("--bootstrap", type=BOOTSTRAP, default=1000)
    p.add_argument("--seed", type=SEED, default=0)
    _add_limits(p)

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


# command -> "module:function" in vlbench.commands, imported when the command runs
COMMANDS = {
    "tasks": "tasks:cmd_tasks",
    "validate": "submissions:cmd_validate",
    "score": "submissions:cmd_score",
    "compare": "compare:cmd_compare",
    "submit": "submit:cmd_submit",
    "leaderboard": "leaderboard:cmd_leaderboard",
    "import": "data:cmd_import",
    "data": "data:cmd_data",
}


def _handler(command: str) -> Any:
    module, _, function = COMMANDS[command].partition(":")
    return getattr(importlib.import_module(f"vlbench.commands.{module}"), function)


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
        handler = getattr(args, "func", None) or _handler(args.command)
        return handler(args)
    except InvalidSubmission as exc:
        try:
            print_issues(exc, getattr(args, "json", False))
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
