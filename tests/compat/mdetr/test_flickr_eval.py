"""vlbench.compat.mdetr.FlickrEvaluator driven as MDETR's engine drives it, against
tasks/grounding/reference.py (a per-phrase loop written as MDETR's evaluator works) on the
grounding fixtures' trees and the real Flickr30k Entities test set: the same `results`, the same
summary dict, the same printed table, the same messages and errors."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import random
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pytest
from compat_drivers import mdetr_engine
from compat_inputs import entity_trees

from vlbench.compat.mdetr import Flickr30kEntitiesRecallEvaluator, FlickrEvaluator
from vlbench.tasks.grounding.reference import MdetrStyleEvaluator

REALDATA = Path(os.environ.get("VLBENCH_REALDATA", Path(__file__).resolve().parents[4] / "shared" / "realdata"))
ENTITIES = REALDATA / "flickr30k_entities" / "sentences_annotations_test_val.tar.gz"


def records_for(reference: MdetrStyleEvaluator, seed: int) -> list[dict]:
    """One record per scored sentence, in a shuffled order, with 0-12 boxes per phrase near a GT
    box of its chain (some exact, some at IoU around the threshold, some far), ints and floats."""
    rng = random.Random(seed)
    out = []
    for img, sentences in reference.sentences.items():
        for sid, phrases in enumerate(sentences):
            if phrases is None:
                continue
            per_phrase = []
            for phrase in phrases:
                boxes = []
                for _ in range(rng.choice([0, 1, 1, 3, 5, 10, 12])):
                    g = rng.choice(reference.boxes[img][phrase["phrase_id"]])
                    s = rng.choice([0, 0, 1, 4, 15, 60])
                    x1, y1 = g[0] + rng.gauss(0, s), g[1] + rng.gauss(0, s)
                    box = [x1, y1, max(g[2] + rng.gauss(0, s), x1 + 1), max(g[3] + rng.gauss(0, s), y1 + 1)]
                    boxes.append([round(v) for v in box] if s == 0 else box)
                per_phrase.append(boxes)
            out.append({"image_id": int(img) if rng.random() < 0.5 else img, "sentence_id": sid,
                        "boxes": per_phrase})
    rng.shuffle(out)
    return out


def expected_summary(results: dict[int, dict[str, float]]) -> tuple[dict[str, float], str]:
    """MDETR's summarize() on a report: the score dict and the printed table."""
    from prettytable import PrettyTable

    table = PrettyTable()
    cats = sorted(next(iter(results.values())))
    table.field_names = ["Recall@k", *cats]
    score = {}
    for k, v in results.items():
        header = "Upper_bound" if k == -1 else f"Recall@{k}"
        score.update({f"{header}_{c}": v[c] for c in cats})
        table.add_row([header, *[v[c] for c in cats]])
    return score, f"{table}\n"


@pytest.mark.parametrize("merge", [False, True])
@pytest.mark.parametrize(("topk", "thresh"), [((1, 5, 10, -1), 0.5), ([1, -1], 0.3), ((3,), 0.7)])
def test_engine_driver_equals_the_reference_on_random_trees(tmp_path, merge, topk, thresh):
    tree = tmp_path / "f30k"
    entity_trees.write_random_tree(tree, 40, seed=len(topk) + int(merge))
    reference = MdetrStyleEvaluator(tree, "test", merge_boxes=merge)
    records = records_for(reference, seed=7)
    want = reference.evaluate(records, topk=tuple(topk), iou_thresh=thresh)
    got = mdetr_engine(FlickrEvaluator(tree, "test", top_k=topk, iou_thresh=thresh, merge_boxes=merge), records)
    assert got["results"] == want
    assert [list(v) for v in got["results"].values()] == [list(v) for v in want.values()]
    score, table = expected_summary(want)
    assert got["flickr"] == score and list(got["flickr"]) == list(score)
    assert got["printed"] == table


def test_hand_tree_counts_and_box_types(tmp_path):
    tree = entity_trees.write_hand_tree(tmp_path / "f30k")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        ev = Flickr30kEntitiesRecallEvaluator(tree, "test")
    # MDETR's verbose lines: 7 scored phrases (chains with a box) in 3 sentences
    assert buf.getvalue().splitlines() == ["Flickr subset contains 2 images", "Loading annotations...",
                                           "Loading annotations...", "There are 7 phrases in 3 sentences to evaluate"]
    assert ev.all_ids == ["100_0", "100_2", "200_0"]
    exact = [{"image_id": 100, "sentence_id": 0, "boxes": [[[100, 10, 140, 50]], [[60, 60, 100, 100]]]},
             {"image_id": "100", "sentence_id": 2,
              "boxes": [[[0, 0, 1, 1], [10, 10, 50, 50]], np.array([[100.0, 10, 140, 50]]), [], [[1, 1, 200, 100]]]},
             {"image_id": 200, "sentence_id": 0, "boxes": [[[20.0, 20.0, 60.0, 60.0]]]}]
    report = ev.evaluate(exact)
    # "A man" hits at rank 2 only; "the pet" has an empty list (a miss)
    assert report[1] == {"all": 5 / 7, "people": 2 / 3, "animals": 1 / 2, "other": 1.0, "scene": 1.0, "vehicles": 1.0}
    assert report[-1]["all"] == 6 / 7 and report[-1]["people"] == 1.0
    assert report == MdetrStyleEvaluator(tree, "test").evaluate(
        [{**r, "boxes": [np.asarray(b).tolist() for b in r["boxes"]]} for r in exact])


def test_messages_and_errors_as_mdetr(tmp_path):
    tree = entity_trees.write_hand_tree(tmp_path / "f30k")
    ok = {"image_id": 200, "sentence_id": 0, "boxes": [[[20, 20, 60, 60]]]}
    ev = FlickrEvaluator(tree, "test")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(RuntimeError, match="^Missing predictions$"):
        ev.evaluator.evaluate([ok, ok, {"image_id": 200, "sentence_id": 1, "boxes": [[[1, 1, 2, 2]]]},
                               {"image_id": 999, "sentence_id": 0, "boxes": []}])
    assert out.getvalue().splitlines() == [
        "Warning, multiple predictions found for sentence0 in image 200",
        "Warning, in image 200 we were not expecting predictions for sentence 1. Ignoring them.",
        "ERROR, the number of evaluated sentence doesn't match. Missing predictions:",
        "\t sentence 0 in image 100", "\t sentence 2 in image 100",
    ]
    with pytest.raises(RuntimeError, match="got 2 predictions, expected 1 for sentence 0 in image 200"):
        ev.evaluator.evaluate([{**ok, "boxes": [[], []]}])
    rest = [{"image_id": 100, "sentence_id": 0, "boxes": [[], []]},
            {"image_id": 100, "sentence_id": 2, "boxes": [[], [], [], []]}]
    with pytest.raises(ValueError, match="phrase 0 of sentence 200_0"):
        ev.evaluator.evaluate([*rest, {**ok, "boxes": [[20, 20, 60, 60]]}])  # one flat box, not a list of boxes
    with pytest.raises(AssertionError, match="Wrong flickr subset"):
        FlickrEvaluator(tree, "testing")
    with pytest.raises(AssertionError):
        FlickrEvaluator(tree, "test", top_k=5)
    with pytest.raises(ValueError, match="top_k"):
        FlickrEvaluator(tree, "test", top_k=(0, 1))
    with pytest.raises(FileNotFoundError, match="val.txt"):
        FlickrEvaluator(tmp_path, "val")


def test_the_tree_is_cached_by_its_files(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("VLBENCH_COMPAT_CACHE", str(cache))
    tree = entity_trees.write_hand_tree(tmp_path / "f30k")
    FlickrEvaluator(tree, "test")
    files = sorted((cache / "flickr30k_entities").iterdir())
    assert len(files) == 1 and files[0].name.startswith("test-")
    FlickrEvaluator(tree, "test")  # read back from the cache
    assert sorted((cache / "flickr30k_entities").iterdir()) == files
    # a changed annotation makes a new key, and the new boxes are used
    xml = tree / "Annotations" / "200.xml"
    xml.write_text(xml.read_text().replace("<xmin>20</xmin>", "<xmin>0</xmin>"))
    ev = FlickrEvaluator(tree, "test")
    assert len(list((cache / "flickr30k_entities").iterdir())) == 2
    records = [{"image_id": 100, "sentence_id": 0, "boxes": [[], []]},
               {"image_id": 100, "sentence_id": 2, "boxes": [[], [], [], []]},
               {"image_id": 200, "sentence_id": 0, "boxes": [[[0, 20, 60, 60]]]}]
    assert ev.evaluator.evaluate(records)[1]["vehicles"] == 1.0


@pytest.fixture(scope="module")
def real_tree(tmp_path_factory):
    if not ENTITIES.is_file():
        pytest.skip(f"real data not found in {REALDATA}")
    tree = tmp_path_factory.mktemp("entities")
    with tarfile.open(ENTITIES) as tar:
        tar.extractall(tree, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(tree)
    for split in ("test", "val"):
        shutil.copy(ENTITIES.parent / f"{split}.txt", tree / f"{split}.txt")
    return tree


@pytest.mark.parametrize("merge", [False, True])
@pytest.mark.parametrize("preds", ["mdetr_preds_test_jitter.json.gz", "mdetr_preds_test_var_unclipped.json.gz"])
def test_real_test_set_equals_the_reference(real_tree, preds, merge):
    records = json.loads(gzip.decompress((REALDATA / "derived" / preds).read_bytes()))
    want = MdetrStyleEvaluator(real_tree, "test", merge_boxes=merge).evaluate(records)
    got = mdetr_engine(FlickrEvaluator(real_tree, "test", merge_boxes=merge), records, batch=64)
    assert got["results"] == want and len(want[1]) == 9  # all + the 8 types
    score, table = expected_summary(want)
    assert got["flickr"] == score and got["printed"] == table


def test_real_val_set_counts(real_tree):
    ev = Flickr30kEntitiesRecallEvaluator(real_tree, "val", verbose=False)
    assert len(ev.all_ids) == 4986 and ev._split.n_phrases == 14433
