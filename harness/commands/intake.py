"""`vlbench leaderboard intake --repo-id ORG/NAME [--merge] [--dry-run] [--publish]`: the maintainers'
pass over the board's open pull requests (`vlbench.hub.intake`). The parser is
`vlbench.cli`'s; heavy imports wait for the run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vlbench.commands import EXIT_OK, EXIT_USAGE


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
