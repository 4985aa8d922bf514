"""`vlbench submit FILE --repo-id ORG/NAME`: a participant's pull request to the board's hub repo
(`vlbench.hub.submit`). The parser is `vlbench.cli`'s; heavy imports wait for the run."""

from __future__ import annotations

import argparse

from vlbench.commands import EXIT_OK


def cmd_submit(args: argparse.Namespace) -> int:
    from vlbench.hub import check_repo_id
    from vlbench.hub.submit import submit
    from vlbench.submission import ValidationOptions

    check_repo_id(args.repo_id, args.repo_type)  # before reading anything
    options = ValidationOptions(data_dir=args.data_dir, max_bytes=args.max_bytes,
                                max_decompressed=args.max_decompressed, max_errors=args.max_errors)
    done = submit(args.submission, args.repo_id, args.repo_type, name=args.name, options=options)
    print(f"VALID: {args.submission} is a valid {done.benchmark} submission (benchmark v{done.version})")
    if done.pr_url is None:
        print(f"{done.path_in_repo} already holds these exact bytes in {args.repo_type} {args.repo_id}: "
              "no pull request opened")
        return EXIT_OK
    if done.replaces:
        print(f"note: {done.path_in_repo} is on the board already; intake merges the change only if that entry is "
              "your own (submitted from this hub account, same meta.team)")
    print(f"opened pull request {done.pr_url}")
    print("the board's intake comments there with the score and the rank it would take, or every problem found")
    return EXIT_OK
