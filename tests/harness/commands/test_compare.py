"""`vlbench.commands.compare`: the paired test between two result records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlbench.backports import strict_zip
from vlbench.cli import build_parser
from vlbench.commands.compare import cmd_compare
from vlbench.errors import UsageError
from vlbench.scoring import score_file, write_evaluation


def _records(submissions, retrieval_data: Path, tmp_path: Path) -> tuple[Path, Path]:
    paths = []
    for sub, name in strict_zip(submissions, ("a", "b")):
        path = tmp_path / f"{name}.result.json"
        write_evaluation(score_file(sub, data_dir=retrieval_data, bootstrap=0, out=path), path)
        paths.append(path)
    return paths[0], paths[1]


def test_the_perfect_run_beats_the_random_one(capsys, submissions, retrieval_data: Path, tmp_path: Path) -> None:
    a, b = _records(submissions, retrieval_data, tmp_path)
    args = build_parser().parse_args(["compare", str(a), str(b), "--bootstrap", "200", "--json"])
    assert cmd_compare(args) == 0
    rows = {r["metric"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["i2t_R@1"]["a"] == 1.0 and rows["i2t_R@1"]["difference"] > 0.5 and rows["i2t_R@1"]["p_value"] < 0.05


def test_a_missing_per_item_file_is_named(submissions, retrieval_data: Path, tmp_path: Path) -> None:
    a, b = _records(submissions, retrieval_data, tmp_path)
    per_item = json.loads(b.read_text())["per_item"]
    (tmp_path / Path(per_item).name).unlink()
    with pytest.raises(UsageError, match="which is missing"):
        cmd_compare(build_parser().parse_args(["compare", str(a), str(b)]))
