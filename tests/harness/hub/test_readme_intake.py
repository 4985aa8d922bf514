"""The README's pull-request loop runs as written against the stand-in hub: the participants' and
the maintainers' commands (and the `hf upload` that fixes a pull request), each in a fresh process
that finds the hub through HF_ENDPOINT and its token in HF_TOKEN, as on a real machine; and the
scheduled examples run the README's command."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.hub.conftest import entry, subprocess_env
from tests.harness.hub.standin import running_standin
from tests.harness.leaderboard.conftest import REPO, forbid_network, watchdog

pytest.importorskip("huggingface_hub")
SECTION = REPO.joinpath("README.md").read_text(encoding="utf-8").split("**Submissions through pull requests**", 1)[1]
SECTION = SECTION.split("**EvalAI.**", 1)[0]


def commands(text: str) -> list[str]:
    return [line[2:] for block in re.findall(r"```console\n(.*?)```", text, re.S)
            for line in block.splitlines() if line.startswith("$ ")]


def argv(command: str) -> list[str]:
    words = shlex.split(command)
    if words[0] == "vlbench":
        return [sys.executable, "-m", "vlbench", *words[1:]]
    assert words[0] == "hf", command
    script = Path(sys.executable).with_name("hf")
    return [str(script) if script.exists() else sys.executable, *([] if script.exists() else
            ["-c", "from huggingface_hub.cli.hf import main; main()"]), *words[1:]]


def run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    done = subprocess.run(argv(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-3000:])
    return done


def test_the_readme_loop_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    participants = SECTION.split("*Participants*", 1)[1].split("*Maintainers*", 1)[0]
    maintainers = SECTION.split("*Maintainers*", 1)[1]
    assert commands(participants) == ["vlbench validate my-method.json",
                                      "vlbench submit my-method.json --repo-id ORG/NAME"]
    fix = re.search(r"`(hf upload [^`]+)`", " ".join(participants.split()))
    assert fix is not None and "--revision refs/pr/N" in fix[1]
    upkeep = commands(maintainers)
    assert upkeep[-1] == "vlbench leaderboard intake --repo-id ORG/NAME --merge --publish"
    forbid_network(monkeypatch)
    with watchdog(900, "the README's pull-request loop"), running_standin() as hub:
        repo = hub.add_repo("dataset", "ORG/NAME", {"README.md": b"# board\n", "submissions/mini-retrieval/random.json":
                                                    (REPO / "submissions/mini-retrieval/random.json").read_bytes()})
        alice, ops = tmp_path / "alice", tmp_path / "ops"
        alice.mkdir()
        ops.mkdir()
        (alice / "my-method.json").write_bytes(entry(1, "My method", "Team Alice"))
        as_alice = subprocess_env(hub, tmp_path / "home-alice", "hf_alice")
        as_maintainer = subprocess_env(hub, tmp_path / "home-ops", "hf_maintainer")

        for command in commands(participants):
            out = run(command, alice, as_alice).stdout
        assert f"opened pull request {hub.url}/datasets/ORG/NAME/discussions/1" in out
        # the fix, as the README writes it, lands on the pull request's ref, never on main
        (alice / "my-method.json").write_bytes(entry(2, "My method", "Team Alice"))
        run(fix[1].replace("refs/pr/N", "refs/pr/1"), alice, as_alice)
        assert repo.files("refs/pr/1")["submissions/mini-retrieval/my-method.json"] == entry(2, "My method", "Team Alice")
        assert "submissions/mini-retrieval/my-method.json" not in repo.files()

        for command in upkeep[:-1]:
            posted = len([r for r in hub.requests if r[0] == "POST"])
            out = run(command, ops, as_maintainer).stdout
            if "--dry-run" in command:
                assert "would comment" in out and len([r for r in hub.requests if r[0] == "POST"]) == posted
        assert repo.pull(1).status == "merged"
        assert len(repo.comments(1, "maintainer")) == 1
        board = json.loads(repo.files()["leaderboard.json"])
        assert {e["submission"] for b in board["boards"] for e in b["entries"]} == {
            "mini-retrieval/my-method.json", "mini-retrieval/random.json"}

        # the whole loop in one command
        (alice / "my-method.json").write_bytes(entry(3, "Second method", "Team Alice"))
        run("vlbench submit my-method.json --repo-id ORG/NAME --name second.json", alice, as_alice)
        run(upkeep[-1], ops, as_maintainer)
        assert repo.pull(2).status == "merged"
        board = json.loads(repo.files()["leaderboard.json"])
        assert "mini-retrieval/second.json" in {e["submission"] for b in board["boards"] for e in b["entries"]}


def test_the_scheduled_examples_run_the_readme_command() -> None:
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((REPO / "examples" / "intake-workflow.yml").read_text(encoding="utf-8"))
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert on["schedule"][0]["cron"] == "*/15 * * * *"
    assert workflow["concurrency"]["cancel-in-progress"] is False
    steps = workflow["jobs"]["intake"]["steps"]
    last = steps[-1]
    assert last["run"] == "vlbench leaderboard intake --repo-id ORG/NAME --merge --publish"
    assert last["env"]["HF_TOKEN"] == "${{ secrets.HF_TOKEN }}"
    cron = re.search(r"```\n(\*/15 .*?)\n```", SECTION)
    assert cron is not None and cron[1].split(" && ")[-1].endswith(
        "vlbench leaderboard intake --repo-id ORG/NAME --merge --publish >> intake.log 2>&1")
    assert "flock -n" in cron[1]
    assert not (REPO / ".github" / "workflows" / "intake-workflow.yml").exists()  # an example, not active
