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
from vlbench.progress import bar, enabled, progress, stage

REPO = Path(__file__).resolve().parents[2]


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


def test_counted_bar_follows_the_same_switch(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.delenv("VLBENCH_PROGRESS", raising=False)  # and stderr is not a terminal here
    with bar(3, "quiet count", unit="img") as shown:
        shown.update(2)
        shown.set_postfix(loss="0.5")
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("VLBENCH_PROGRESS", "1")
    with bar(3, "counted", unit="img") as shown:
        shown.update(2)
        shown.set_postfix(loss="0.5")
    err = capsys.readouterr().err
    assert "counted" in err and "2/3" in err and "loss=0.5" in err
    # the caller's own reasons to stay quiet (--quiet, a rank other than 0) still turn it off
    with bar(3, "not the main process", show=False) as shown:
        shown.update(3)
    assert list(progress(range(3), desc="quiet loop", show=False)) == [0, 1, 2]
    assert capsys.readouterr().err == ""
    for off in ("0", "off", "no"):
        monkeypatch.setenv("VLBENCH_PROGRESS", off)
        with bar(3, "switched off") as shown:
            shown.update(3)
        assert capsys.readouterr().err == ""


def test_every_bar_comes_from_vlbench_progress() -> None:
    """One place decides whether a bar is shown: no other module builds a tqdm bar of its own."""
    own = REPO / "harness" / "progress.py"
    builders = [str(p.relative_to(REPO)) for folder in ("harness", "tasks", "baselines", "benchmarks")
                for p in sorted((REPO / folder).rglob("*.py"))
                if p != own and ("from tqdm" in p.read_text(encoding="utf-8") or "import tqdm" in p.read_text(encoding="utf-8"))]
    assert builders == []


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
