"""The decorrelated benchmarks' prepare refuses a Karpathy file that is not the official one (the
gallery is every caption of every split), and records a forced deviation in the manifest's params."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import deviation_expected
from tests.tasks.decorrelated.test_prepare import BY_ID, TASK, coco_fixture
from vlbench.errors import UsageError


def test_coco_toy_source_refused_then_forced(tmp_path: Path) -> None:
    coco_fixture(tmp_path / "src")
    bench = BY_ID["coco-5k-decorrelated"]
    with pytest.raises(UsageError) as refused:
        TASK.prepare(bench, str(tmp_path / "src"), tmp_path / "data")
    message = str(refused.value)
    assert "is not the source of coco-5k-decorrelated" in message
    assert "captions in the file: expected 616,767, found" in message and "images per split" in message
    assert not (tmp_path / "data").exists()
    with deviation_expected():  # a toy source, forced: the warning is expected
        [path] = TASK.prepare(bench, str(tmp_path / "src"), tmp_path / "data", force=True)
    record = json.loads(path.read_text())["params"]["source_check"]
    assert record["forced"] is True and record["source"].endswith("dataset_coco.json")
    assert "images in split 'test'" in {d["what"] for d in record["deviations"]}


def test_flickr_wants_the_flickr_file(tmp_path: Path) -> None:
    src = tmp_path / "src"
    coco_fixture(src)
    (src / "dataset_coco.json").rename(src / "dataset_flickr30k.json")  # COCO content, Flickr name
    with pytest.raises(UsageError, match="the 'dataset' field: expected 'flickr30k', found 'coco'"):
        TASK.prepare(BY_ID["flickr30k-1k-decorrelated"], str(src), tmp_path / "data")
