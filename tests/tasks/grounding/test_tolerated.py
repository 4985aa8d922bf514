"""What is accepted with a warning: boxes past the image (scored unclipped, as MDETR scores them)
and partial submissions (left-out phrases are misses; refused under --strict)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import deviation_expected
from vlbench.cli import main as vlbench
from vlbench.errors import InvalidSubmission
from vlbench.registry import registry
from vlbench.scoring import score_file
from vlbench.submission import validate
from vlbench.tasks.grounding import TASK
from vlbench.tasks.grounding.reference import box_iou

BENCH = "flickr30k-entities-test"

# Gradable phrases of the hand tree (conftest.write_hand_tree): 100/0: 0, 4; 100/2: 0, 3, 6, 9;
# 200/0: 0. Image 100 is 200x100, image 200 is 100x100; chain 7 (200/0/0) is [20, 20, 60, 60].
FULL = {
    "100": {
        "0": {"0": {"boxes": [[100, 10, 140, 50]]}, "4": {"boxes": [[60, 60, 100, 100]]}},
        "2": {"0": {"boxes": [[10, 10, 140, 50]]}, "3": {"boxes": []},
              "6": {"boxes": [[60, 60, 100, 100]]}, "9": {"boxes": [[1, 1, 200, 100]]}},
    },
    # 40 px past the bottom of the 100x100 image. Unclipped IoU with [20, 20, 60, 60] is
    # 1600 / 4800 (a miss); clipped to the image it would be 1600 / 3200 = 0.5 (a hit).
    "200": {"0": {"0": {"boxes": [[20, 20, 60, 140]]}}},
}


@pytest.fixture
def data_dir(hand_tree, tmp_path):
    out = tmp_path / "data"
    with deviation_expected(BENCH):  # the hand-made tree is not the official release
        TASK.prepare(registry().benchmark(BENCH), str(hand_tree), out, force=True)
    return out


def write(tmp_path, predictions, name="sub.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"vlbench": 1, "benchmark": BENCH, "task": "grounding",
                                "meta": {"method": "test"}, "predictions": predictions}))
    return path


def test_box_past_the_image_is_scored_unclipped_with_a_warning(data_dir, tmp_path):
    iou = box_iou(np.array([[20.0, 20, 60, 140]]), np.array([[20.0, 20, 60, 60]]))[0, 0]
    assert iou == 1 / 3  # what MDETR's IoU gives the unclipped box
    ev = score_file(write(tmp_path, FULL), data_dir=data_dir, bootstrap=0)
    assert ev.result.scores["R@1/vehicles"] == 0.0  # a miss: clipping would have made it a hit
    assert ev.result.extra["boxes_outside_image"] == {"count": 1, "entirely": 0,
                                                      "max_overshoot_px": 40.0}
    (warning,) = ev.result.extra["warnings"]
    assert warning.startswith("1 of 6 boxes extend past the image (by up to 40.0 px")
    assert "unclipped" in warning


def test_boxes_within_the_tolerance_or_wholly_outside_are_counted_right(data_dir, tmp_path):
    preds = json.loads(json.dumps(FULL))
    preds["200"]["0"]["0"]["boxes"] = [[20, 20, 60, 101], [0, 0, 10, 10], [150, 150, 300, 300],
                                       [-5, 20, 60, 60]]
    ev = score_file(write(tmp_path, preds), data_dir=data_dir, bootstrap=0)
    # 101 is within the 1-pixel tolerance of the 100-pixel height (1-based XML boxes reach it).
    assert ev.result.extra["boxes_outside_image"] == {"count": 2, "entirely": 1,
                                                      "max_overshoot_px": 200.0}


def test_most_boxes_outside_suggests_resized_coordinates(data_dir, tmp_path):
    preds = {"200": {"0": {"0": {"boxes": [[200, 200, 400, 400], [20, 20, 60, 60],
                                           [300, 10, 800, 500]]}}}}
    ev = score_file(write(tmp_path, preds), data_dir=data_dir, bootstrap=0)
    assert any("resized input" in w for w in ev.result.extra["warnings"])


def test_inverted_boxes_are_still_refused_and_only_they(data_dir, tmp_path):
    preds = json.loads(json.dumps(FULL))
    preds["200"]["0"]["0"]["boxes"] = [[20, 20, 10, 140], [20, 20, 60, 140]]
    with pytest.raises(InvalidSubmission) as exc:
        score_file(write(tmp_path, preds), data_dir=data_dir, bootstrap=0)
    assert [(i.code, i.pointer) for i in exc.value.issues] == [
        ("box_order", "/predictions/200/0/0/boxes/0")]


def test_complete_submission_has_no_coverage_warning(data_dir, tmp_path):
    ev = score_file(write(tmp_path, FULL), data_dir=data_dir, bootstrap=0, strict=True)
    assert ev.result.extra["covered"] == {"sentences": 3, "sentences_total": 3,
                                          "phrases": 7, "phrases_total": 7}
    assert not any("covers" in w for w in ev.result.extra["warnings"])


def test_partial_submission_warns_with_coverage_and_records_it(data_dir, tmp_path):
    preds = json.loads(json.dumps(FULL))
    del preds["100"]["2"]["6"], preds["100"]["2"]["9"], preds["200"]
    ev = score_file(write(tmp_path, preds), data_dir=data_dir, bootstrap=0)
    assert ev.result.extra["covered"] == {"sentences": 2, "sentences_total": 3,
                                          "phrases": 4, "phrases_total": 7}
    assert ev.result.extra["phrases_missing"] == 3
    assert ("the submission covers 2 of 3 sentences and 4 of 7 phrases; the 3 phrases left out "
            "are scored as misses") in ev.result.extra["warnings"]
    assert ev.result.scores["UB"] == 2 / 7  # 100/0/0 and 100/0/4 hit; the rest are misses


def test_partial_submission_is_refused_under_strict(data_dir, tmp_path, capsys):
    preds = json.loads(json.dumps(FULL))
    del preds["200"]
    path = write(tmp_path, preds)
    with pytest.raises(InvalidSubmission) as exc:
        validate(path, data_dir=data_dir, strict=True)
    assert [(i.code, i.pointer) for i in exc.value.issues] == [("partial_submission", "/predictions")]
    out = tmp_path / "result.json"
    rc = vlbench(["score", str(path), "--data-dir", str(data_dir), "--strict", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 1 and "[partial_submission]" in err and "6 of 7 phrases" in err
    assert not out.exists()
    assert vlbench(["validate", str(path), "--data-dir", str(data_dir), "--strict"]) == 1
    assert vlbench(["validate", str(path), "--data-dir", str(data_dir)]) == 0


def test_cli_prints_the_warnings(data_dir, tmp_path, capsys):
    preds = json.loads(json.dumps(FULL))
    del preds["100"]["0"]
    rc = vlbench(["score", str(write(tmp_path, preds)), "--data-dir", str(data_dir),
                  "--bootstrap", "0"])
    err = capsys.readouterr().err
    assert rc == 0
    assert "warning: 1 of 4 boxes extend past the image" in err
    assert "warning: the submission covers 2 of 3 sentences and 5 of 7 phrases" in err
