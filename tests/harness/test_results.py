"""Result records round-trip."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vlbench.item_table import ItemTable
from vlbench.results import ResultRecord, load_items, save_items


def test_result_round_trip(tmp_path: Path) -> None:
    r = ResultRecord(
        benchmark="coco-5k", task="retrieval", benchmark_version="1.0", harness_version="0.1.0",
        submission_sha256="a" * 64, ground_truth_sha256="b" * 64, meta={"method": "m"},
        scores={"i2t_R@1": 0.5, "RSUM": 300.0}, main_score="RSUM", ci95={"i2t_R@1": [0.4, 0.6]},
        n={"images": 5000}, bootstrap={"resamples": 1000, "seed": 0}, elapsed_s=0.1,
    )
    r.save(tmp_path / "r.json")
    assert ResultRecord.load(tmp_path / "r.json") == r
    assert ResultRecord.from_dict(r.to_dict()) == r


def test_items_round_trip(tmp_path: Path) -> None:
    items = {"q": ItemTable(["x", "y"], ["a", "b"], np.array([[1.0, 0.5], [0.0, 0.25]]))}
    save_items(tmp_path / "i.json", items)
    back = load_items(tmp_path / "i.json")
    assert back["q"].ids == ["x", "y"] and np.array_equal(back["q"].values, items["q"].values)
