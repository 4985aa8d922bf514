"""The stand-in hub as the real huggingface_hub client's endpoint, no other network, and the people
of the tests: a maintainer (owner of the board repo) and participants alice, bob and carol."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.hub.standin import MAINTAINER, HubStandIn, Repo, running_standin
from tests.harness.leaderboard.conftest import REPO, forbid_network, mini_random, watchdog
from vlbench.cli import main

BOARD = "org/board"
BOOT = ["--bootstrap", "100"]  # enough resamples for an interval; the suite stays fast


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[HubStandIn]:
    hub_constants = pytest.importorskip("huggingface_hub.constants")
    attempts = forbid_network(monkeypatch)
    with watchdog(600, "a hub intake test"), running_standin() as standin:
        monkeypatch.setattr(hub_constants, "ENDPOINT", standin.url)
        monkeypatch.setattr(hub_constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                            standin.url + "/{repo_id}/resolve/{revision}/{filename}")
        monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setattr(hub_constants, "HF_TOKEN_PATH", str(tmp_path / "hf-home" / "token"))
        monkeypatch.delenv("HF_TOKEN", raising=False)
        monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
        yield standin
    assert attempts == [], f"tried to reach the network: {attempts}"


def random_bytes() -> bytes:
    return (REPO / "submissions" / "mini-retrieval" / "random.json").read_bytes()


@pytest.fixture
def board(hub: HubStandIn) -> Repo:
    """The board's repo: a README, the maintainers' chance-floor entry, a reference list."""
    return hub.add_repo("dataset", BOARD, {
        "README.md": b"# board\n",
        "submissions/mini-retrieval/random.json": random_bytes(),
        "submissions/REFERENCE_ENTRIES": b"mini-retrieval/random.json\n",
    })


def entry(seed: int, method: str, team: str | None = None, benchmark: str = "mini-retrieval") -> bytes:
    meta = {"method": method, **({"team": team} if team is not None else {})}
    return json.dumps(mini_random(benchmark, seed, meta)).encode()


def gzip_bomb(inflated: int) -> bytes:
    """A .json.gz whose text starts like a submission and inflates to `inflated` bytes of spaces."""
    head = b'{"vlbench": 1, "benchmark": "mini-retrieval", "task": "retrieval", "predictions": '
    return gzip.compress(head + b" " * inflated, compresslevel=9)


def as_user(monkeypatch: pytest.MonkeyPatch, token: str) -> None:
    monkeypatch.setenv("HF_TOKEN", token)


def intake(monkeypatch: pytest.MonkeyPatch, *args: str, token: str = MAINTAINER) -> int:
    as_user(monkeypatch, token)
    return main(["leaderboard", "intake", "--repo-id", BOARD, *BOOT, *args])


def submit(monkeypatch: pytest.MonkeyPatch, path: Path, token: str, *args: str) -> int:
    as_user(monkeypatch, token)
    return main(["submit", str(path), "--repo-id", BOARD, *args])


def maintainer_comments(repo: Repo, num: int) -> list[str]:
    return repo.comments(num, "maintainer")


def subprocess_env(hub: HubStandIn, home: Path, token: str = MAINTAINER) -> dict[str, str]:
    """A fresh process reaches the stand-in as a maintainer's machine reaches the hub: HF_ENDPOINT
    and HF_TOKEN, read by huggingface_hub itself."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING_FACE"))}
    env.update(HF_ENDPOINT=hub.url, HF_TOKEN=token, HF_HOME=str(home), HF_HUB_DISABLE_TELEMETRY="1")
    return env
