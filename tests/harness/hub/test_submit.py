"""`vlbench submit` through the real huggingface_hub client against the stand-in hub: local
validation first (the usual report, nothing sent), then one ready pull request adding the file
under submissions/<benchmark>/."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.harness.hub.conftest import BOARD, entry, random_bytes, submit
from tests.harness.hub.standin import HubStandIn, Repo

pytest.importorskip("huggingface_hub")


def test_submit_opens_a_ready_pull_request(hub: HubStandIn, board: Repo, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mine.json").write_bytes(entry(3, "Mine", "Team M"))
    assert submit(monkeypatch, tmp_path / "mine.json", "hf_alice", "--name", "team-m.json") == 0
    out = capsys.readouterr().out
    assert out.startswith(f"VALID: {tmp_path / 'mine.json'} is a valid mini-retrieval submission (benchmark v")
    assert f"opened pull request {hub.url}/datasets/{BOARD}/discussions/1\n" in out
    pull = board.pull(1)
    assert pull.status == "open" and pull.author == "alice" and pull.title == "Submission: Mine on mini-retrieval"
    added = set(board.files("refs/pr/1")) - set(board.files())
    assert added == {"submissions/mini-retrieval/team-m.json"}
    assert board.files("refs/pr/1")["submissions/mini-retrieval/team-m.json"] == entry(3, "Mine", "Team M")
    assert "sha256" in board.comments(1, "alice")[0]  # the description names what was validated


def test_gzipped_submission_keeps_its_bytes(hub: HubStandIn, board: Repo, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    data = gzip.compress(entry(4, "Zipped"))
    (tmp_path / "zipped.json.gz").write_bytes(data)
    assert submit(monkeypatch, tmp_path / "zipped.json.gz", "hf_bob") == 0
    assert board.files("refs/pr/1")["submissions/mini-retrieval/zipped.json.gz"] == data


def test_invalid_file_is_refused_locally_and_nothing_is_sent(hub: HubStandIn, board: Repo, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(entry(5, "Broken"))
    doc["predictions"]["image_to_text"] = {}
    (tmp_path / "broken.json").write_text(json.dumps(doc))
    assert submit(monkeypatch, tmp_path / "broken.json", "hf_bob") == 1
    err = capsys.readouterr().err
    assert err.startswith(f"INVALID: {tmp_path / 'broken.json'}: ") and "/predictions/image_to_text" in err
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(doc["predictions"]))
    assert submit(monkeypatch, bare, "hf_bob") == 1
    big = tmp_path / "big.json"
    big.write_bytes(entry(5, "Big"))
    assert submit(monkeypatch, big, "hf_bob", "--max-bytes", "1000") == 1
    assert "[file_too_large]" in capsys.readouterr().err
    assert hub.requests == [] and board.discussions == {}


def test_refusals_before_any_request(hub: HubStandIn, board: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    from vlbench.cli import main

    (tmp_path / "my entry.json").write_bytes(entry(6, "Spaces"))
    assert submit(monkeypatch, tmp_path / "my entry.json", "hf_bob") == 2
    assert "cannot name a submission in the repo" in capsys.readouterr().err
    (tmp_path / "ok.json").write_bytes(entry(6, "Ok"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert main(["submit", str(tmp_path / "ok.json"), "--repo-id", BOARD]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no Hugging Face token" in err
    assert main(["submit", str(tmp_path / "ok.json")]) == 2
    assert "no hub repo: give --repo-id ORG/NAME" in capsys.readouterr().err
    assert main(["submit", str(tmp_path / "ok.json"), "--repo-id", "not a repo"]) == 2
    assert "is not a hub repo id" in capsys.readouterr().err
    assert hub.requests == []


def test_saved_login_token_and_existing_entries(hub: HubStandIn, board: Repo, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from huggingface_hub import constants

    from vlbench.cli import main

    token_file = Path(constants.HF_TOKEN_PATH)
    token_file.parent.mkdir(parents=True)
    token_file.write_text("hf_carol")
    (tmp_path / "random.json").write_bytes(random_bytes())
    assert main(["submit", str(tmp_path / "random.json"), "--repo-id", BOARD]) == 0
    assert "already holds these exact bytes" in capsys.readouterr().out and board.discussions == {}
    (tmp_path / "random.json").write_bytes(entry(8, "Mine now"))
    assert main(["submit", str(tmp_path / "random.json"), "--repo-id", BOARD]) == 0
    out = capsys.readouterr().out
    assert "is on the board already; intake merges the change only if that entry is your own" in out
    assert board.pull(1).author == "carol"

