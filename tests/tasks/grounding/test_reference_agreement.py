"""vlbench's vectorised scorer against the per-phrase loop written as MDETR's evaluator works."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from tests.conftest import deviation_expected
from vlbench.registry import registry
from vlbench.submission import validate_document
from vlbench.tasks.grounding import TASK
from vlbench.tasks.grounding.importers import from_mdetr
from vlbench.tasks.grounding.metrics import box_best_iou, pairwise_iou
from vlbench.tasks.grounding.reference import MdetrStyleEvaluator, box_iou

BENCH = "flickr30k-entities-test"
TYPES = ["people", "clothing", "bodyparts", "animals", "vehicles", "instruments", "scene", "other"]


def test_pairwise_iou_is_bit_identical_to_the_matrix_form():
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 50, (200, 2))
    a = np.hstack([xy, xy + rng.uniform(0.1, 30, (200, 2))])
    b = np.round(a[::-1] + rng.normal(0, 3, a.shape))  # integer GT-like boxes, some overlapping
    b[:, 2:] = np.maximum(b[:, 2:], b[:, :2] + 1)
    matrix = box_iou(a, b)
    ii, jj = np.meshgrid(np.arange(200), np.arange(200), indexing="ij")
    flat = pairwise_iou(a[ii.ravel()].T, b[jj.ravel()].T).reshape(200, 200)
    assert np.array_equal(matrix, flat)


def test_box_best_iou_groups_pairs_by_phrase():
    gt = np.array([[0, 0, 10, 10], [20, 20, 30, 30], [0, 0, 5, 5]], dtype=float)
    pred = np.array([[20, 20, 30, 30], [0, 0, 5, 5], [0, 0, 10, 10]], dtype=float)
    # phrase 0 -> gt[0:2], phrase 1 -> gt[2:3]
    best = box_best_iou(pred.T, np.array([0, 0, 1]), gt.T, np.array([0, 2]), np.array([2, 1]))
    np.testing.assert_array_equal(best, [1.0, 0.25, 0.25])


def _mdetr_predictions(evaluator, rng: random.Random, sizes):
    preds = []
    for img, sentences in evaluator.sentences.items():
        w, h = sizes[img]
        for sid, phrases in enumerate(sentences):
            if phrases is None or rng.random() < 0.1:
                continue  # some sentences missing
            per_phrase = []
            for phrase in phrases:
                gts = evaluator.boxes[img][phrase["phrase_id"]]
                boxes = []
                for _ in range(rng.choice([0, 1, 3, 5, 10, 12])):
                    g = rng.choice(gts)
                    s = rng.choice([0, 0.5, 2, 10, 40])
                    x1 = min(max(g[0] + rng.gauss(0, s), 0), w - 2)
                    y1 = min(max(g[1] + rng.gauss(0, s), 0), h - 2)
                    x2 = min(max(g[2] + rng.gauss(0, s), x1 + 1), w)
                    y2 = min(max(g[3] + rng.gauss(0, s), y1 + 1), h)
                    box = [x1, y1, x2, y2]
                    boxes.append([round(v) for v in box] if rng.random() < 0.3 else box)
                per_phrase.append(boxes)
            preds.append({"image_id": int(img), "sentence_id": sid, "boxes": per_phrase})
    return preds


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agrees_with_the_mdetr_style_loop_on_random_trees(tmp_path, random_tree, seed):
    tree = tmp_path / "tree"
    random_tree(tree, 40, seed)
    data = tmp_path / "data"
    benchmark = registry().benchmark(BENCH)
    with deviation_expected(BENCH):  # a made-up tree, not the official release
        TASK.prepare(benchmark, str(tree), data, force=True)
    gt = validate_document(
        {"vlbench": 1, "benchmark": BENCH, "task": "grounding", "meta": {"method": "m"},
         "predictions": {}}, data_dir=data
    ).ground_truth
    sizes = {i: (gt.width[k], gt.height[k]) for k, i in enumerate(gt.image_ids)}
    for merge in (False, True):
        ref_eval = MdetrStyleEvaluator(tree, "test", merge_boxes=merge)
        mdetr = _mdetr_predictions(ref_eval, random.Random(seed), sizes)
        for threshold in (0.5, 0.7):
            reference = ref_eval.evaluate(mdetr, iou_thresh=threshold)
            sub = validate_document(
                {"vlbench": 1, "benchmark": BENCH, "task": "grounding", "meta": {"method": "m"},
                 "predictions": from_mdetr(mdetr, gt)},
                data_dir=data,
            )
            options = {**benchmark.options, "iou_threshold": threshold}
            scores = TASK.score(
                sub.parsed, sub.ground_truth, dataclasses.replace(benchmark, options=options)
            ).scores
            prefix = "merged_" if merge else ""
            for k, name in ((1, "R@1"), (5, "R@5"), (10, "R@10"), (-1, "UB")):
                assert scores[f"{prefix}{name}"] == reference[k]["all"]
                for t in TYPES:
                    assert scores[f"{prefix}{name}/{t}"] == reference[k].get(t), (k, t)
            assert 0 < scores[f"{prefix}UB"] < 1  # the draw exercises hits and misses


def test_a_repeated_type_is_tallied_twice_as_mdetr_does(hand_tree, tmp_path):
    (hand_tree / "Sentences" / "200.txt").write_text(
        "[/EN#7/vehicles/vehicles A car] .\n[/EN#7/people A car] .\n"
    )
    data = tmp_path / "data"
    benchmark = registry().benchmark(BENCH)
    with deviation_expected(BENCH):  # a made-up tree, not the official release
        TASK.prepare(benchmark, str(hand_tree), data, force=True)
    records = [{"image_id": 200, "sentence_id": 0, "boxes": [[[20, 20, 60, 60]]]},
               {"image_id": 200, "sentence_id": 1, "boxes": [[[0, 0, 9, 9]]]}]
    ref = MdetrStyleEvaluator(hand_tree, "test").evaluate(records)
    gt = validate_document(
        {"vlbench": 1, "benchmark": BENCH, "task": "grounding", "meta": {"method": "m"},
         "predictions": {}}, data_dir=data
    ).ground_truth
    sub = validate_document(
        {"vlbench": 1, "benchmark": BENCH, "task": "grounding", "meta": {"method": "m"},
         "predictions": from_mdetr(records, gt)}, data_dir=data
    )
    result = TASK.score(sub.parsed, sub.ground_truth, benchmark)
    assert result.extra["type_counts"]["vehicles"] == 2
    assert result.scores["R@1/vehicles"] == ref[1]["vehicles"] == 1.0
    assert result.scores["R@1/people"] == ref[1]["people"]  # 1 hit-less car + 3 image-100 misses
    assert result.scores["R@1"] == ref[1]["all"]
