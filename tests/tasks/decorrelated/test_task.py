"""The task end to end on a hand-made manifest: validation issues, scores, groups, bootstrap."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vlbench.benchmark import Benchmark, DataFile
from vlbench.errors import InvalidSubmission, IssueList
from vlbench.ground_truth import GroundTruthFiles
from vlbench.schema import schema_issues
from vlbench.submission import validate_document
from vlbench.tasks.decorrelated import BENCHMARKS, TASK
from vlbench.tasks.decorrelated.benchmarks import METRICS
from vlbench.tasks.decorrelated.manifest import (
    Gallery,
    Query,
    build_manifest,
    load_manifest,
    write_manifest,
)
from vlbench.tasks.decorrelated.mentions import MentionMatcher

CLASSES = ("person", "dog", "frisbee", "hot dog", "car")
WORDS = {
    "person": ("person", "people", "man", "men"),
    "dog": ("dog", "dogs"),
    "frisbee": ("frisbee", "frisbees"),
    "hot dog": ("hot dog", "hot dogs"),
    "car": ("car", "cars"),
}
CAPTIONS = {
    100: "A man throws a frisbee.",  # person, frisbee
    101: "A dog catches a frisbee.",  # dog, frisbee
    102: "A dog on the grass.",  # dog
    103: "A green field.",  # nothing
    104: "A man eating a hot dog.",  # person, hot dog
    105: "Two cars parked.",  # car
    106: "Men and dogs.",  # person, dog
    107: "A man throws a frisbee.",  # duplicate text, its own gallery item
    108: "A car and a frisbee.",  # car, frisbee
    109: "People in a park.",  # person
    110: "A frisbee.",  # frisbee
    111: "A red car.",  # car
}
# q1: dog removed; person, frisbee present -> correct: 100, 104, 107, 108, 109, 110 (R = 6).
# q2: person removed; car present -> correct: 105, 108, 111 (R = 3).
# q3: car removed; dog present -> correct: 101, 102 (106 mentions person: also correct) (R = 3).
Q = [
    Query("q1", 1, "q1.png", "a.jpg", ("dog",), ("frisbee", "person"), ((0, 0, 5, 5),), "partner"),
    Query("q2", 2, "q2.png", "b.jpg", ("person",), ("car",), ((1, 1, 2, 2),), "control"),
    Query("q3", 3, "q3.png", "c.jpg", ("car",), ("dog",), ((2, 2, 3, 3),), "partner"),
    Query("q4", 4, "q4.png", "d.jpg", ("person",), ("hot dog",), (), "control"),  # R = 0
]


def make_manifest(tmp_path: Path, drop: bool = True) -> Path:
    matcher = MentionMatcher(CLASSES, WORDS)
    gallery = Gallery(list(CAPTIONS), [matcher.mentions(t) for t in CAPTIONS.values()])
    doc = build_manifest("test-decorrelated", CLASSES, Q, gallery, {"tau1": 0.4}, drop_unanswerable=drop)
    return write_manifest(tmp_path / "test-decorrelated" / "manifest.json", doc)


def bench() -> Benchmark:
    return Benchmark(
        id="test-decorrelated",
        task="decorrelated_retrieval",
        version="1.0",
        description="test",
        files=(DataFile("manifest", "manifest.json"),),
        metrics=METRICS,
        main_score="ODmAP@1",
    )


@pytest.fixture
def gt_dir(tmp_path: Path) -> Path:
    make_manifest(tmp_path)
    return tmp_path


def envelope(preds: object) -> dict:
    return {
        "vlbench": 1,
        "benchmark": "test-decorrelated",
        "task": "decorrelated_retrieval",
        "meta": {"method": "test"},
        "predictions": preds,
    }


def ranked(*ids: int) -> list[int]:
    rest = [c for c in CAPTIONS if c not in ids]
    return [*ids, *rest][:10]


def test_manifest_r_and_schema(gt_dir: Path) -> None:
    doc = json.loads((gt_dir / "test-decorrelated" / "manifest.json").read_text())
    assert [q["id"] for q in doc["queries"]] == ["q1", "q2", "q3"]  # q4 has R = 0: dropped
    assert [q["n_relevant"] for q in doc["queries"]] == [6, 3, 3]
    assert doc["stats"]["dropped_unanswerable"] == 1
    assert doc["groups"] == ["control", "partner"]
    issues = IssueList()
    schema_issues(doc, Path(TASK.schema_path()).parent / "manifest.schema.json", issues)
    assert not issues, issues.report()


def test_scores_hand_computed(gt_dir: Path) -> None:
    preds = {
        "image_to_text": {
            # q1: ranks 1 correct (100), 2 wrong (101), 3 correct (104): R = 6.
            "q1": ranked(100, 101, 104),
            # q2: rank 1 wrong (107: mentions person), rank 2 correct (105): R = 3.
            "q2": [str(c) for c in ranked(107, 105)],
            # q3: 106 correct (person is neither removed nor required), 102 correct, 111 wrong.
            "q3": ranked(106, 102, 111, 101),
        }
    }
    sub = validate_document(envelope(preds), data_dir=gt_dir, benchmark_override=bench())
    scores = TASK.score(sub.parsed, sub.ground_truth, sub.benchmark)
    # q1 lists 100, 101, 104 then the rest in id order: 102 103 105 106 107 108 109
    # -> ranks 8 (107), 9 (108), 10 (109) are correct as well.
    ap1 = {"q1": 1.0, "q2": 0.0, "q3": 1.0}
    ap5 = {"q1": (1 + 2 / 3) / 5, "q2": (1 / 2) / 3, "q3": (1 + 1 + 3 / 4) / 3}
    ap10_q1 = (1 + 2 / 3 + 3 / 8 + 4 / 9 + 5 / 10) / 6
    # q2 rest: 100 101 102 103 104 106 108 109 -> ranks 3..10; 108 at rank 9 is correct.
    ap10_q2 = (1 / 2 + 2 / 9) / 3
    # q3 rest: 100 103 104 105 107 108 -> nothing more correct.
    ap10 = {"q1": ap10_q1, "q2": ap10_q2, "q3": ap5["q3"]}
    for k, ap in ((1, ap1), (5, ap5), (10, ap10)):
        assert scores.scores[f"ODmAP@{k}"] == pytest.approx(np.mean(list(ap.values())), abs=1e-12)
        assert scores.scores[f"ODmAP@{k}/partner"] == pytest.approx((ap["q1"] + ap["q3"]) / 2, abs=1e-12)
        assert scores.scores[f"ODmAP@{k}/control"] == pytest.approx(ap["q2"], abs=1e-12)
    table = scores.items["image_to_text"]
    assert table.ids == ["q1", "q2", "q3"]
    assert table.values[:, table.columns.index("ODmAP@5")].tolist() == pytest.approx([ap5[q] for q in table.ids])
    # The bootstrap path (column means -> metrics) reproduces the point estimates.
    means = {"image_to_text": {c: table.values[:, j].mean(keepdims=True) for j, c in enumerate(table.columns)}}
    again = TASK.metrics_from_means(sub.benchmark, means)
    assert {k: float(v[0]) for k, v in again.items()} == pytest.approx(scores.scores)
    assert scores.n["queries/partner"] == 2


def test_only_the_top_ten_count(gt_dir: Path) -> None:
    base = {"q1": ranked(102), "q2": ranked(100), "q3": ranked(100)}
    longer = {q: [*v, *[c for c in CAPTIONS if c not in v]] for q, v in base.items()}
    gt = load_manifest(gt_dir / "test-decorrelated" / "manifest.json")
    a = TASK.score(TASK.check({"image_to_text": base}, gt, bench(), IssueList()), gt, bench())
    b = TASK.score(TASK.check({"image_to_text": longer}, gt, bench(), IssueList()), gt, bench())
    assert a.scores == b.scores


def test_every_problem_reported_with_pointers(gt_dir: Path) -> None:
    preds = {
        "image_to_text": {
            "q1": [*ranked(100)[:9], 999],  # unknown caption id
            "q2": [100, 100, *ranked(100)[1:9]],  # duplicate
            "q3": ranked(100)[:9],  # too short
            "q9": ranked(100),  # unknown query; q? missing: none (q1-q3 present)
        }
    }
    with pytest.raises(InvalidSubmission) as err:
        validate_document(envelope(preds), data_dir=gt_dir, benchmark_override=bench())
    found = {(i.code, i.pointer) for i in err.value.issues}
    assert found == {
        ("unknown_id", "/predictions/image_to_text/q1/9"),
        ("duplicate_id_in_list", "/predictions/image_to_text/q2/1"),
        ("list_too_short", "/predictions/image_to_text/q3"),
        ("unknown_query_id", "/predictions/image_to_text/q9"),
    }


def test_missing_query_float_ids_and_schema_errors(gt_dir: Path) -> None:
    preds = {"image_to_text": {"q1": [100.0, *ranked(100)[1:]], "q2": "nope"}, "extra": 1}
    with pytest.raises(InvalidSubmission) as err:
        validate_document(envelope(preds), data_dir=gt_dir, benchmark_override=bench())
    found = {(i.code, i.pointer) for i in err.value.issues}
    assert ("float_id", "/predictions/image_to_text/q1/0") in found
    assert ("missing_query", "/predictions/image_to_text/q3") in found
    assert ("schema.type", "/predictions/image_to_text/q2") in found
    assert ("schema.additionalProperties", "/predictions") in found


@pytest.mark.parametrize("bad", [None, [], {"image_to_text": []}, {"image_to_text": {"q1": [None, {}]}}, "x"])
def test_check_never_raises_on_schema_invalid_input(gt_dir: Path, bad: object) -> None:
    gt = load_manifest(gt_dir / "test-decorrelated" / "manifest.json")
    issues = IssueList()
    assert TASK.check(bad, gt, bench(), issues) is None
    assert TASK.fast_structure(bad, bench()).ok is False


def test_fast_structure_ok_agrees_with_schema(gt_dir: Path) -> None:
    good = {"image_to_text": {"q1": ranked(100), "q2": [str(x) for x in ranked(100)]}}
    assert TASK.fast_structure(good, bench()).ok
    issues = IssueList()
    schema_issues(good, TASK.schema_path(), issues)
    assert not issues


def test_random_predictions_are_valid_and_deterministic(gt_dir: Path) -> None:
    gt = TASK.load_ground_truth(bench(), GroundTruthFiles({"manifest": gt_dir / "test-decorrelated" / "manifest.json"}, {}))
    a = TASK.random_predictions(gt, bench(), seed=1)
    assert a == TASK.random_predictions(gt, bench(), seed=1)
    issues = IssueList()
    parsed = TASK.check(a, gt, bench(), issues)
    assert not issues and parsed is not None
    s = TASK.score(parsed, gt, bench()).scores
    assert all(0.0 <= v <= 1.0 for v in s.values())


def test_benchmark_records() -> None:
    assert {b.id for b in BENCHMARKS} == {"coco-5k-decorrelated", "flickr30k-1k-decorrelated", "mini-decorrelated"}
    for b in BENCHMARKS:
        assert [m.key for m in b.metrics] == ["ODmAP@1", "ODmAP@5", "ODmAP@10"]
        assert b.task == TASK.name == "decorrelated_retrieval"


def test_scoring_core_does_not_import_torch() -> None:
    import subprocess
    import sys

    code = (
        "import sys, tasks.decorrelated, tasks.decorrelated.prepare; "
        "print('torch' in sys.modules or 'diffusers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_ids_compare_in_canonical_form(gt_dir: Path) -> None:
    gt = load_manifest(gt_dir / "test-decorrelated" / "manifest.json")
    lists = {"q1": ranked(100), "q2": [str(c) for c in ranked(100)], "q3": ["0100", *ranked(100)[1:]]}
    issues = IssueList()
    assert TASK.check({"image_to_text": lists}, gt, bench(), issues) is None
    assert [(i.code, i.pointer) for i in issues] == [("unknown_id", "/predictions/image_to_text/q3/0")]


def test_string_caption_ids(tmp_path: Path) -> None:
    matcher = MentionMatcher(CLASSES, WORDS)
    texts = {f"c{i}": t for i, t in enumerate(CAPTIONS.values())}
    gallery = Gallery(list(texts), [matcher.mentions(t) for t in texts.values()])
    doc = build_manifest("s", CLASSES, Q[:1], gallery, {})
    gt = load_manifest(write_manifest(tmp_path / "m.json", doc))
    issues = IssueList()
    order = ["c0", "c1", "c4", *[f"c{i}" for i in (2, 3, 5, 6, 7, 8, 9)]]  # = ranked(100, 101, 104)
    parsed = TASK.check({"image_to_text": {"q1": order}}, gt, bench(), issues)
    assert not issues and parsed is not None
    assert TASK.score(parsed, gt, bench()).scores["ODmAP@5"] == pytest.approx((1 + 2 / 3) / 5)
    issues = IssueList()
    assert TASK.check({"image_to_text": {"q1": [0, *order[1:]]}}, gt, bench(), issues) is None
    assert [i.code for i in issues] == ["unknown_id"]
