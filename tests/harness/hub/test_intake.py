"""`vlbench leaderboard intake` through the real huggingface_hub client against the stand-in hub
(tests/harness/hub/standin.py): the issue's scenarios, each as participants and a maintainer
would meet them."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.harness.hub.conftest import (
    BOARD,
    BOOT,
    as_user,
    entry,
    gzip_bomb,
    intake,
    maintainer_comments,
    random_bytes,
    submit,
    subprocess_env,
)
from tests.harness.hub.standin import HubStandIn, Repo
from tests.harness.leaderboard.conftest import REPO
from vlbench.hub.markers import parse_markers

pytest.importorskip("huggingface_hub")
from huggingface_hub import CommitOperationAdd, HfApi  # noqa: E402

ALPHA = "submissions/mini-retrieval/alpha.json"


def participant(hub: HubStandIn, token: str) -> HfApi:
    return HfApi(token=token, endpoint=hub.url)


def open_pr(hub: HubStandIn, token: str, files: dict[str, bytes], title: str = "Submission") -> int:
    """A pull request as a participant opens one with the client (create_commit: a ready one)."""
    info = participant(hub, token).create_commit(
        BOARD, [CommitOperationAdd(path_in_repo=p, path_or_fileobj=d) for p, d in files.items()],
        commit_message=title, repo_type="dataset", create_pr=True)
    return int(info.pr_url.rsplit("/", 1)[1])


def push_to_pr(hub: HubStandIn, token: str, num: int, files: dict[str, bytes]) -> None:
    participant(hub, token).create_commit(
        BOARD, [CommitOperationAdd(path_in_repo=p, path_or_fileobj=d) for p, d in files.items()],
        commit_message="Fix", repo_type="dataset", revision=f"refs/pr/{num}")


def only_marker(repo: Repo, num: int):
    comments = maintainer_comments(repo, num)
    assert len(comments) == 1, comments
    (marker,) = parse_markers(comments[0])
    return comments[0], marker


def test_valid_new_entry_is_scored_commented_and_merged(hub: HubStandIn, board: Repo, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "alpha.json").write_bytes(entry(1, "Alpha", "Team A"))
    assert submit(monkeypatch, tmp_path / "alpha.json", "hf_alice") == 0
    out = capsys.readouterr().out
    assert f"opened pull request {hub.url}/datasets/{BOARD}/discussions/1" in out
    # the commit is on the pull request's ref, not on main, until merged
    assert ALPHA not in board.files() and ALPHA in board.files("refs/pr/1")
    assert board.pull(1).status == "open" and board.pull(1).author == "alice"

    assert intake(monkeypatch) == 0
    text, marker = only_marker(board, 1)
    assert "valid: ready to merge" in text and "| file | benchmark | main score [95% interval] | rank it would take |" in text
    row = next(line for line in text.splitlines() if line.startswith("| submissions"))
    assert "RSUM" in row and "[" in row and " of 2" in row
    assert marker.verdict == "ready" and marker.author == "alice" and marker.entries == (ALPHA,)
    assert marker.head == board.refs["refs/pr/1"]
    assert ALPHA not in board.files()  # no --merge: commented only

    assert intake(monkeypatch, "--merge") == 0
    assert board.pull(1).status == "merged" and board.files()[ALPHA] == entry(1, "Alpha", "Team A")
    assert len(maintainer_comments(board, 1)) == 1  # merging adds no second comment
    assert "1 merged" in capsys.readouterr().out


def test_invalid_file_lists_every_problem_and_stays_open(hub: HubStandIn, board: Repo,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    doc = json.loads(entry(2, "Broken"))
    first = next(iter(doc["predictions"]["image_to_text"]))
    doc["predictions"]["image_to_text"][first] = ["nope"] * 3
    doc["meta"]["url"] = "javascript:alert(1)"
    num = open_pr(hub, "hf_bob", {"submissions/mini-retrieval/broken.json": json.dumps(doc).encode()})
    assert intake(monkeypatch, "--merge") == 0
    text, marker = only_marker(board, num)
    assert marker.verdict == "refused" and marker.entries == ()
    assert "not merged" in text and "problems found" in text
    # each problem with its JSON pointer (escaped: / and _ are Markdown punctuation)
    assert f"\\/predictions\\/image\\_to\\_text\\/{first}" in text
    assert "\\/meta\\/url" in text
    assert board.pull(num).status == "open" and "submissions/mini-retrieval/broken.json" not in board.files()


def test_gzip_bomb_and_oversized_file_are_refused_within_the_caps(hub: HubStandIn, board: Repo,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = gzip_bomb(64 * 1024 * 1024)
    assert len(bomb) < 200_000
    num = open_pr(hub, "hf_bob", {"submissions/mini-retrieval/bomb.json.gz": bomb,
                                  "submissions/mini-retrieval/huge.json": b" " * 300_000})
    assert intake(monkeypatch, "--merge", "--max-decompressed", "1000000", "--max-bytes", "250000") == 0
    text, marker = only_marker(board, num)
    assert marker.verdict == "refused"
    assert "decompressed\\_too\\_large" in text and "file\\_too\\_large" in text
    # the file over the cap was judged from the hub's listing: never downloaded
    assert not any("huge.json" in path for method, path in hub.requests if "/resolve/" in path)
    assert board.pull(num).status == "open"


def test_another_teams_file_is_never_merged_but_the_owners_update_is(hub: HubStandIn, board: Repo,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    first = open_pr(hub, "hf_alice", {ALPHA: entry(1, "Alpha", "Team A")})
    assert intake(monkeypatch, "--merge") == 0
    assert board.pull(first).status == "merged"
    # bob claims alice's team name: still another hub account's entry
    hostile = open_pr(hub, "hf_bob", {ALPHA: entry(5, "Alpha v2", "Team A")})
    # a change to the maintainers' own entry, which no intake merge recorded an owner for
    unowned = open_pr(hub, "hf_carol", {"submissions/mini-retrieval/random.json": entry(6, "Random", "C")})
    own = open_pr(hub, "hf_alice", {ALPHA: entry(7, "Alpha v2", "team  a")})  # same team, spacing and case aside
    renamed = open_pr(hub, "hf_alice", {ALPHA: entry(8, "Alpha v3", "Team B")})
    assert intake(monkeypatch, "--merge") == 0
    assert board.pull(hostile).status == "open" and "another\\_teams\\_entry" in only_marker(board, hostile)[0]
    assert board.pull(unowned).status == "open" and "unowned\\_entry" in only_marker(board, unowned)[0]
    assert board.pull(own).status == "merged"
    assert "replaces the same team's entry" in only_marker(board, own)[0]
    assert board.files()[ALPHA] == entry(7, "Alpha v2", "team  a")
    text, marker = only_marker(board, renamed)
    assert marker.verdict == "refused" and "team\\_changed" in text
    assert board.pull(renamed).status == "open"


def test_python_file_or_readme_edit_closes_the_pull_request(hub: HubStandIn, board: Repo,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    code = open_pr(hub, "hf_bob", {"submissions/mini-retrieval/gamma.json": entry(3, "Gamma"),
                                   "evaluate.py": b"import os; os.system('rm -rf /')\n"})
    readme = open_pr(hub, "hf_carol", {"README.md": b"# my board now\n"})
    nested = open_pr(hub, "hf_carol", {"submissions/mini-retrieval/run.py": b"print(1)\n",
                                       "submissions/REFERENCE_ENTRIES": b"mini-retrieval/run.py\n"})
    assert intake(monkeypatch) == 0  # without --merge: commented, nothing closed
    assert board.pull(code).status == "open"
    assert intake(monkeypatch, "--merge") == 0
    for num, path in ((code, "evaluate\\.py"), (readme, "README\\.md")):
        text, marker = only_marker(board, num)
        assert marker.verdict == "close" and board.pull(num).status == "closed"
        assert "outside submissions/" in text and path in text
    assert board.files()["README.md"] == b"# board\n" and "evaluate.py" not in board.files()
    # under submissions/ but not an entry: refused, left open for a fixing commit
    text, marker = only_marker(board, nested)
    assert marker.verdict == "refused" and board.pull(nested).status == "open"
    assert "not\\_a\\_submission\\_path" in text and "reference list" in text
    # nothing but submission files was ever downloaded from a pull request (main's reference list
    # is read as the build reads it: at main's commit)
    downloads = [path.split("/resolve/", 1)[1].split("/", 1) for method, path in hub.requests if "/resolve/" in path]
    heads = {board.refs[f"refs/pr/{n}"] for n in (code, readme, nested)}
    assert downloads and not any(p.endswith((".py", "README.md")) for _, p in downloads)
    assert {rev for rev, p in downloads if p.endswith("REFERENCE_ENTRIES")} == {board.refs["refs/heads/main"]}
    assert not heads & {rev for rev, p in downloads if not p.startswith("submissions/mini-retrieval/")}


def test_pull_request_fixed_by_a_second_commit(hub: HubStandIn, board: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    path = "submissions/mini-retrieval/delta.json"
    num = open_pr(hub, "hf_carol", {path: b'{"vlbench": 1, "benchmark": "mini-retrieval"}'})
    assert intake(monkeypatch, "--merge") == 0
    assert parse_markers(maintainer_comments(board, num)[0])[0].verdict == "refused"
    push_to_pr(hub, "hf_carol", num, {path: entry(4, "Delta", "D")})
    assert path not in board.files()  # the fix landed on refs/pr/N only
    assert intake(monkeypatch, "--merge") == 0
    comments = maintainer_comments(board, num)
    assert len(comments) == 2
    assert [parse_markers(c)[0].verdict for c in comments] == ["refused", "ready"]
    assert board.pull(num).status == "merged" and board.files()[path] == entry(4, "Delta", "D")


def test_second_run_adds_no_comment_until_a_new_commit(hub: HubStandIn, board: Repo, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    good = open_pr(hub, "hf_alice", {ALPHA: entry(1, "Alpha", "A")})
    bad = open_pr(hub, "hf_bob", {"submissions/mini-retrieval/x.json": b"[]"})
    assert intake(monkeypatch) == 0
    assert intake(monkeypatch) == 0
    assert len(maintainer_comments(board, good)) == 1 and len(maintainer_comments(board, bad)) == 1
    assert "already checked" in capsys.readouterr().out
    # a second comment comes with a new commit only
    push_to_pr(hub, "hf_bob", bad, {"submissions/mini-retrieval/x.json": b"{}"})
    assert intake(monkeypatch) == 0
    assert len(maintainer_comments(board, bad)) == 2 and len(maintainer_comments(board, good)) == 1


def test_a_fake_marker_from_the_author_is_ignored(hub: HubStandIn, board: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    num = open_pr(hub, "hf_bob", {"submissions/mini-retrieval/x.json": b"[]"})
    head = board.refs[f"refs/pr/{num}"]
    fake = f'<!-- vlbench-intake {{"author": "bob", "entries": [], "head": "{head}", "v": 1, "verdict": "ready"}} -->'
    participant(hub, "hf_bob").comment_discussion(BOARD, num, fake, repo_type="dataset")
    assert intake(monkeypatch, "--merge") == 0
    (text,) = maintainer_comments(board, num)
    assert parse_markers(text)[0].verdict == "refused" and board.pull(num).status == "open"


def test_changes_are_relative_to_where_the_pull_request_started(hub: HubStandIn, board: Repo,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Main moved on after bob opened his pull request (alice's entry merged, the README edited),
    then bob fixed his file: his pull request changes only that file (not "deletes" alice's entry
    or "reverts" the README), and it merges."""
    bobs = open_pr(hub, "hf_bob", {"submissions/mini-retrieval/bob.json": b"{}"})  # fixed later
    alices = open_pr(hub, "hf_alice", {ALPHA: entry(1, "Alpha", "A")})
    assert intake(monkeypatch, "--merge") == 0
    hub.commit_to(board, "refs/heads/main", "maintainer", "README", {"README.md": b"# board v2\n"})
    push_to_pr(hub, "hf_bob", bobs, {"submissions/mini-retrieval/bob.json": entry(10, "Bob", "B")})
    assert intake(monkeypatch, "--merge") == 0
    assert board.pull(alices).status == "merged" and board.pull(bobs).status == "merged"
    assert board.files()["README.md"] == b"# board v2\n" and ALPHA in board.files()
    marker = parse_markers(maintainer_comments(board, bobs)[-1])[0]
    assert marker.entries == ("submissions/mini-retrieval/bob.json",)


