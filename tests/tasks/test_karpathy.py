"""Karpathy split loading: local files, folders, gzip, and a hub repo holding the json file
(hub dataset tables: test_hub_tables.py)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.conftest import karpathy_doc
from vlbench.errors import UsageError
from vlbench.tasks.karpathy import load_karpathy, parse_karpathy
from vlbench.tasks.retrieval.ground_truth import build_ground_truth


def test_local_file_folder_and_gzip(tmp_path: Path) -> None:
    doc = karpathy_doc(4)
    (tmp_path / "dataset_coco.json").write_text(json.dumps(doc))
    (tmp_path / "copy.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
    assert load_karpathy(tmp_path, "dataset_coco.json") == doc
    assert load_karpathy(tmp_path / "dataset_coco.json", "x") == doc
    assert load_karpathy(tmp_path / "copy.json.gz", "x") == doc
    with pytest.raises(UsageError):
        load_karpathy(tmp_path / "nothing-here", "dataset_coco.json")


def test_ids_coco_and_flickr() -> None:
    coco = parse_karpathy(karpathy_doc(2))
    flickr = parse_karpathy(karpathy_doc(2, dataset="flickr30k"))
    assert coco[0].id == "100000" and flickr[0].id == "1000"
    assert coco[0].captions[0].id == "700000" and coco[0].captions[0].raw == "image 0 caption 0."


def test_sentids_fix_caption_order() -> None:
    doc = karpathy_doc(1, n_other=0, captions=6)
    entry = doc["images"][0]
    entry["sentences"].reverse()  # sentences listed out of order; sentids says the order
    gt = build_ground_truth(doc, "test", 5)
    assert gt["captions"] == [str(700000 + j) for j in range(5)]


def test_hub_raw_file(monkeypatch, tmp_path: Path) -> None:
    huggingface_hub = pytest.importorskip("huggingface_hub")

    path = tmp_path / "dataset_coco.json"
    path.write_text(json.dumps(karpathy_doc(3)))
    calls = []

    def fake_download(repo_id, filename, repo_type, revision=None):
        calls.append((repo_id, filename, repo_type))
        return str(path)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    doc = load_karpathy("someone/coco-karpathy", "dataset_coco.json")
    assert calls == [("someone/coco-karpathy", "dataset_coco.json", "dataset")]
    assert len(parse_karpathy(doc)) == 12
