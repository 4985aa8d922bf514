"""`vlbench leaderboard build|push`: the fronts of `vlbench.leaderboard`."""

from __future__ import annotations

import argparse
import sys

from vlbench.commands import EXIT_OK
from vlbench.errors import UsageError


def cmd_leaderboard(args: argparse.Namespace) -> int:
    if args.leaderboard_command == "intake":
        from vlbench.commands.intake import cmd_intake

        return cmd_intake(args)
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
        # this machine's reasons: the build's output, never the published files
        for note in report.local_notes():
            print(f"note: {note}", file=sys.stderr)
    return EXIT_OK
