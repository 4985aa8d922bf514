"""End to end through the harness on the hand-computed fixture (conftest.write_hand_tree)."""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction

import numpy as np
import pytest

from tests.conftest import deviation_expected
from vlbench.errors import InvalidSubmission
from vlbench.registry import registry
from vlbench.scoring import score_file
from vlbench.submission import validate_document
from vlbench.tasks.grounding import TASK
from vlbench.tasks.grounding.scores import metric_keys

BENCH = "flickr30k-entities-test"
JUNK = [0, 0, 5, 5]

# Chain 1 of image 100 has boxes [10,10,50,50] and [100,10,140,50] (merged: [10,10,140,50]);
# chains 2 and 3 share [60,60,100,100]; chain 6 is [1,1,200,100]; image 200 chain 7 [20,20,60,60].
HAND = {
    "100": {
        "0": {
            "0": {"boxes": [[100, 10, 140, 50]]},  # ANY: IoU 1 at rank 0; MERGED: 1600/5200
            "4": {"boxes": [JUNK, [60, 60, 100, 100]], "phrase_id": "2"},  # hit at rank 1
        },
        "2": {
            "0": {"boxes": [[10, 10, 140, 50]]},  # ANY: 1600/5200 miss; MERGED: IoU 1
            # "3" (second mention of chain 1) missing: a miss under both protocols
            "6": {"boxes": [JUNK] * 5 + [[60, 60, 100, 100]]},  # hit at rank 5 (R@10, UB)
            "9": {"boxes": [JUNK] * 10 + [[1, 1, 200, 100]], "scores": list(range(11, 0, -1))},
        },
    },
    # IoU exactly 0.5 (800 / 1600): a hit, the threshold is >=.
    "200": {"0": {"0": {"boxes": [[20, 20, 60, 40]]}}},
}

# Per phrase row (100/0/0, 100/0/4, 100/2/0, 100/2/3, 100/2/6, 100/2/9, 200/0/0):
EXPECTED_ANY = {"R@1": [1, 0, 0, 0, 0, 0, 1], "R@5": [1, 1, 0, 0, 0, 0, 1],
                "R@10": [1, 1, 0, 0, 1, 0, 1], "UB": [1, 1, 0, 0, 1, 1, 1]}
EXPECTED_MERGED = {"R@1": [0, 0, 1, 0, 0, 0, 1], "R@5": [0, 1, 1, 0, 0, 0, 1],
                   "R@10": [0, 1, 1, 0, 1, 0, 1], "UB": [0, 1, 1, 0, 1, 1, 1]}
ROW_TYPES = [["people"], ["animals", "other"], ["people"], ["people"], ["animals"], ["scene"],
             ["vehicles"]]


@pytest.fixture
def data_dir(hand_tree, tmp_path):
    out = tmp_path / "data"
    with deviation_expected(BENCH):  # the hand-made tree is not the official release
        TASK.prepare(registry().benchmark(BENCH), str(hand_tree), out, force=True)
    return out


def envelope(predictions, benchmark=BENCH):
    return {"vlbench": 1, "benchmark": benchmark, "task": "grounding",
            "meta": {"method": "test"}, "predictions": predictions}


