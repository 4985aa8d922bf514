"""`vlbench leaderboard intake`: one pass over the board's open pull requests.

For each open pull request, oldest first: read where it started and its head revision; if intake
already commented on that head (its own marker, read back from the hub), leave it, unless merging
is on and the verdict there was to merge or close (a run stopped in between, or a draft since
published); otherwise check it against main (`review.py`) and post exactly one comment for the
head; then, with `merge`, merge it (`merge_pull_request`, after checking that no commit arrived
meanwhile) or close it (`change_discussion_status`).

Every step is one request that the hub applies whole, and the state between runs is on the hub
(the comments and their markers, the pull requests' status): a run killed or cut off at any point
leaves no half-merged pull request, and the next run picks up where it stopped without commenting
twice. The open pull requests are listed in full before any is changed (the hub pages the listing
by offset, so merging while iterating would skip some). `dry_run` reads everything and writes
nothing to the hub.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vlbench.hub import Hub, HubFailure, plain
from vlbench.hub.board import Scoring
from vlbench.hub.comment import render
from vlbench.hub.layout import SUBMISSIONS
from vlbench.hub.markers import CLOSE, DRAFT, READY
from vlbench.hub.pulls import OPEN, PullState, main_head, open_pulls, pull_heads, read_pull, size_of
from vlbench.hub.review import NotReviewable, Reviewer


@dataclass
class Outcome:
    num: int
    author: str
    verdict: str | None = None
    actions: list[str] = field(default_factory=list)  # commented, merged, closed (or "would ...")
    note: str = ""

    def line(self) -> str:
        done = f" -> {', '.join(self.actions)}" if self.actions else ""
        verdict = self.verdict or "not checked"
        return plain(f"#{self.num} {self.author}: {verdict}{': ' + self.note if self.note else ''}{done}", 600)


@dataclass
class IntakeReport:
    outcomes: list[Outcome] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # one sentence each: retried by the next run

    def count(self, action: str) -> int:
        return sum(action in o.actions for o in self.outcomes)


def run_intake(hub: Hub, scoring: Scoring, *, merge: bool = False, dry_run: bool = False,
               echo: Callable[[str], None] = print, debug: bool = False) -> IntakeReport:
    report = IntakeReport()
    listed = open_pulls(hub)  # all of them first: see the module's docstring
    heads = pull_heads(hub) if listed else {}
    with tempfile.TemporaryDirectory(prefix="vlbench-intake-") as tmp:
        reviewer = Reviewer(hub, scoring, Path(tmp))
        for item in sorted(listed, key=lambda d: d.num):
            outcome = Outcome(item.num, plain(item.author, 60))
            try:
                _handle(hub, reviewer, item.num, heads, outcome, merge=merge, dry_run=dry_run, echo=echo)
            except (HubFailure, NotReviewable) as exc:
                report.failures.append(f"#{item.num}: {plain(str(exc), 400)}")
                outcome.note = "could not be handled (see below); the next run retries it"
            except Exception as exc:  # a bug met on one pull request must not hold up the others
                report.failures.append(f"#{item.num}: internal error ({type(exc).__name__}: {plain(str(exc), 300)}); "
                                       "this is a bug in vlbench: please report it with the output of --debug")
                outcome.note = "could not be handled (see below)"
                if debug:
                    traceback.print_exception(type(exc), exc, exc.__traceback__)
            report.outcomes.append(outcome)
            echo(outcome.line())
    return report


def _handle(hub: Hub, reviewer: Reviewer, num: int, heads: dict[int, str], outcome: Outcome, *, merge: bool,
            dry_run: bool, echo: Callable[[str], None]) -> None:
    pull = read_pull(hub, num, heads)
    if pull.status not in OPEN:
        outcome.note = f"{pull.status} since the listing"
        return
    if pull.head is None:
        outcome.note = "no commit yet"
        return
    if pull.base is None:
        raise HubFailure(f"cannot tell where pull request #{num} started: the hub's record of its first commit "
                         "names no parent")
    marker = pull.marker_for(pull.head)
    if marker is not None:
        outcome.verdict = marker.verdict
        again = merge and (marker.verdict in (READY, CLOSE) or (marker.verdict == DRAFT and pull.status == "open"))
        if not again:
            outcome.note = f"already checked at {pull.head[:12]}"
            return
        if marker.verdict == CLOSE:  # never mergeable at this head; the comment says why
            _close(hub, pull, outcome, dry_run)
            return
    main = main_head(hub)
    review = reviewer.review(pull, main)
    outcome.verdict = review.verdict
    outcome.note = review.summary()
    if marker is None:
        text = render(review, merging=merge and review.verdict in (READY, CLOSE))
        if dry_run:
            outcome.actions.append("would comment")
            echo(f"  comment #{num} would get:\n" + "\n".join("    " + line for line in text.splitlines()))
        else:
            # Checking took a while: if another intake run (one at a time is the rule, but a
            # scheduled and a manual run can meet) commented on this commit meanwhile, leave it.
            if read_pull(hub, num, {num: pull.head}).marker_for(pull.head) is not None:
                outcome.note += "; another intake run commented on this commit meanwhile: left to it"
                return
            hub.call(f"commenting on #{num}", hub.api.comment_discussion, hub.repo_id, num, text)
            outcome.actions.append("commented")
    elif review.verdict != marker.verdict:
        outcome.note += (f" (the comment on this commit said {marker.verdict}: main changed since; "
                         "no second comment for one commit)")
    if not merge:
        return
    if review.verdict == CLOSE:
        _close(hub, pull, outcome, dry_run)
    elif review.verdict == READY:
        _merge(hub, reviewer, pull, review.entries, outcome, dry_run)


def _merge(hub: Hub, reviewer: Reviewer, pull: PullState, entries: tuple[str, ...], outcome: Outcome,
           dry_run: bool) -> None:
    if dry_run:
        outcome.actions.append("would merge")
        return
    if pull_heads(hub).get(pull.num) != pull.head:
        outcome.note += "; a new commit arrived while it was checked: the next run checks that one"
        return
    hub.call(f"merging #{pull.num}", hub.api.merge_pull_request, hub.repo_id, pull.num)
    reviewer.owners.record(entries, pull.author)
    outcome.actions.append("merged")


def _close(hub: Hub, pull: PullState, outcome: Outcome, dry_run: bool) -> None:
    if dry_run:
        outcome.actions.append("would close")
        return
    hub.call(f"closing #{pull.num}", hub.api.change_discussion_status, hub.repo_id, pull.num, "closed")
    outcome.actions.append("closed")


def download_submissions(hub: Hub, into: Path, max_bytes: int) -> tuple[Path, list[str]]:
    """Main's `submissions/` folder as plain files under `into` (what `leaderboard build` reads);
    files over `max_bytes` are left out and named."""
    main = main_head(hub)
    listed = hub.call("listing main's submissions", lambda **kw: [e for e in hub.api.list_repo_tree(
        hub.repo_id, path_in_repo=SUBMISSIONS, revision=main, recursive=True, **kw) if hasattr(e, "blob_id")])
    left_out = []
    for entry in listed:
        if size_of(entry) > max_bytes:
            left_out.append(f"{entry.path} ({size_of(entry):,} bytes)")
            continue
        local = hub.call(f"downloading {entry.path}", hub.api.hf_hub_download, hub.repo_id, entry.path, revision=main,
                         cache_dir=str(into / ".cache"))
        target = into / entry.path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(local, target)
    folder = into / SUBMISSIONS
    folder.mkdir(parents=True, exist_ok=True)
    return folder, left_out


@dataclass
class Published:
    entries: int
    boards: int
    invalid: int
    uploaded: int
    deleted: int
    left_out: list[str]


def publish(hub: Hub, out: str | os.PathLike, scoring: Scoring, title: str) -> Published:
    """`leaderboard build` from main's submissions into `out`, then `leaderboard push` to the repo."""
    from vlbench.leaderboard import build_and_publish, push

    with tempfile.TemporaryDirectory(prefix="vlbench-publish-") as tmp:
        folder, left_out = download_submissions(hub, Path(tmp), scoring.options.max_bytes)
        report, _ = build_and_publish(folder, out, scoring.options.data_dir, resamples=scoring.resamples,
                                      seed=scoring.seed, quiet=True)
    pushed = push(out, hub.repo_id, hub.repo_type, token=hub.token, title=title)
    return Published(sum(len(b.entries) for b in report.boards), len(report.boards), len(report.invalid),
                     len(pushed.uploaded), len(pushed.deleted), left_out)
