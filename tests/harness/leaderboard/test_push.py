"""`vlbench leaderboard push` through the real huggingface_hub client against a stand-in hub on
127.0.0.1 (tests/harness/leaderboard/hub_standin.py), which records what it received."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.leaderboard.conftest import REPO, forbid_network, watchdog
from tests.harness.leaderboard.hub_standin import TOKEN, HubStandIn, running_standin
from vlbench.cli import main
from vlbench.leaderboard.ownership import MARKER as BUILD_MARKER
from vlbench.leaderboard.publish import readme_for_hub

pytest.importorskip("huggingface_hub")
hub_constants = pytest.importorskip("huggingface_hub.constants")


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """The stand-in hub as the client's endpoint, no saved token, no other network."""
    attempts = forbid_network(monkeypatch)
    with watchdog(300, "a hub push test"), running_standin() as standin:
        monkeypatch.setattr(hub_constants, "ENDPOINT", standin.url)
        monkeypatch.setattr(hub_constants, "HF_TOKEN_PATH", str(tmp_path / "hf-home" / "token"))
        monkeypatch.delenv("HF_TOKEN", raising=False)
        monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
        yield standin
    assert attempts == [], f"tried to reach the network: {attempts}"


@pytest.fixture
def board(built_board: Path, tmp_path: Path) -> Path:
    """The built folder, with the build marker a build leaves there."""
    folder = tmp_path / "leaderboard"
    shutil.copytree(built_board, folder)
    if not (folder / BUILD_MARKER).exists():
        (folder / BUILD_MARKER).write_text('{"written_by": "vlbench leaderboard build"}\n')
    return folder


def published(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
            if p.is_file() and not p.relative_to(folder).as_posix().startswith(("cache/", BUILD_MARKER))}


def front_matter(readme: bytes) -> str:
    text = readme.decode()
    assert text.startswith("---\n")
    return text[4:text.index("\n---\n", 4)]


def test_new_dataset_repo_is_created_and_holds_the_build(hub: HubStandIn, board: Path,
                                                          capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert main(["leaderboard", "push", "--repo-id", "org/board", "--folder", str(board)]) == 0
    out = capsys.readouterr().out
    assert "(created the dataset)" in out
    assert hub.created == [{"name": "board", "organization": "org", "type": "dataset"}]
    repo = hub.repos[("dataset", "org/board")]
    assert repo.sdk is None and len(repo.commits) == 1
    expected = published(board)
    assert set(repo.commits[0]["added"]) == set(expected) and "index.html" in expected
    assert not any(p.startswith("cache/") or p == BUILD_MARKER for p in repo.files)
    for name, data in expected.items():
        if name != "README.md":
            assert repo.files[name] == data
    readme = repo.files["README.md"]
    meta = front_matter(readme)
    assert "configs:\n- config_name: default\n  data_files:\n  - split: leaderboard\n    path: leaderboard.csv" in meta
    assert readme.decode().endswith(expected["README.md"].decode())  # the built README follows it
    assert ("POST", "/api/datasets/org/board/preupload/main") in hub.requests
    assert ("POST", "/api/validate-yaml") in hub.requests


def test_push_replaces_stale_files_and_keeps_foreign_ones(hub: HubStandIn, board: Path,
                                                          capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """An earlier push left a plot this build does not have, cache entries and the marker: they go,
    in the same commit. A file vlbench never writes stays, and the push says so."""
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    (board / "plot.png").unlink(missing_ok=True)
    stale_cache = "cache/mini-retrieval/" + "a" * 64 + ".json"
    hub.add_repo("dataset", "org/board", {"README.md": b"old", "plot.png": b"old png", stale_cache: b"{}",
                                          BUILD_MARKER: b"{}", "LICENSE": b"mine", "notes/about.md": b"mine too"})
    assert main(["leaderboard", "push", "--repo-id", "org/board", "--folder", str(board)]) == 0
    out = capsys.readouterr().out
    repo = hub.repos[("dataset", "org/board")]
    assert hub.created == []  # it existed: not created again
    (commit,) = repo.commits
    assert sorted(commit["deleted"]) == sorted([BUILD_MARKER, stale_cache, "plot.png"])
    assert set(repo.files) == set(published(board)) | {".gitattributes", "LICENSE", "notes/about.md"}
    assert repo.files["LICENSE"] == b"mine"
    assert "deleted plot.png" in out and "left 2 files in the repo that vlbench did not write: LICENSE, notes/about.md" in out


def test_new_space_is_static_with_its_front_matter(hub: HubStandIn, board: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The token `hf auth login` saved is found (no HF_TOKEN); the Space is created with the static
    SDK, and its README (the hub's own, replaced) carries sdk: static and the title."""
    token_file = Path(hub_constants.HF_TOKEN_PATH)
    token_file.parent.mkdir(parents=True)
    token_file.write_text(TOKEN)
    assert main(["leaderboard", "push", "--repo-id", "org/space", "--repo-type", "space", "--folder", str(board),
                 "--title", "Board: ODmAP & friends"]) == 0
    assert hub.created == [{"name": "space", "organization": "org", "type": "space", "sdk": "static"}]
    repo = hub.repos[("space", "org/space")]
    meta = front_matter(repo.files["README.md"])
    assert 'title: "Board: ODmAP & friends"' in meta.splitlines() and "sdk: static" in meta.splitlines()
    assert "app_file: index.html" in meta.splitlines() and "configs:" not in meta
    assert repo.files["index.html"] == (board / "index.html").read_bytes()
    assert "(created the space)" in capsys.readouterr().out


def test_bad_or_missing_token(hub: HubStandIn, board: Path, capsys: pytest.CaptureFixture[str],
                              monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["leaderboard", "push", "--repo-id", "org/board", "--folder", str(board)]) == 2
    err = capsys.readouterr().err
    assert "no Hugging Face token: set HF_TOKEN or run `hf auth login`" in err
    assert hub.requests == []
    monkeypatch.setenv("HF_TOKEN", "hf_wrong")
    assert main(["leaderboard", "push", "--repo-id", "org/board", "--folder", str(board)]) == 2
    err = capsys.readouterr().err
    assert "cannot reach the Hugging Face hub with this token" in err and "Traceback" not in err
    assert hub.repos == {} and hub.requests == [("GET", "/api/whoami-v2")]


def test_command_line_reads_the_endpoint_and_token_from_the_environment(built_board: Path, tmp_path: Path) -> None:
    """As a maintainer runs it: HF_ENDPOINT and HF_HOME (where `hf auth login` saves the token)
    are read by huggingface_hub itself in a fresh process."""
    home = tmp_path / "hf-home"
    home.mkdir()
    (home / "token").write_text(TOKEN)
    env = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH")}
    with running_standin() as standin:
        env.update(HF_ENDPOINT=standin.url, HF_HOME=str(home), HF_HUB_OFFLINE="0")
        done = subprocess.run([sys.executable, "-m", "vlbench", "leaderboard", "push", "--repo-id", "org/cli",
                               "--folder", str(built_board)], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=300)
    assert done.returncode == 0, done.stderr
    assert "(created the dataset)" in done.stdout
    assert set(standin.repos[("dataset", "org/cli")].files) == set(published(built_board)) | {".gitattributes"}


def test_readme_front_matter_replaces_an_existing_block() -> None:
    readme = "---\ntitle: old\n---\n\n# Board\n"
    out = readme_for_hub(readme, "space", "new")
    assert out.count("---\n") == 2 and "title: old" not in out and out.endswith("# Board\n")
    assert readme_for_hub("# Board\n", "dataset", "t").endswith("---\n\n# Board\n")
