"""`vlbench leaderboard intake --repo-id ORG/NAME [--merge] [--dry-run] [--publish]`: the maintainers'
pass over the board's open pull requests (`vlbench.hub.intake`). The parser is added by
`vlbench.cli`; heavy imports wait for the run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vlbench.commands import EXIT_OK, EXIT_USAGE


def add_parser(lsub: argparse._SubParsersAction) -> None:
    from vlbench.cli import BOOTSTRAP, SEED, _add_limits

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
    p.set_defaults(func=cmd_intake)


def cmd_intake(args: argparse.Namespace) -> int:
    from vlbench.hub import check_repo_id, connect, plain
    from vlbench.hub.board import Scoring
    from vlbench.hub.intake import publish, run_intake
    from vlbench.leaderboard.publish import CACHE_FOLDER
    from vlbench.submission import ValidationOptions

    check_repo_id(args.repo_id, args.repo_type)
    if args.publish and not args.dry_run:
        from vlbench.ground_truth import default_data_dir
        from vlbench.leaderboard.ownership import check_out

        # refuse an --out the build may not replace before anything is merged
        check_out(args.out, [("the data folder", args.data_dir if args.data_dir is not None else default_data_dir())])
    hub = connect(args.repo_id, args.repo_type)
    cache = Path(args.out) / CACHE_FOLDER  # the scores of the last build, when there is one
    scoring = Scoring(ValidationOptions(data_dir=args.data_dir, max_bytes=args.max_bytes,
                                        max_decompressed=args.max_decompressed, max_errors=args.max_errors),
                      resamples=args.bootstrap, seed=args.seed, cache_dir=cache if cache.is_dir() else None)
    report = run_intake(hub, scoring, merge=args.merge, dry_run=args.dry_run, debug=getattr(args, "debug", False))
    n = len(report.outcomes)
    verb = "would be " if args.dry_run else ""
    print(f"{n} open pull request{'s' if n != 1 else ''} in {args.repo_type} {args.repo_id} (as {plain(hub.user, 60)}): "
          f"{report.count('commented') or report.count('would comment')} {verb}commented, "
          f"{report.count('merged') or report.count('would merge')} {verb}merged, "
          f"{report.count('closed') or report.count('would close')} {verb}closed")
    if args.publish:
        if args.dry_run:
            print(f"would build the board from main's submissions/ into {args.out} and push it")
        else:
            done = publish(hub, args.out, scoring, args.title)
            for name in done.left_out:
                print(f"left out of the build (over --max-bytes): {plain(name, 200)}", file=sys.stderr)
            print(f"published: {done.entries} entries on {done.boards} boards ({done.invalid} invalid) built into "
                  f"{args.out}; uploaded {done.uploaded} files to {args.repo_type} {args.repo_id}")
    if report.failures:
        for failure in report.failures:
            print(f"error: {failure}", file=sys.stderr)
        print(f"error: {len(report.failures)} pull request{'s' if len(report.failures) != 1 else ''} could not be "
              "handled; the next run retries them", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK
