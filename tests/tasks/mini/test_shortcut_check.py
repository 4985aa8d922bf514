"""The shortcut check runs end to end on a small world (one epoch) and ranks real gallery ids."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from vlbench.tasks.mini.shortcut_check import train_and_rank  # noqa: E402


def test_one_epoch_on_the_small_world(small_world) -> None:
    out, _ = small_world
    preds = train_and_rank(out, epochs=1, batch=16)
    ds = json.loads((out / "dataset_mini.json").read_text())
    gallery = {str(s["sentid"]) for im in ds["images"] for s in im["sentences"]}
    queries = json.loads((out / "decorrelated" / "queries.json").read_text())["queries"]
    dec = preds["mini-decorrelated"]["image_to_text"]
    assert set(dec) == {str(q["id"]) for q in queries}
    for ranked in dec.values():
        assert len(ranked) == len(set(ranked)) == 10 and set(ranked) <= gallery
    test_ids = {str(im["cocoid"]) for im in ds["images"] if im["split"] == "test"}
    ret = preds["mini-retrieval"]
    assert set(ret["image_to_text"]) == test_ids
    assert all(set(r) <= test_ids for r in ret["text_to_image"].values())