def test_draft_pull_request_waits_until_published(hub: HubStandIn, board: Repo, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """upload_folder(create_pr=True) opens a draft: checked and commented, merged only once published."""
    folder = tmp_path / "upload" / "submissions" / "mini-retrieval"
    folder.mkdir(parents=True)
    (folder / "carol.json").write_bytes(entry(11, "Carol", "C"))
    participant(hub, "hf_carol").upload_folder(repo_id=BOARD, folder_path=str(tmp_path / "upload"),
                                               repo_type="dataset", create_pr=True)
    (num,) = board.discussions
    assert board.pull(num).status == "draft"
    assert intake(monkeypatch, "--merge") == 0
    text, marker = only_marker(board, num)
    assert marker.verdict == "draft" and "draft" in text and board.pull(num).status == "draft"
    participant(hub, "hf_carol").change_discussion_status(BOARD, num, "open", repo_type="dataset")
    assert intake(monkeypatch, "--merge") == 0
    assert board.pull(num).status == "merged" and len(maintainer_comments(board, num)) == 1


def test_every_open_pull_request_of_many_pages_is_handled(hub: HubStandIn, board: Repo,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """More open pull requests than a listing page, all merged or closed in one run: the listing is
    collected before anything changes (iterating while closing would skip some)."""
    hub.page_size = 4
    nums = [open_pr(hub, "hf_bob", {f"notes/{i}.txt": b"x"}) for i in range(7)]
    nums += [open_pr(hub, "hf_alice", {f"submissions/mini-retrieval/a{i}.json": entry(20 + i, f"A{i}", "A")})
             for i in range(3)]
    assert intake(monkeypatch, "--merge", "--bootstrap", "0") == 0
    assert [board.pull(n).status for n in nums] == ["closed"] * 7 + ["merged"] * 3


def test_dry_run_writes_nothing(hub: HubStandIn, board: Repo, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    good = open_pr(hub, "hf_alice", {ALPHA: entry(1, "Alpha", "A")})
    bad = open_pr(hub, "hf_bob", {"setup.py": b"x"})
    before = len(hub.requests)
    assert intake(monkeypatch, "--merge", "--dry-run", "--publish") == 0
    posts = [r for r in hub.requests[before:] if r[0] == "POST"]
    assert posts == [], posts
    out = capsys.readouterr().out
    assert f"#{good} alice: ready" in out and "would comment, would merge" in out
    assert f"#{bad} bob: close" in out and "would close" in out and "valid: ready to merge" in out
    assert maintainer_comments(board, good) == [] and board.pull(good).status == "open"


def test_without_token_or_repo_one_sentence(hub: HubStandIn, board: Repo, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from vlbench.cli import main

    assert main(["leaderboard", "intake", "--repo-id", BOARD]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no Hugging Face token: set HF_TOKEN or run `hf auth login`" in err
    assert hub.requests == []
    as_user(monkeypatch, "hf_maintainer")
    assert main(["leaderboard", "intake"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no hub repo: give --repo-id ORG/NAME" in err
    assert main(["leaderboard", "intake", "--repo-id", "org/missing"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "there is no dataset org/missing on the hub" in err
    as_user(monkeypatch, "hf_wrong")
    assert main(["leaderboard", "intake", "--repo-id", BOARD]) == 2
    assert "cannot reach the Hugging Face hub with this token" in capsys.readouterr().err


def test_a_failed_merge_is_retried_next_run_without_a_second_comment(hub: HubStandIn, board: Repo,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    num = open_pr(hub, "hf_alice", {ALPHA: entry(1, "Alpha", "A")})
    hub.hook = lambda stage, method, path: "fail" if stage == "before" and path.endswith("/merge") else None
    assert intake(monkeypatch, "--merge") == 2
    err = capsys.readouterr().err
    assert f"error: #{num}: merging #{num} failed" in err and "the next run retries them" in err
    assert board.pull(num).status == "open" and ALPHA not in board.files()
    # a lost answer: the hub made the comment, the client never heard back
    hub.hook = None
    assert intake(monkeypatch, "--merge") == 0
    assert board.pull(num).status == "merged" and len(maintainer_comments(board, num)) == 1


def test_a_lost_comment_answer_is_not_posted_twice(hub: HubStandIn, board: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    num = open_pr(hub, "hf_alice", {ALPHA: entry(1, "Alpha", "A")})
    hub.hook = lambda stage, method, path: "drop" if stage == "applied" and path.endswith("/comment") else None
    assert intake(monkeypatch, "--merge") == 2
    assert len(maintainer_comments(board, num)) == 1 and board.pull(num).status == "open"
    hub.hook = None
    assert intake(monkeypatch, "--merge") == 0
    assert len(maintainer_comments(board, num)) == 1 and board.pull(num).status == "merged"


def test_run_killed_between_comment_and_merge(board: Repo, hub: HubStandIn, tmp_path: Path) -> None:
    """A maintainer's process, killed (SIGKILL) right after its comment reached the hub and before
    it merged: nothing is half-merged, and the next run merges without a second comment."""
    nums = [open_pr(hub, "hf_alice", {ALPHA: entry(1, "Alpha", "A")}),
            open_pr(hub, "hf_bob", {"submissions/mini-retrieval/bob.json": entry(2, "Bob", "B")})]
    argv = [sys.executable, "-m", "vlbench", "leaderboard", "intake", "--repo-id", BOARD, "--merge", *BOOT]
    env = subprocess_env(hub, tmp_path / "hf-home")
    log = tmp_path / "first-run.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT)
    killed: list[str] = []
    done_killing = threading.Event()

    def kill_after_first_comment(stage: str, method: str, path: str) -> str | None:
        # The client waits for this answer, so it sends nothing more before it dies; the server
        # serves nothing else until the hook returns.
        if stage == "applied" and path.endswith("/comment") and not killed:
            proc.send_signal(signal.SIGKILL)
            killed.append(path)
            done_killing.set()
            return "drop"
        return None

    hub.hook = kill_after_first_comment
    while not done_killing.wait(0.2) and proc.poll() is None:
        pass
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL and len(killed) == 1, log.read_text()
    assert [board.pull(n).status for n in nums] == ["open", "open"]
    assert len(maintainer_comments(board, nums[0])) == 1 and maintainer_comments(board, nums[1]) == []
    assert ALPHA not in board.files()
    hub.hook = None
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert [board.pull(n).status for n in nums] == ["merged", "merged"]
    assert [len(maintainer_comments(board, n)) for n in nums] == [1, 1]


def test_publish_builds_and_pushes_the_board(hub: HubStandIn, board: Repo, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    open_pr(hub, "hf_alice", {ALPHA: entry(1, "Alpha", "A")})
    out = tmp_path / "leaderboard"
    assert intake(monkeypatch, "--merge", "--publish", "--out", str(out)) == 0
    assert "published: 2 entries on 1 boards" in capsys.readouterr().out
    files = board.files()
    assert {"index.html", "leaderboard.json", "leaderboard.csv"} <= set(files)
    published = json.loads(files["leaderboard.json"])
    ranks = {e["submission"]: e["rank"] for b in published["boards"] for e in b["entries"]}
    assert sorted(ranks) == ["mini-retrieval/alpha.json", "mini-retrieval/random.json"]
    # the rank the comment announced is the rank the built board gives (same resamples and seed)
    row = next(line for line in maintainer_comments(board, 1)[0].splitlines() if line.startswith("| submissions"))
    assert row.split(" | ")[-1].startswith(f"{ranks['mini-retrieval/alpha.json']} of 2")
    assert files["submissions/mini-retrieval/random.json"] == random_bytes()  # submissions stay
    assert (out / "index.html").is_file()


def test_a_seed_joins_its_method_and_the_comment_gives_the_published_row(
        hub: HubStandIn, board: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeds of one method are one row of the board: a second seed's comment says it joins the
    method, and the rank and row count of the last pull request's comment are the published board's."""
    open_pr(hub, "hf_alice", {ALPHA: entry(1, "Alpha (seed 0)", "A")})
    open_pr(hub, "hf_alice", {"submissions/mini-retrieval/alpha-1.json": entry(2, "Alpha (seed 1)", "A")})
    open_pr(hub, "hf_bob", {"submissions/mini-retrieval/beta-0.json": entry(3, "Beta seed=0", "B"),
                            "submissions/mini-retrieval/beta-1.json": entry(4, "Beta seed=1", "B")})
    out = tmp_path / "leaderboard"
    assert intake(monkeypatch, "--merge", "--publish", "--out", str(out)) == 0
    assert [board.pull(n).status for n in (1, 2, 3)] == ["merged"] * 3
    second = maintainer_comments(board, 2)[0]
    assert "joins method Alpha (2 seeds with it): its row shows their mean, RSUM" in second
    assert "joins method" not in maintainer_comments(board, 1)[0]
    published = json.loads(board.files()["leaderboard.json"])
    [rows] = [b["rows"] for b in published["boards"] if b["benchmark"] == "mini-retrieval"]
    assert [(r["method"], r["seeds"]) for r in rows if r["seeds"]] == sorted(
        [("Alpha", 2), ("Beta", 2)], key=lambda m: [r["method"] for r in rows].index(m[0]))
    beta = next(r for r in rows if r["method"] == "Beta")
    third = maintainer_comments(board, 3)[0]
    cells = [line.split(" | ")[-1] for line in third.splitlines() if line.startswith("| submissions")]
    assert len(cells) == 2 and all(c.startswith(f"{beta['rank']} of {len(rows)}") for c in cells), (cells, rows)
    assert third.count("joins method Beta (2 seeds with it)") == 2


def test_stand_in_refuses_what_the_hub_refuses(hub: HubStandIn, board: Repo) -> None:
    """The stand-in's own rules the tests rely on: participants cannot write to main or merge."""
    with pytest.raises(Exception, match="403"):
        participant(hub, "hf_bob").create_commit(BOARD, [CommitOperationAdd(path_in_repo="x", path_or_fileobj=b"x")],
                                                 commit_message="x", repo_type="dataset")
    num = open_pr(hub, "hf_bob", {"submissions/mini-retrieval/b.json": entry(1, "B")})
    with pytest.raises(Exception, match="403"):
        participant(hub, "hf_bob").merge_pull_request(BOARD, num, repo_type="dataset")


def test_publish_refuses_a_folder_it_did_not_write_before_touching_the_hub(hub: HubStandIn, board: Repo,
                                                                           tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    num = open_pr(hub, "hf_alice", {ALPHA: entry(1, "Alpha", "A")})
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    before = len(hub.requests)
    assert intake(monkeypatch, "--merge", "--publish", "--out", str(mine)) == 2
    assert "error: --out" in capsys.readouterr().err
    assert hub.requests[before:] == [] and board.pull(num).status == "open"
    assert (mine / "notes.txt").read_text() == "mine"


def test_a_bug_met_on_one_pull_request_does_not_hold_up_the_others(hub: HubStandIn, board: Repo,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from vlbench.hub import review

    first = open_pr(hub, "hf_bob", {"submissions/mini-retrieval/odd.json": b"{}"})
    second = open_pr(hub, "hf_alice", {ALPHA: entry(1, "Alpha", "A")})
    real = review.place

    def failing(path: str, benchmarks: object) -> object:
        if path.endswith("odd.json"):
            raise ValueError("a bug")
        return real(path, benchmarks)  # type: ignore[arg-type]

    monkeypatch.setattr(review, "place", failing)
    assert intake(monkeypatch, "--merge") == 2
    err = capsys.readouterr().err
    assert f"error: #{first}: internal error (ValueError: a bug); this is a bug in vlbench" in err
    assert maintainer_comments(board, first) == [] and board.pull(second).status == "merged"


def test_a_comment_made_meanwhile_by_another_run_is_not_repeated(hub: HubStandIn, board: Repo,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Two runs that meet (a scheduled and a manual one): the one that finishes checking second
    sees the first one's comment on the commit and leaves the pull request to it."""
    from vlbench.hub import review as review_module
    from vlbench.hub.markers import Marker

    num = open_pr(hub, "hf_alice", {ALPHA: entry(1, "Alpha", "A")})
    head = board.refs[f"refs/pr/{num}"]
    real = review_module.Reviewer.review

    def slow_review(self: object, pull: object, main: str) -> object:
        result = real(self, pull, main)  # type: ignore[arg-type]
        # meanwhile, the other run posts its comment
        board.pull(num).events.append(hub.comment_event("maintainer", Marker(head, "ready", "alice", (ALPHA,)).text()))
        return result

    monkeypatch.setattr(review_module.Reviewer, "review", slow_review)
    assert intake(monkeypatch, "--merge") == 0
    assert len(maintainer_comments(board, num)) == 1 and board.pull(num).status == "open"
    assert "another intake run commented on this commit meanwhile" in capsys.readouterr().out
