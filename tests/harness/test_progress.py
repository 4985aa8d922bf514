"""Progress is shown on a terminal and stays quiet in pipes."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import karpathy_doc
from vlbench.progress import enabled, progress, stage


def test_quiet_without_a_terminal(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.delenv("VLBENCH_PROGRESS", raising=False)
    items = [1, 2, 3]
    assert not enabled() and progress(items, desc="x") is items
    with stage("long step"):
        pass
    assert capsys.readouterr().err == ""


def test_forced_on_and_off(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("VLBENCH_PROGRESS", "1")
    assert list(progress(range(3), desc="counting")) == [0, 1, 2]
    with stage("long step"):
        pass
    err = capsys.readouterr().err
    assert "counting" in err and "long step ..." in err and "long step: done in" in err
    monkeypatch.setenv("VLBENCH_PROGRESS", "0")
    assert not enabled()


def _prepare_argv(tmp_path: Path) -> list[str]:
    (tmp_path / "dataset_flickr30k.json").write_text(json.dumps(karpathy_doc(10, dataset="flickr30k")))
    return [sys.executable, "-m", "vlbench", "data", "prepare", "flickr30k-1k", "--source", str(tmp_path),
            "--data-dir", str(tmp_path / "d"), "--force"]


def test_data_prepare_on_a_terminal_and_in_a_pipe(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("VLBENCH_PROGRESS", "TQDM_DISABLE")}
    piped = subprocess.run(_prepare_argv(tmp_path), capture_output=True, text=True, env=env, timeout=300)
    assert piped.returncode == 0, piped.stderr
    assert f"preparing flickr30k-1k from {tmp_path} ..." not in piped.stderr
    assert "done in" not in piped.stderr

    controller, terminal = pty.openpty()
    proc = subprocess.Popen(_prepare_argv(tmp_path), stdin=terminal, stdout=terminal, stderr=terminal,
                            env=env)
    os.close(terminal)
    seen = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed: the process ended
            break
        if not chunk:
            break
        seen += chunk
    os.close(controller)
    assert proc.wait(timeout=300) == 0, seen.decode(errors="replace")
    text = seen.decode(errors="replace")
    assert f"preparing flickr30k-1k from {tmp_path} ..." in text and "done in" in text