def write(tmp_path, doc, name="sub.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def expected(rows, types=None):
    keep = [i for i, t in enumerate(ROW_TYPES) if types is None or types in t]
    if not keep:
        return None
    return float(Fraction(sum(rows[i] for i in keep), len(keep)))


def test_hand_computed_recalls_both_protocols_and_types(data_dir, tmp_path):
    ev = score_file(write(tmp_path, envelope(HAND)), data_dir=data_dir, bootstrap=0)
    scores = ev.result.scores
    assert set(scores) == set(metric_keys())
    for prefix, table in (("", EXPECTED_ANY), ("merged_", EXPECTED_MERGED)):
        for measure, rows in table.items():
            assert scores[f"{prefix}{measure}"] == expected(rows)
            for t in ("people", "clothing", "animals", "vehicles", "scene", "other"):
                assert scores[f"{prefix}{measure}/{t}"] == expected(rows, t), (prefix, measure, t)
    assert scores["R@1"] == 2 / 7 and scores["merged_R@1/people"] == 1 / 3
    assert scores["R@1/clothing"] is None
    assert ev.result.n["phrases"] == 7 and ev.result.n["sentences"] == 3
    assert ev.result.extra["coverage"] == 6 / 7
    assert ev.result.extra["phrases_missing"] == 1


def test_per_phrase_table_recomputes_every_metric_from_means(data_dir, tmp_path):
    ev = score_file(write(tmp_path, envelope(HAND)), data_dir=data_dir, bootstrap=0)
    table = ev.items["phrases"]
    assert table.values.shape[0] == 7
    col = table.columns.index("merged_R@10")
    np.testing.assert_array_equal(table.values[:, col], EXPECTED_MERGED["R@10"])
    means = {"phrases": {c: np.array([table.values[:, j].mean()]) for j, c in enumerate(table.columns)}}
    benchmark = registry().benchmark(BENCH)
    derived = TASK.metrics_from_means(benchmark, means)
    for key, value in ev.result.scores.items():
        if value is None:
            assert not np.isfinite(derived[key][0])
        else:
            assert derived[key][0] == pytest.approx(value, abs=1e-12)


def test_bootstrap_intervals_exist_and_bracket_the_score(data_dir, tmp_path):
    ev = score_file(write(tmp_path, envelope(HAND)), data_dir=data_dir, bootstrap=200, seed=1)
    lo, hi = ev.result.ci95["R@5"]
    assert lo <= ev.result.scores["R@5"] <= hi and lo < hi


def test_iou_threshold_is_configurable(data_dir):
    benchmark = registry().benchmark(BENCH)
    strict = dataclasses.replace(benchmark, options={**benchmark.options, "iou_threshold": 0.6})
    sub = validate_document(envelope(HAND), data_dir=data_dir, benchmark_override=strict)
    scores = TASK.score(sub.parsed, sub.ground_truth, strict).scores
    assert scores["R@1/vehicles"] == 0.0  # the IoU-0.5 box no longer counts
    assert scores["R@1"] == 1 / 7


def test_ungradable_predictions_are_ignored_not_errors(data_dir, tmp_path):
    preds = json.loads(json.dumps(HAND))
    preds["100"]["0"]["7"] = {"boxes": [[1, 1, 9, 9]]}  # nobndbox chain
    preds["100"]["1"] = {"0": {"boxes": []}, "3": {"boxes": []}}  # dropped sentence
    ev = score_file(write(tmp_path, envelope(preds)), data_dir=data_dir, bootstrap=0)
    assert ev.result.extra["ignored_ungradable_predictions"] == 3
    assert ev.result.scores["R@1"] == 2 / 7


def test_empty_submission_scores_zero_with_zero_coverage(data_dir, tmp_path):
    ev = score_file(write(tmp_path, envelope({})), data_dir=data_dir, bootstrap=0)
    assert ev.result.scores["UB"] == 0.0 and ev.result.extra["coverage"] == 0.0


def test_random_predictions_are_valid_and_deterministic(data_dir, tmp_path):
    benchmark = registry().benchmark(BENCH)
    sub = validate_document(envelope({}), data_dir=data_dir)
    a = TASK.random_predictions(sub.ground_truth, benchmark, seed=3)
    assert a == TASK.random_predictions(sub.ground_truth, benchmark, seed=3)
    ev = score_file(write(tmp_path, envelope(a)), data_dir=data_dir, bootstrap=0)
    assert ev.result.extra["coverage"] == 1.0
    assert all(len(e["boxes"]) == 10 for s in a.values() for p in s.values() for e in p.values())


def issues_of(doc, data_dir):
    with pytest.raises(InvalidSubmission) as exc:
        validate_document(doc, data_dir=data_dir)
    return [(i.code, i.pointer, i.hint) for i in exc.value.issues]


def test_semantic_validation_lists_every_problem(data_dir):
    preds = {
        "999": {"0": {"0": {"boxes": []}}},
        "0100": {},
        "100": {
            "7": {"0": {"boxes": []}},
            "0": {
                "1": {"boxes": []},
                "0": {"boxes": [[10, 10, 30, 30], [5, 5, 4, 9],
                                [150, 20, 260, 60]]},
                "4": {"boxes": [[60, 60, 20, 20]], "phrase_id": "3",
                      "scores": [1.0, 0.5]},
            },
            "2": {"9": {"boxes": [[1, 1, 5, 5], [1, 1, 4, 4]], "scores": [0.1, 0.9]}},
        },
        "200": {"1": {"0": {"boxes": []}}},
    }
    found = issues_of(envelope(preds), data_dir)
    codes = {c: p for c, p, _ in found}
    assert codes["unknown_image"] in ("/predictions/999", "/predictions/0100")
    assert ("unknown_image", "/predictions/0100", "write the id without leading zeros: 100") in found
    assert codes["unknown_sentence"] == "/predictions/100/7"
    assert ("unknown_phrase", "/predictions/100/0/1") in [(c, p) for c, p, _ in found]
    assert ("unknown_phrase", "/predictions/200/1/0") in [(c, p) for c, p, _ in found]
    assert codes["phrase_id_mismatch"] == "/predictions/100/0/4/phrase_id"
    assert codes["scores_length"] == "/predictions/100/0/4/scores"
    order = [(p, h) for c, p, h in found if c == "box_order"]
    assert ("/predictions/100/0/0/boxes/1", order[0][1]) in order
    # [60, 60, 20, 20] is a plausible xywh box in the 200x100 image: the hint says so.
    assert any(p == "/predictions/100/0/4/boxes/0" and "xywh" in h for p, h in order)
    # [150, 20, 260, 60] extends past the 200-pixel-wide image: accepted (see below).
    assert "box_outside_image" not in codes
    assert len(found) == 9


def test_normalised_coordinates_are_flagged(data_dir):
    preds = {"100": {"0": {"0": {"boxes": [[0.1, 0.1, 0.5, 0.5]]}}},
             "200": {"0": {"0": {"boxes": [[0.2, 0.2, 0.6, 0.6], [0, 0, 1, 1]]}}}}
    found = issues_of(envelope(preds), data_dir)
    assert [c for c, _, _ in found] == ["normalised_coordinates"]
    assert "multiply" in found[0][2]


def test_non_finite_and_huge_numbers_are_reported(data_dir):
    # 1e400 parses to inf in Python's json; a huge int cannot become a float.
    preds = {"200": {"0": {"0": {"boxes": [[float("inf"), 0, 5, 5], [10**400, 0, 5, 5]],
                                 "scores": [float("nan"), 1.0]}}}}
    found = issues_of(envelope(preds), data_dir)
    codes = [c for c, _, _ in found]
    assert codes.count("non_finite_box") == 2 and "non_finite_score" in codes


def test_duplicate_keys_are_refused_by_the_reader(data_dir, tmp_path):
    head = json.dumps(envelope(None))[: -len("null}")]
    text = head + '{"200": {"0": {"0": {"boxes": []}, "0": {"boxes": []}}}}}'
    path = tmp_path / "dup.json"
    path.write_text(text)
    with pytest.raises(InvalidSubmission) as exc:
        score_file(path, data_dir=data_dir)
    assert exc.value.issues.codes() == {"duplicate_key"}


@pytest.mark.parametrize(
    "predictions",
    [
        [],
        {"100": []},
        {"100": {"0": {"0": {"boxes": [[1, 2, 3]]}}}},
        {"100": {"0": {"0": {"boxes": [[1, 2, 3, "4"]]}}}},
        {"100": {"0": {"0": {"boxes": [[True, 2, 30, 40]]}}}},
        {"100": {"0": {"0": {"boxes": "x", "extra": 1}}}},
        {"100": {"0": {"0": {"scores": [1]}}}},
        {"100": {"0": {"0": {"boxes": [[1, 2, 30, 40]] * 101}}}},
        {"100": {"0": {"0": [[1, 2, 3, 4]]}}},
        {"100": {"x": {"0": {"boxes": []}}}},
        {"100": {"0": {"0": {"boxes": [[1, 2, 30, 40], None]}}}},
    ],
)
def test_schema_invalid_input_gives_issues_never_a_traceback(data_dir, predictions):
    found = issues_of(envelope(predictions), data_dir)
    assert found and all(c.startswith(("schema.", "unknown_")) for c, _, _ in found)
