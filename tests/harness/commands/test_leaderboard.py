"""`vlbench.commands.leaderboard`: the build and push fronts."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlbench.cli import build_parser
from vlbench.commands.leaderboard import cmd_leaderboard
from vlbench.errors import UsageError


def test_the_group_alone_asks_for_build_or_push() -> None:
    with pytest.raises(UsageError, match="choose 'build' or 'push'"):
        cmd_leaderboard(build_parser().parse_args(["leaderboard"]))


def test_an_empty_submissions_folder_builds_empty_boards(capsys, tmp_path: Path) -> None:
    (tmp_path / "subs").mkdir()
    args = build_parser().parse_args(["leaderboard", "build", "--submissions", str(tmp_path / "subs"), "--out",
                                      str(tmp_path / "board"), "--bootstrap", "0", "--quiet"])
    assert cmd_leaderboard(args) == 0
    assert "0 entries on 0 boards, 0 invalid, 0 skipped; scored 0" in capsys.readouterr().out
