"""Scoring MDETR / GLIP evaluator files directly (`vlbench score --format mdetr|glip`)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import deviation_expected
from vlbench.cli import main as vlbench
from vlbench.errors import InvalidSubmission, UsageError
from vlbench.registry import registry
from vlbench.scoring import score_file
from vlbench.tasks.grounding import TASK
from vlbench.tasks.grounding.importers import main as import_main

BENCH = "flickr30k-entities-test"

# Gradable phrases in sentence order: 100/0 -> [0, 4]; 100/2 -> [0, 3, 6, 9]; 200/0 -> [0].
MDETR = [
    {"image_id": 100, "sentence_id": 0, "boxes": [[[100, 10, 140, 50]], [[60, 60, 100, 100]]]},
    {"image_id": "100", "sentence_id": 2,
     "boxes": [[[10, 10, 140, 50]], [], [[0, 0, 5, 5]], [[1, 1, 200, 100], [5, 5, 9, 9]]],
     "scores": [[0.9], [], [0.1], [0.5, 0.7]]},
    {"image_id": 100, "sentence_id": 1, "boxes": [[[1, 1, 2, 2]]]},  # no gradable phrase: ignored
    {"image_id": 200, "sentence_id": 0, "boxes": [[[20, 20, 60, 40], [0, 0, 300, 300]]]},
]


@pytest.fixture
def data_dir(hand_tree, tmp_path):
    out = tmp_path / "data"
    with deviation_expected(BENCH):  # the hand-made tree is not the official release
        TASK.prepare(registry().benchmark(BENCH), str(hand_tree), out, force=True)
    return out


def write(tmp_path, doc, name="mdetr.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_direct_scores_equal_import_then_score(data_dir, tmp_path):
    src = write(tmp_path, MDETR)
    direct = score_file(src, benchmark_id=BENCH, data_dir=data_dir, bootstrap=50,
                        input_format="mdetr")
    sub = tmp_path / "sub.json"
    assert import_main([str(src), "--benchmark", BENCH, "--out", str(sub),
                        "--data-dir", str(data_dir)]) == 0
    imported = score_file(sub, data_dir=data_dir, bootstrap=50)
    assert direct.result.scores == imported.result.scores
    assert direct.result.ci95 == imported.result.ci95
    np.testing.assert_array_equal(direct.items["phrases"].values, imported.items["phrases"].values)
    assert direct.items["phrases"].ids == imported.items["phrases"].ids
    assert direct.result.extra["input_format"] == "mdetr"
    assert direct.result.meta["method"] == "unnamed (mdetr-format predictions file)"
    assert direct.result.extra["ignored_ungradable_predictions"] == 1  # the record of 100/1
    for key in ("warnings", "covered", "boxes_outside_image", "phrases_with_empty_list"):
        assert direct.result.extra[key] == imported.result.extra[key], key


def test_format_is_detected_in_a_bare_list_and_glip_is_the_same(data_dir, tmp_path):
    src = write(tmp_path, MDETR)
    detected = score_file(src, benchmark_id=BENCH, data_dir=data_dir, bootstrap=0)
    glip = score_file(src, benchmark_id=BENCH, data_dir=data_dir, bootstrap=0, input_format="glip")
    assert detected.result.extra["input_format"] == "mdetr"
    assert glip.result.extra["input_format"] == "glip"
    assert detected.result.scores == glip.result.scores
    # Image 200's second box lies far past the 100x100 image: accepted, counted.
    assert detected.result.extra["boxes_outside_image"]["count"] == 1


def test_command_line(data_dir, tmp_path, capsys):
    src = write(tmp_path, MDETR)
    out = tmp_path / "result.json"
    rc = vlbench(["score", str(src), "--benchmark", BENCH, "--format", "mdetr",
                  "--data-dir", str(data_dir), "--bootstrap", "0", "--out", str(out)])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert "boxes extend past the image" in captured.err
    record = json.loads(out.read_text())
    assert record["extra"]["input_format"] == "mdetr" and record["scores"]["R@1"] == 4 / 7
    assert vlbench(["validate", str(src), "--benchmark", BENCH, "--format", "glip",
                    "--data-dir", str(data_dir)]) == 0


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--format", "mdetr"], "give --benchmark"),
        (["--benchmark", BENCH, "--format", "coco"], "one of vlbench, mdetr, glip"),
        (["--benchmark", "mini-retrieval", "--format", "mdetr"], "not 'mdetr'"),
    ],
)
def test_format_usage_errors_exit_2(data_dir, tmp_path, capsys, argv, needle):
    src = write(tmp_path, MDETR)
    assert vlbench(["score", str(src), "--data-dir", str(data_dir), *argv]) == 2
    assert needle in capsys.readouterr().err


def test_an_envelope_is_never_taken_for_another_format(data_dir, tmp_path):
    sub = tmp_path / "sub.json"
    assert import_main([str(write(tmp_path, MDETR)), "--benchmark", BENCH, "--out", str(sub),
                        "--data-dir", str(data_dir)]) == 0
    ev = score_file(sub, benchmark_id=BENCH, data_dir=data_dir, bootstrap=0)
    assert "input_format" not in ev.result.extra
    with pytest.raises(InvalidSubmission) as exc:  # --format mdetr on an envelope: not a list
        score_file(sub, benchmark_id=BENCH, data_dir=data_dir, bootstrap=0, input_format="mdetr")
    assert exc.value.issues.codes() == {"mdetr.not_a_list"}


def issues(data_dir, tmp_path, records):
    with pytest.raises(InvalidSubmission) as exc:
        score_file(write(tmp_path, records), benchmark_id=BENCH, data_dir=data_dir,
                   input_format="mdetr")
    return [(i.code, i.pointer) for i in exc.value.issues]


def test_malformed_boxes_are_listed_with_record_pointers(data_dir, tmp_path):
    bad = json.loads(json.dumps(MDETR))
    bad[0]["boxes"][0] = [100, 10, 140, 50]  # one flat box instead of a list of boxes
    bad[0]["boxes"][1] = [[60, 60, 100], [1, 1, 2, 2]]
    bad[1]["boxes"][0] = [[10, "10", 140, 50]]
    bad[1]["boxes"][1] = [[True, 1, 5, 5]]
    bad[3]["boxes"][0] = "boxes"
    assert issues(data_dir, tmp_path, bad) == [
        ("mdetr.boxes", "/0/boxes/0/0"), ("mdetr.boxes", "/0/boxes/1/0"),
        ("mdetr.boxes", "/1/boxes/0/0"), ("mdetr.boxes", "/1/boxes/1/0"),
        ("mdetr.boxes", "/3/boxes/0"),
    ]


def test_box_problems_use_record_pointers(data_dir, tmp_path):
    bad = json.loads(json.dumps(MDETR))
    bad[1]["boxes"][3][1] = [9, 9, 5, 20]
    text = json.dumps(bad).replace("[0, 0, 5, 5]", "[0, 0, 5, 1e400]")
    path = tmp_path / "inf.json"
    path.write_text(text)
    with pytest.raises(InvalidSubmission) as exc:
        score_file(path, benchmark_id=BENCH, data_dir=data_dir, input_format="mdetr")
    found = {(i.code, i.pointer) for i in exc.value.issues}
    assert ("box_order", "/1/boxes/3/1") in found
    # The reader may already refuse the overflowing literal; otherwise the box check does.
    assert found & {("non_finite_box", "/1/boxes/2/0"), ("number_out_of_range", "/1/boxes/2/0/3")}


def test_record_problems_are_listed_together(data_dir, tmp_path):
    bad = [
        {"image_id": 100, "sentence_id": 0, "boxes": [[[1, 1, 5, 5]]]},  # 1 list, 2 phrases
        {"image_id": 100, "sentence_id": 0, "boxes": [[], []]},  # differs from record 0
        {"image_id": 5, "sentence_id": 0, "boxes": []},
        {"image_id": 200, "sentence_id": 9, "boxes": []},
        {"image_id": 200.0, "sentence_id": 0, "boxes": []},
        "x",
        {"image_id": "9" * 5000, "sentence_id": 0, "boxes": []},  # int() would raise past 4,300
        {"image_id": "\u0661\u0660\u0660", "sentence_id": 0, "boxes": []},  # non-ASCII digits
        {"image_id": 100, "sentence_id": -1, "boxes": []},
    ]
    assert issues(data_dir, tmp_path, bad) == [
        ("phrase_count", "/0/boxes"), ("duplicate_sentence", "/1"), ("unknown_image", "/2/image_id"),
        ("unknown_sentence", "/3/sentence_id"), ("mdetr.record", "/4"), ("mdetr.record", "/5"),
        ("mdetr.record", "/6"), ("mdetr.record", "/7"), ("mdetr.record", "/8"),
    ]
    assert issues(data_dir, tmp_path, {"image_id": 1}) == [("mdetr.not_a_list", "")]


def test_exact_repeats_are_kept_once_with_a_warning(data_dir, tmp_path):
    # Distributed evaluation pads the dataset by repeating samples; MDETR keeps the first.
    ev = score_file(write(tmp_path, MDETR + MDETR[:2]), benchmark_id=BENCH, data_dir=data_dir,
                    bootstrap=0)
    assert ev.result.scores == score_file(write(tmp_path, MDETR, "once.json"), benchmark_id=BENCH,
                                          data_dir=data_dir, bootstrap=0).result.scores
    assert any(w.startswith("2 records repeat an earlier record") for w in ev.result.extra["warnings"])


def test_unusable_scores_are_ignored_like_mdetr_does(data_dir, tmp_path):
    records = json.loads(json.dumps(MDETR))
    records[1]["scores"] = [[0.9], [], ["high"], [0.5]]  # a string; and one score for two boxes
    records[3]["scores"] = "none"
    ev = score_file(write(tmp_path, records), benchmark_id=BENCH, data_dir=data_dir, bootstrap=0)
    assert any(w.startswith("3 phrases have scores that are not one finite number per box")
               for w in ev.result.extra["warnings"])
    plain = [{k: v for k, v in r.items() if k != "scores"} for r in MDETR]
    assert ev.result.scores == score_file(write(tmp_path, plain, "plain.json"), benchmark_id=BENCH,
                                          data_dir=data_dir, bootstrap=0).result.scores


def test_unsorted_scores_warn(data_dir, tmp_path):
    ev = score_file(write(tmp_path, MDETR), benchmark_id=BENCH, data_dir=data_dir, bootstrap=0)
    assert "1 phrases have scores that are not non-increasing" in " ".join(ev.result.extra["warnings"])


def test_more_than_100_boxes_per_phrase_are_taken(data_dir, tmp_path):
    # MDETR-style models give every phrase all their queries (100 for MDETR, more for others).
    records = json.loads(json.dumps(MDETR))
    records[3]["boxes"][0] = [[0, 0, 5, 5]] * 299 + [[20, 20, 60, 60]]
    ev = score_file(write(tmp_path, records), benchmark_id=BENCH, data_dir=data_dir, bootstrap=0)
    assert ev.result.scores["UB/vehicles"] == 1.0 and ev.result.scores["R@10/vehicles"] == 0.0


def test_partial_file_warns_and_strict_refuses(data_dir, tmp_path):
    src = write(tmp_path, MDETR[:1])
    ev = score_file(src, benchmark_id=BENCH, data_dir=data_dir, bootstrap=0)
    assert ev.result.extra["covered"] == {"sentences": 1, "sentences_total": 3,
                                          "phrases": 2, "phrases_total": 7}
    with pytest.raises(InvalidSubmission) as exc:
        score_file(src, benchmark_id=BENCH, data_dir=data_dir, bootstrap=0, strict=True)
    # The pointer is the document: an MDETR file has no /predictions.
    assert [(i.code, i.pointer) for i in exc.value.issues] == [("partial_submission", "")]


def test_normalised_coordinates_point_at_the_document(data_dir, tmp_path):
    records = [{"image_id": 200, "sentence_id": 0, "boxes": [[[0.2, 0.2, 0.6, 0.6]]]}]
    assert issues(data_dir, tmp_path, records) == [("normalised_coordinates", "")]


def test_other_tasks_read_no_foreign_format():
    benchmark = registry().benchmark("mini-retrieval")
    task = registry().task_of(benchmark)
    assert task.foreign_formats == () and task.detect_format([], benchmark) is None
    with pytest.raises(UsageError):
        task.check_foreign("mdetr", [], None, benchmark, None)


def test_score_table_is_tabulates_simple_format(data_dir, tmp_path, capsys):
    # `vlbench score` prints its table without importing tabulate (start-up time): same text.
    from tabulate import tabulate

    from vlbench.cli import simple_table

    assert vlbench(["score", str(write(tmp_path, MDETR)), "--benchmark", BENCH, "--data-dir",
                    str(data_dir), "--bootstrap", "20"]) == 0
    printed = capsys.readouterr().out.splitlines()[1:]
    table = printed[: printed.index("")]
    headers = ["metric", "value", "95% CI"]
    rows = [[line[: table[1].index(" ")].strip(), *line[table[1].index(" "):].split(None, 1)]
            for line in table[2:]]
    rows = [r + [""] * (3 - len(r)) for r in rows]
    assert len(rows) == 72 and "\n".join(table) == tabulate(rows, headers=headers,
                                                             disable_numparse=True)
    assert simple_table(rows, headers) == tabulate(rows, headers=headers, disable_numparse=True)
    assert simple_table([], headers) == tabulate([], headers=headers, disable_numparse=True)
