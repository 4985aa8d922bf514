"""`vlbench baseline list|run`: registered into the engine's CLI through `add_cli`."""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

from vlbench.errors import UsageError


def add_cli(commands: Any, groups: dict[str, Any]) -> None:
    from .experiment import EXPERIMENTS

    p = commands.add_parser("baseline", help="list or run the baseline recipes that regenerate reference submissions")
    sub = p.add_subparsers(dest="baseline_command", metavar="BASELINE_COMMAND", parser_class=type(p))
    p.set_defaults(func=lambda args: _usage(p))
    lp = sub.add_parser("list", help="the recipes, their benchmarks and their default settings")
    lp.add_argument("--json", action="store_true")
    lp.set_defaults(func=cmd_list)
    rp = sub.add_parser("run", help="run a recipe on a benchmark and write its submission")
    rp.add_argument("recipe")
    rp.add_argument("--benchmark", required=True)
    rp.add_argument("--out", required=True, help="submission file to write (atomically)")
    rp.add_argument("--config", help="JSON or TOML file of settings")
    rp.add_argument("--set", dest="sets", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                    help="override one setting (repeatable); see `vlbench baseline list`")
    rp.add_argument("--device", help="cpu, cuda or cuda:N (default: cuda when available)")
    rp.add_argument("--data-dir", help="prepared data folder (default: $VLBENCH_DATA or ~/.cache/vlbench)")
    rp.add_argument("--checkpoint-dir", help="where checkpoints and the training log go; rerunning resumes from here")
    rp.add_argument("--nproc", type=int, default=1, help="processes on this machine (launches torchrun)")
    rp.add_argument("--quiet", action="store_true", help="no progress bars")
    rp.add_argument("--force", action="store_true",
                    help="replace output files vlbench did not write (--out, --coco-results; refused without it)")
    rp.add_argument("--coco-results", metavar="FILE",
                    help="captioning recipes: also write the captions as a COCO results file (pycocoevalcap's loadRes "
                         "format); the same as --set extra.coco_results=FILE")
    rp.set_defaults(func=cmd_run)
    ep = sub.add_parser("experiment", help="run a whole baseline experiment: every arm and seed, scored, with a report")
    ep.add_argument("name", help="mini-odmap: the ODmAP paper's bias and mitigation on vlbench-mini (CPU)")
    ep.add_argument("--quick", action="store_true", help="the same pipeline at toy size (tests; numbers mean nothing)")
    ep.add_argument("--out", help="results folder (default baselines/results/NAME; with --quick, inside the work dir)")
    ep.add_argument("--submissions", help="where the submissions go, one folder per benchmark (default submissions/)")
    ep.add_argument("--work-dir", help="checkpoints and logs (default DATA_DIR/runs/NAME); rerunning reuses finished runs")
    ep.add_argument("--data-dir", help="data folder (default: $VLBENCH_DATA or ~/.cache/vlbench)")
    ep.add_argument("--seeds", help="comma-separated seeds (default: the experiment's, " + "; ".join(
        f"{e.name}: {','.join(map(str, e.seeds))}" for e in EXPERIMENTS.values()) + ")")
    ep.add_argument("--arms", help="comma-separated arms to run, a subset in the experiment's order (default: all; "
                    + "; ".join(f"{e.name}: {','.join(a.name for a in e.arms)}" for e in EXPERIMENTS.values())
                    + "); a fine-tune arm without its starting arm needs that arm's checkpoints in the work dir")
    ep.add_argument("--workers", type=int, help="parallel one-thread training processes (default: the CPU count, at most 4)")
    ep.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for intervals and paired tests")
    ep.add_argument("--report-only", action="store_true", help="score the submissions already written and rewrite the report")
    ep.add_argument("--force", action="store_true",
                    help="write over files and folders vlbench did not write (--out, submissions; refused without it)")
    ep.add_argument("--quiet", action="store_true")
    ep.set_defaults(func=cmd_experiment)


# what the baselines extra installs, by import name
EXTRA_MODULES = ("torch", "torchvision", "open_clip", "diffusers", "transformers", "timm", "safetensors")
INSTALL = "pip install 'vlbench[baselines]' (in a clone: .venv/bin/pip install -e '.[baselines]')"


@contextlib.contextmanager
def _needs_baselines_extra(command: str) -> Iterator[None]:
    """A recipe's library missing (the core install): the install command, not an internal error."""
    try:
        yield
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if top not in EXTRA_MODULES:
            raise
        raise UsageError(f"{command} needs {top}, which is not installed (it comes with the baselines extra): "
                         f"{INSTALL}") from None


def _usage(p: argparse.ArgumentParser) -> int:
    p.print_help(sys.stderr)
    return 2


