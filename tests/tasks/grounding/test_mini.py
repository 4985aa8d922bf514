"""The shipped mini-grounding ground truth and its chance floor, through the harness."""

from __future__ import annotations

import json

import numpy as np

from vlbench.errors import IssueList
from vlbench.ground_truth import locate_ground_truth
from vlbench.registry import registry
from vlbench.scoring import score_file
from vlbench.tasks.grounding import TASK
from vlbench.tasks.grounding.scores import metric_keys


def _gt():
    benchmark = registry().benchmark("mini-grounding")
    return benchmark, TASK.load_ground_truth(benchmark, locate_ground_truth(benchmark, None))


def test_mini_uses_the_world_entity_types():
    benchmark, gt = _gt()
    assert gt.types == benchmark.options["entity_types"] == ("polygons", "curves", "symbols")
    assert {m.key for m in benchmark.metrics} == set(metric_keys(gt.types))
    assert gt.type_member.sum(axis=0).min() > 0


def test_perfect_submissions_score_one_under_their_protocol(tmp_path):
    benchmark, gt = _gt()
    first_gt_box = gt.boxes[gt.c_box_start[gt.p_chain]]
    for protocol, boxes in (("", first_gt_box), ("merged_", gt.merged[gt.p_chain])):
        predictions: dict = {}
        for row in range(gt.n_phrases):
            image = gt.image_ids[gt.p_image[row]]
            predictions.setdefault(image, {}).setdefault(str(gt.p_sentence[row]), {})[
                str(gt.p_first_word[row])] = {"boxes": [boxes[row].tolist()]}
        path = tmp_path / f"perfect{protocol}.json"
        path.write_text(json.dumps({"vlbench": 1, "benchmark": benchmark.id, "task": "grounding",
                                    "meta": {"method": "oracle"}, "predictions": predictions}))
        scores = score_file(path, bootstrap=0).result.scores
        assert scores[f"{protocol}R@1"] == 1.0
        assert all(scores[f"{protocol}R@1/{t}"] == 1.0 for t in gt.types)


def test_random_floor_is_far_below_the_oracle():
    benchmark, gt = _gt()
    predictions = TASK.random_predictions(gt, benchmark, seed=0)
    issues = IssueList()
    parsed = TASK.check(predictions, gt, benchmark, issues)
    assert not issues
    scores = TASK.score(parsed, gt, benchmark).scores
    assert scores["R@1"] < 0.05 and scores["UB"] < 0.2
    assert np.isclose(scores["R@10"], scores["UB"])  # exactly 10 boxes per phrase
