"""`vlbench.commands.tasks`: every registered benchmark, with its data status."""

from __future__ import annotations

import json
from pathlib import Path

from vlbench.cli import build_parser
from vlbench.commands.tasks import cmd_tasks
from vlbench.registry import registry


def test_every_benchmark_is_listed_with_its_data_status(capsys, retrieval_data: Path) -> None:
    assert cmd_tasks(build_parser().parse_args(["tasks", "--data-dir", str(retrieval_data), "--json"])) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["benchmark"] for r in rows} == set(registry().benchmarks)
    assert [(r["task"], r["benchmark"]) for r in rows] == sorted((r["task"], r["benchmark"]) for r in rows)
    by_id = {r["benchmark"]: r for r in rows}
    assert by_id["coco-5k"]["data"] == "present" and by_id["mini-retrieval"]["data"] == "present"
    assert by_id["coco-5k"]["main_score"] == registry().benchmark("coco-5k").main_score


def test_the_table_names_the_data_folder(capsys, tmp_path: Path) -> None:
    assert cmd_tasks(build_parser().parse_args(["tasks", "--data-dir", str(tmp_path)])) == 0
    out = capsys.readouterr().out
    assert "coco-5k" in out and f"data folder: {tmp_path}" in out and "description" not in out