def cmd_list(args: argparse.Namespace) -> int:
    import json

    from tabulate import tabulate

    from vlbench.registry import registry

    from .recipe import all_recipes

    benchmarks = registry().benchmarks.values()
    rows = []
    for r in all_recipes():
        ids = sorted(b.id for b in benchmarks if b.task in r.predictors)
        rows.append({"recipe": r.name, "trains": r.train, "benchmarks": ids, "defaults": dict(r.defaults),
                     "description": r.description, "sources": dict(r.sources)})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    # one line per row fits LIST_WIDTH columns: the benchmarks and the description wrap
    widths = (max(len(r["recipe"]) for r in rows), len("trains"))
    room = LIST_WIDTH - sum(widths) - 6 - 3 * 2  # tabulate's two spaces between columns, margins
    longest = max((len(b) + 1 for r in rows for b in r["benchmarks"]), default=12)
    bench_w = max(longest, room * 2 // 5)
    what_w = max(16, room - bench_w)

    def fill(text: str, width: int) -> str:  # ids stay whole (no breaks at their hyphens)
        return textwrap.fill(text, width, break_on_hyphens=False, break_long_words=False)

    table = [[r["recipe"], "yes" if r["trains"] else "no", fill(", ".join(r["benchmarks"]), bench_w),
              fill(r["description"], what_w)] for r in rows]
    print(tabulate(table, headers=["recipe", "trains", "benchmarks", "what it does"], tablefmt="simple"))
    print("\nsettings: --set key=value; the defaults: vlbench baseline list --json, and baselines/README.md")
    return 0


LIST_WIDTH = 100


def cmd_experiment(args: argparse.Namespace) -> int:
    seeds = None
    if args.seeds is not None:
        try:
            seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
        except ValueError:
            raise UsageError(f"--seeds {args.seeds!r}: expected comma-separated integers such as 0,1,2") from None
    arms = None
    if args.arms is not None:
        arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if args.workers is not None and not 1 <= args.workers <= 64:
        raise UsageError("--workers must be between 1 and 64")
    if not 0 <= args.bootstrap <= 100_000:
        raise UsageError("--bootstrap must be between 0 and 100000")
    with _needs_baselines_extra("vlbench baseline experiment"):
        out = _experiment(args, seeds, arms)
    toy = " (a --quick toy run: the numbers test the pipeline and mean nothing)" if args.quick else ""
    print(f"wrote {out / 'README.md'}, {out / 'results.json'} and {out / 'plot.png'}{toy}")
    return 0


def _experiment(args: argparse.Namespace, seeds: list[int] | None, arms: list[str] | None = None) -> Any:
    from .experiment_runner import run_experiment

    return run_experiment(args.name, quick=args.quick, out=args.out, submissions=args.submissions, work_dir=args.work_dir,
                         data_dir=args.data_dir, seeds=seeds, arms=arms, workers=args.workers, bootstrap=args.bootstrap,
                         progress=not args.quiet, argv=list(getattr(args, "argv", sys.argv[1:])),
                         report_only=args.report_only, force=args.force)


def _torchrun_argv(argv: list[str]) -> list[str]:
    """This command again, without --nproc, under torchrun."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--nproc":
            skip = True
            continue
        if a.startswith("--nproc="):
            continue
        out.append(a)
    return out


def cmd_run(args: argparse.Namespace) -> int:
    if args.nproc < 1:
        raise UsageError("--nproc must be at least 1")
    argv = list(getattr(args, "argv", sys.argv[1:]))
    if args.nproc > 1 and "WORLD_SIZE" not in os.environ:
        # all processes are on this machine: the rendezvous and MASTER_ADDR on the loopback address,
        # not on the hostname's address (torchrun's default), which may not lead back to this machine
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--local-addr=127.0.0.1",
               f"--nproc-per-node={args.nproc}", "-m", "vlbench", *_torchrun_argv(argv)]
        return subprocess.call(cmd)
    with _needs_baselines_extra("vlbench baseline run"):
        return _run(args, argv)


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    from .run import run_recipe

    if args.coco_results:
        from .recipe import get

        if "captioning" not in get(args.recipe).predictors:
            raise UsageError(f"--coco-results is for captioning recipes; {args.recipe} makes no captions")
        args.sets = [*args.sets, f"extra.coco_results={args.coco_results}"]
    result = run_recipe(args.recipe, args.benchmark, args.out, config_file=args.config, sets=args.sets,
                        device=args.device, data_dir=args.data_dir, checkpoint_dir=args.checkpoint_dir,
                        argv=argv, progress=not args.quiet, force=args.force)
    if result.out is not None:
        info = result.train or {}
        trained = f" after {info['steps']} training steps" if info else ""
        print(f"wrote {result.out}{trained}; score it with: vlbench score {result.out}")
    return 0
