"""`vlbench data mini` shows progress on a terminal for every step that takes seconds."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tasks.mini.conftest import SMALL
from vlbench.tasks.mini import write_mini_benchmark


def test_every_long_step_shows_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("VLBENCH_PROGRESS", "1")  # as on a terminal
    write_mini_benchmark(tmp_path / "mini", config=SMALL, images=True)
    err = capsys.readouterr().err
    for step in ("mini world captions", "mini world images", "Flickr30k Entities files",
                 "choosing the decorrelated queries", "decorrelated query images"):
        assert step in err, step
    monkeypatch.setenv("VLBENCH_PROGRESS", "0")  # in a pipe or a log: quiet
    write_mini_benchmark(tmp_path / "mini", config=SMALL, images=False)
    assert capsys.readouterr().err == ""
