"""`vlbench submit` and `vlbench leaderboard intake` without the hub extra: the core imports, the
parser builds, and the commands say in one sentence what to install (the commands themselves are
tested against the stand-in hub in tests/harness/hub/)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.harness.hub.conftest import BOARD, entry


def test_without_the_hub_extra_one_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The core imports without huggingface_hub; the hub commands say what to install."""
    import subprocess

    probe = ("import sys; sys.modules['huggingface_hub'] = None\n"
             "import vlbench.cli, vlbench.hub.intake, vlbench.hub.submit, vlbench.hub.review\n"
             "vlbench.cli.build_parser()\n"
             "assert sys.modules['huggingface_hub'] is None\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    from vlbench.cli import main

    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    (tmp_path / "ok.json").write_bytes(entry(6, "Ok"))
    for argv in (["submit", str(tmp_path / "ok.json"), "--repo-id", BOARD], ["leaderboard", "intake", "--repo-id", BOARD]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err == "error: the hub commands need huggingface_hub 0.25 or newer: pip install 'vlbench[hub]'\n"
