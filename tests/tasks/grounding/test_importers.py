from __future__ import annotations

import json

import pytest

from tests.conftest import deviation_expected
from vlbench.errors import InvalidSubmission
from vlbench.registry import registry
from vlbench.scoring import score_file
from vlbench.tasks.grounding import TASK
from vlbench.tasks.grounding.importers import from_glip, from_mdetr, main

BENCH = "flickr30k-entities-test"


@pytest.fixture
def data_dir(hand_tree, tmp_path):
    out = tmp_path / "data"
    with deviation_expected(BENCH):  # the hand-made tree is not the official release
        TASK.prepare(registry().benchmark(BENCH), str(hand_tree), out, force=True)
    return out


# Gradable phrases in sentence order: 100/0 -> [0, 4]; 100/2 -> [0, 3, 6, 9]; 200/0 -> [0].
MDETR = [
    {"image_id": 100, "sentence_id": 0, "boxes": [[[100, 10, 140, 50]], [[60, 60, 100, 100]]]},
    {"image_id": "100", "sentence_id": 2,
     "boxes": [[[10, 10, 140, 50]], [], [[0, 0, 5, 5]], [[1, 1, 200, 100]]],
     "scores": [[0.9], [], [0.1], [0.5]]},
    {"image_id": 100, "sentence_id": 1, "boxes": [[[1, 1, 2, 2]]]},  # no gradable phrase: ignored
    {"image_id": 200, "sentence_id": 0, "boxes": [[[20, 20, 60, 40]]]},
]


def test_positional_lists_map_to_first_word_indexes(hand_ground_truth):
    preds = from_mdetr(MDETR, hand_ground_truth)
    assert sorted(preds["100"]["2"]) == ["0", "3", "6", "9"]
    assert preds["100"]["2"]["9"] == {"boxes": [[1, 1, 200, 100]], "phrase_id": "6",
                                      "scores": [0.5]}
    assert preds["100"]["0"]["4"]["phrase_id"] == "2"
    assert "1" not in preds["100"]
    assert from_glip(MDETR, hand_ground_truth) == preds


def test_mismatches_are_listed_together(hand_ground_truth):
    bad = [
        {"image_id": 100, "sentence_id": 0, "boxes": [[[1, 1, 5, 5]]]},  # 1 list, 2 phrases
        {"image_id": 100, "sentence_id": 0, "boxes": [[], []]},  # duplicate
        {"image_id": 5, "sentence_id": 0, "boxes": []},
        {"image_id": 200, "sentence_id": 9, "boxes": []},
        {"image_id": None, "boxes": []},
        "x",
    ]
    with pytest.raises(InvalidSubmission) as exc:
        from_mdetr(bad, hand_ground_truth)
    codes = [(i.code, i.pointer) for i in exc.value.issues]
    assert codes == [("phrase_count", "/0/boxes"), ("duplicate_sentence", "/1"),
                     ("unknown_image", "/2/image_id"), ("unknown_sentence", "/3/sentence_id"),
                     ("mdetr.record", "/4"), ("mdetr.record", "/5")]


def test_command_line_writes_a_scorable_envelope(data_dir, tmp_path, capsys):
    src = tmp_path / "mdetr.json"
    src.write_text(json.dumps(MDETR))
    out = tmp_path / "sub.json"
    rc = main([str(src), "--benchmark", BENCH, "--out", str(out), "--method", "MDETR test",
               "--data-dir", str(data_dir)])
    assert rc == 0
    ev = score_file(out, data_dir=data_dir, bootstrap=0)
    assert ev.result.meta["method"] == "MDETR test"
    # Rank-0 hits: 100/0/4, 100/2/9, 200/0/0 under both protocols; 100/0/0 only ANY-BOX,
    # 100/2/0 only MERGED-BOX; 100/2/3 (empty) and 100/2/6 miss.
    assert ev.result.scores["R@1"] == 4 / 7 and ev.result.scores["merged_R@1"] == 4 / 7
    assert ev.result.extra["phrases_with_empty_list"] == 1


def test_command_line_reports_problems_without_traceback(data_dir, tmp_path, capsys):
    src = tmp_path / "mdetr.json"
    src.write_text(json.dumps([{"image_id": 100, "sentence_id": 0, "boxes": []}]))
    rc = main([str(src), "--benchmark", BENCH, "--out", str(tmp_path / "o.json"),
               "--data-dir", str(data_dir)])
    assert rc == 1 and "phrase_count" in capsys.readouterr().err
    rc = main([str(src), "--benchmark", "nope", "--out", str(tmp_path / "o.json")])
    assert rc == 2


def test_vlbench_import_grounding(data_dir, tmp_path, capsys):
    from vlbench.cli import main as vlbench

    src = tmp_path / "mdetr.json"
    src.write_text(json.dumps(MDETR))
    out = tmp_path / "sub.json"
    rc = vlbench(["import", "grounding", str(src), "--benchmark", BENCH, "--out", str(out),
                  "--format", "glip", "--data-dir", str(data_dir)])
    assert rc == 0
    assert score_file(out, data_dir=data_dir, bootstrap=0).result.scores["R@1"] == 4 / 7


def test_import_grounding_follows_the_output_rule(data_dir, tmp_path, capsys):
    """`vlbench import grounding --out`: replaces only a submission vlbench wrote (marked by
    meta.extra.imported_from); anything else is refused unless --force (tests/output_rule_checks.py)."""
    from tests.output_rule_checks import check_file_writer
    from vlbench.cli import main as vlbench

    src = tmp_path / "mdetr.json"
    src.write_text(json.dumps(MDETR))
    root = tmp_path / "outputs"
    root.mkdir()

    def write(target, force):
        code = vlbench(["import", "grounding", str(src), "--benchmark", BENCH, "--out", str(target),
                        "--data-dir", str(data_dir), *(["--force"] if force else [])])
        capsys.readouterr()
        return code

    check_file_writer(root, write, name="sub.json")
    written = json.loads((root / "ours" / "sub.json").read_text())
    assert written["meta"]["extra"]["imported_from"]["format"] == "mdetr"
    assert written["meta"]["extra"]["imported_from"]["file"] == "mdetr.json"
    # a submission made by hand is someone's, even with the envelope
    hand = root / "hand.json"
    hand.write_text(json.dumps({**written, "meta": {"method": "mine"}}))
    assert write(hand, False) == 2 and json.loads(hand.read_text())["meta"] == {"method": "mine"}
