"""`vlbench submit FILE --repo-id ORG/NAME`: validate locally, then open a pull request that adds the
file under `submissions/<benchmark>/` of the board's hub repo.

The bytes validated are the bytes uploaded: the file is read once, within the usual caps, and a
copy of those bytes is what `validate` reads (a file that changes meanwhile cannot slip through).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from vlbench import __version__
from vlbench.errors import InvalidSubmission, IssueList, UsageError
from vlbench.hub import Hub, connect, first_line, plain
from vlbench.hub.layout import entry_path, name_problem
from vlbench.jsonio import read_bytes_capped, read_regular_capped
from vlbench.submission import ValidatedSubmission, ValidationOptions, validate


@dataclass
class Submitted:
    path_in_repo: str
    benchmark: str
    version: str
    pr_url: str | None  # None: the repo already holds these exact bytes there
    replaces: bool  # a file of that name is on the board already


def validate_bytes(file: str, options: ValidationOptions) -> tuple[bytes, ValidatedSubmission]:
    """Read `file` once within the caps and validate exactly those bytes."""
    raw, size = read_regular_capped(file, options.max_bytes)
    if raw is None:  # the usual report for a file over the cap
        issues = IssueList(limit=options.max_errors)
        read_bytes_capped(file, issues, options.max_bytes, options.max_decompressed)
        raise InvalidSubmission(issues, file)
    suffix = ".json.gz" if file.endswith(".gz") else ".json"
    with tempfile.TemporaryDirectory(prefix="vlbench-submit-") as tmp:
        copy = Path(tmp) / f"submission{suffix}"
        copy.write_bytes(raw)
        try:
            sub = validate(copy, options)
        except InvalidSubmission as exc:
            exc.source = file
            raise
    return raw, sub


def submit(file: str, repo_id: str | None, repo_type: str = "dataset", *, name: str | None = None,
           options: ValidationOptions | None = None, token: str | None = None) -> Submitted:
    """Validate `file` (InvalidSubmission with every problem, as `vlbench validate`), then open a
    pull request adding it as `submissions/<benchmark>/<name>` (default: the file's own name)."""
    options = options or ValidationOptions()
    name = name if name is not None else os.path.basename(file)
    problem = name_problem(name)
    if problem is not None:
        raise UsageError(f"{plain(name)!r} cannot name a submission in the repo: {problem}; choose one with --name")
    raw, sub = validate_bytes(file, options)
    hub = connect(repo_id, repo_type, token)
    path = entry_path(sub.benchmark.id, name)
    remote = hub.call(f"reading {path} on the hub", hub.api.get_paths_info, hub.repo_id, [path], revision="main")
    from huggingface_hub import CommitOperationAdd

    method = plain(sub.meta.get("method", "") or name, 80)
    description = (f"Submitted with `vlbench submit` (vlbench {__version__}): a {sub.benchmark.id} "
                   f"v{sub.benchmark.version} submission, sha256 {sub.submission_sha256}, valid when checked "
                   "locally. The board's intake (`vlbench leaderboard intake`) checks it again, comments with "
                   "its score and the rank it would take, and merges it.")
    info = _open_pull(hub, CommitOperationAdd(path_in_repo=path, path_or_fileobj=raw),
                      f"Submission: {method} on {sub.benchmark.id}", description)
    return Submitted(path, sub.benchmark.id, sub.benchmark.version, info.pr_url, bool(remote))


def _open_pull(hub: Hub, operation: object, title: str, description: str) -> object:
    try:
        return hub.api.create_commit(hub.repo_id, [operation], commit_message=title, commit_description=description,
                                     repo_type=hub.repo_type, create_pr=True)
    except Exception as exc:
        raise UsageError(f"could not open a pull request on {hub.repo_type} {hub.repo_id}: {first_line(exc)}") from None
