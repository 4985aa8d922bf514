"""`vlbench.limits`: the bounds the command line and the Python API both take (the command line
does not import the API for them), and each refuses one past them the same way."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import vlbench
from vlbench import limits
from vlbench.cli import main

HARNESS = Path(__file__).resolve().parents[2] / "harness"
RANDOM = HARNESS.parent / "submissions" / "mini-retrieval" / "random.json"


def test_the_command_line_takes_its_bounds_from_limits_not_from_the_api() -> None:
    tree = ast.parse((HARNESS / "cli.py").read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "vlbench.limits" in imported and "vlbench.api" not in imported


@pytest.mark.parametrize(("option", "keyword", "bound"), [
    ("--bootstrap", "bootstrap", limits.MAX_RESAMPLES),
    ("--seed", "seed", limits.MAX_SEED),
    ("--max-errors", "max_errors", limits.MAX_ERRORS),
    ("--max-bytes", "max_bytes", limits.MAX_FILE_BYTES),
])
def test_one_past_a_bound_is_refused_by_both(option: str, keyword: str, bound: int,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_code:
        main(["score", str(RANDOM), option, str(bound + 1)])
    assert exit_code.value.code == 2 and f"{bound:,}" in capsys.readouterr().err
    with pytest.raises(vlbench.UsageError, match=f"{bound:,}"):
        vlbench.score(str(RANDOM), **{keyword: bound + 1})


def test_the_default_number_of_listed_problems_has_one_home() -> None:
    from vlbench.cli import build_parser
    from vlbench.submission import ValidationOptions

    args = build_parser().parse_args(["validate", str(RANDOM)])
    assert args.max_errors == ValidationOptions().max_errors == limits.DEFAULT_MAX_ERRORS
