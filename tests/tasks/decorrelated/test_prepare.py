"""Manifest construction from small COCO, Flickr30k Entities and mini-format fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import deviation_expected
from vlbench.errors import IssueList, UsageError
from vlbench.ground_truth import GroundTruthFiles
from vlbench.schema import schema_issues
from vlbench.tasks.decorrelated import BENCHMARKS, TASK
from vlbench.tasks.decorrelated.manifest import SCHEMA_PATH, load_manifest
from vlbench.tasks.decorrelated.mentions import MentionMatcher
from vlbench.tasks.decorrelated.prepare import (
    choose,
    parse_entities_boxes,
    parse_entities_sentence,
    prepare_mini,
)

BY_ID = {b.id: b for b in BENCHMARKS}


def karpathy(images: list[tuple[int, str, str, str, list[str]]]) -> dict:
    out, sid = [], 0
    for cocoid, filepath, filename, split, sents in images:
        sentences = []
        for s in sents:
            sentences.append({"sentid": sid, "raw": s, "tokens": s.lower().split(), "imgid": cocoid})
            sid += 1
        out.append({"cocoid": cocoid, "filepath": filepath, "filename": filename, "split": split,
                    "sentids": [x["sentid"] for x in sentences], "sentences": sentences})  # fmt: skip
    return {"images": out, "dataset": "coco"}


def coco_fixture(root: Path) -> None:
    """Three val2014 test images (100 x 100) plus train/restval images for the gallery.

    img 1: a person and a dog far apart -> either single removal is valid.
    img 2: the dog covers 40% of the frisbee (tau1 boundary) and is inside it; the person is too
    large to remove -> the only valid removal is {dog, frisbee}.
    img 3: a single class -> no query.
    """
    cats = [{"id": 1, "name": "person"}, {"id": 18, "name": "dog"}, {"id": 34, "name": "frisbee"}]
    images = [{"id": i, "width": 100, "height": 100, "file_name": f"COCO_val2014_{i:012d}.jpg"} for i in (1, 2, 3)]
    anns = [
        # image 1: two well separated classes
        (1, 1, [0, 0, 30, 30]),
        (1, 18, [60, 60, 30, 30]),
        # image 2: the dog covers 40 of the frisbee's 100 px (0.4, not < tau1); the person is apart
        (2, 34, [0, 0, 100, 1]),
        (2, 18, [0, 0, 40, 1]),
        (2, 1, [0, 20, 100, 75]),  # 0.75 of the image: too large to remove (tau3)
        # image 3: one class only
        (3, 1, [0, 0, 10, 10]),
    ]
    annotations = [
        {"id": n + 1, "image_id": img, "category_id": cat, "bbox": box, "area": box[2] * box[3], "iscrowd": 0,
         "segmentation": []}
        for n, (img, cat, box) in enumerate(anns)
    ]  # fmt: skip
    (root / "annotations").mkdir(parents=True)
    instances = {"images": images, "annotations": annotations, "categories": cats}
    (root / "annotations" / "instances_val2014.json").write_text(json.dumps(instances))
    dataset = karpathy(
        [
            (1, "val2014", images[0]["file_name"], "test", ["A man and his dog.", "A person outside."]),
            (2, "val2014", images[1]["file_name"], "test", ["A dog with a frisbee near a man."]),
            (3, "val2014", images[2]["file_name"], "test", ["A woman."]),
            (9, "train2014", "COCO_train2014_000000000009.jpg", "train",
             ["A hot dog on a plate.", "Two people throwing frisbees.", "A puppy."]),
            (10, "val2014", "COCO_val2014_000000000010.jpg", "restval", ["Dogs and a skateboard."]),
        ]
    )  # fmt: skip
    (root / "dataset_coco.json").write_text(json.dumps(dataset))


def test_prepare_coco(tmp_path: Path) -> None:
    coco_fixture(tmp_path / "src")
    bench = BY_ID["coco-5k-decorrelated"]
    with deviation_expected():  # a toy source, forced: the warning is expected
        [path] = TASK.prepare(bench, str(tmp_path / "src"), tmp_path / "data", force=True)
    assert path == tmp_path / "data" / "coco-5k-decorrelated" / "manifest.json"
    doc = json.loads(path.read_text())
    issues = IssueList()
    schema_issues(doc, SCHEMA_PATH, issues)
    assert not issues, issues.report()
    assert len(doc["classes"]) == 80
    queries = {q["source_image_id"]: q for q in doc["queries"]}
    # Image 3 has one class; image 2: removing the dog leaves the frisbee 40% erased (rejected),
    # removing the frisbee swallows the dog (> tau2) leaving the person: {dog, frisbee} removed.
    assert set(queries) == {1, 2}
    q2 = queries[2]
    assert q2["removed_classes"] == ["dog", "frisbee"] and q2["present_classes"] == ["person"]
    assert q2["id"] == "2-dog+frisbee" and q2["file_name"] == "2-dog+frisbee.png"
    assert q2["source_file"] == "val2014/COCO_val2014_000000000002.jpg"
    assert sorted(map(tuple, q2["removed_boxes"])) == [(0, 0, 40, 1), (0, 0, 100, 1)]
    # Gallery: every caption of every split, in file order, with mentions.
    g = doc["gallery"]
    assert g["caption_ids"] == list(range(8))
    classes = doc["classes"]
    mentions = [
        sorted(classes[c] for c in g["mention_classes"][a:b])
        for a, b in zip(g["mention_indptr"], g["mention_indptr"][1:])
    ]
    assert mentions == [
        ["dog", "person"], ["person"], ["dog", "frisbee", "person"], ["person"],
        ["hot dog"], ["frisbee", "person"], ["dog"], ["dog", "skateboard"],
    ]  # fmt: skip
    # q2 (dog, frisbee removed; person present): captions 1, 3 mention only the person -> R = 2
    assert q2["n_relevant"] == 2
    # Image 1: both single removals are accepted; the sha256 rule picks one of the two.
    assert queries[1]["removed_classes"] in (["dog"], ["person"])
    gt = load_manifest(path)
    assert gt.caption_index.get("7") == 7 and gt.caption_index.get("07") is None


def test_choose_is_deterministic_and_uses_every_candidate() -> None:
    picks = {choose(["x", "y", "z"], i) for i in range(50)}  # type: ignore[arg-type]
    assert picks == {"x", "y", "z"}
    assert choose(["x", "y"], 12345) == choose(["x", "y"], 12345)  # type: ignore[arg-type]
    assert choose([], 1) is None


SENTENCES = (
    "[/EN#1/people A man] plays [/EN#2/instruments a guitar] next to [/EN#3/animals a dog] .\n"
    "[/EN#1/people A musician] performs on [/EN#4/scene a street] .\n"
)
XML = """<annotation><filename>1000.jpg</filename><size><width>100</width><height>100</height>
<depth>3</depth></size>
<object><name>1</name><bndbox><xmin>0</xmin><ymin>0</ymin><xmax>29</xmax><ymax>29</ymax></bndbox></object>
<object><name>2</name><bndbox><xmin>50</xmin><ymin>50</ymin><xmax>59</xmax><ymax>59</ymax></bndbox></object>
<object><name>3</name><name>9</name><bndbox><xmin>80</xmin><ymin>0</ymin><xmax>89</xmax><ymax>9</ymax></bndbox></object>
<object><name>4</name><scene>1</scene></object>
</annotation>"""


def test_parse_entities() -> None:
    text, phrases = parse_entities_sentence(SENTENCES.splitlines()[0])
    assert text == "A man plays a guitar next to a dog ."
    assert phrases == [("1", ["people"]), ("2", ["instruments"]), ("3", ["animals"])]
    assert parse_entities_sentence("[/EN#7/clothing/other a hat] .")[1] == [("7", ["clothing", "other"])]
    w, h, boxes = parse_entities_boxes(XML)
    assert (w, h) == (100, 100)
    assert boxes == [("1", (0, 0, 30, 30)), ("2", (50, 50, 10, 10)), ("3", (80, 0, 10, 10)), ("9", (80, 0, 10, 10))]


def test_prepare_flickr(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "flickr30k_entities" / "Sentences").mkdir(parents=True)
    (src / "flickr30k_entities" / "Annotations").mkdir(parents=True)
    (src / "flickr30k_entities" / "Sentences" / "1000.txt").write_text(SENTENCES)
    (src / "flickr30k_entities" / "Annotations" / "1000.xml").write_text(XML)
    (src / "flickr30k_entities" / "Sentences" / "2000.txt").write_text("[/EN#5/vehicles A car] .\n")
    doc = karpathy(
        [
            # Karpathy order differs from the Entities file: mentions follow the text, not the index.
            (0, "", "1000.jpg", "test", ["A musician performs on a street.", "A man plays a guitar next to a dog."]),
            (1, "", "2000.jpg", "train", ["A car."]),
        ]
    )
    (src / "dataset_flickr30k.json").write_text(json.dumps(doc))
    with deviation_expected():  # a toy source, forced: the warning is expected
        [path] = TASK.prepare(BY_ID["flickr30k-1k-decorrelated"], str(src), tmp_path / "data", force=True)
    gt = json.loads(path.read_text())
    assert gt["classes"] == ["people", "animals", "vehicles", "instruments"]
    g = gt["gallery"]
    assert g["mention_indptr"] == [0, 1, 4, 5]
    assert sorted(g["mention_classes"][1:4]) == [0, 1, 3] and g["mention_classes"][4] == 2
    # Three classes, well apart: every single removal is valid; one is chosen.
    [q] = gt["queries"]
    assert q["source_image_id"] == "1000" and len(q["removed_classes"]) == 1
    assert sorted(q["removed_classes"] + q["present_classes"]) == ["animals", "instruments", "people"]


def mini_fixture(root: Path) -> None:
    (root / "decorrelated").mkdir(parents=True)
    queries = {
        "format": "vlbench-mini-removals",
        "version": 1,
        "params": {"tau1": 0.4, "tau2": 0.8, "tau3": 0.7, "fill": "exact"},
        "partner_pairs": [["star", "ring"]],
        "queries": [
            {"id": "m1", "source_image_id": 5, "file_name": "m1.png", "removed_classes": ["ring"],
             "present_classes": ["star"], "removed_boxes": [[1, 2, 3, 4]], "group": "partner"},
            {"id": "m2", "source_image_id": 6, "file_name": "m2.png", "removed_classes": ["moon"],
             "present_classes": ["heart"], "removed_boxes": [[0, 0, 5, 5]], "group": "control"},
        ],
    }  # fmt: skip
    (root / "decorrelated" / "queries.json").write_text(json.dumps(queries))
    dataset = karpathy(
        [
            (5, "test", "a.png", "test", ["a red star and a blue ring", "two stars"]),
            (6, "test", "b.png", "test", ["a heart", "a moon and a heart"]),
            (7, "train", "c.png", "train", ["hoops and stars"]),
        ]
    )
    (root / "dataset_mini.json").write_text(json.dumps(dataset))


MINI_WORDS = {"star": ("star", "stars"), "ring": ("ring", "rings", "hoop", "hoops"), "heart": ("heart", "hearts"),
              "moon": ("moon", "moons")}  # fmt: skip


def test_prepare_mini_with_own_table(tmp_path: Path) -> None:
    mini_fixture(tmp_path)
    matcher = MentionMatcher(tuple(MINI_WORDS), MINI_WORDS)
    with deviation_expected():  # a toy source, forced: the warning is expected
        doc = prepare_mini("mini-decorrelated", tmp_path, matcher, force=True)  # a 3-image world
    assert doc["groups"] == ["control", "partner"]
    assert [(q["id"], q["group"], q["n_relevant"]) for q in doc["queries"]] == [("m1", "partner", 1), ("m2", "control", 1)]
    assert doc["params"]["partner_pairs"] == [["star", "ring"]]


def test_prepare_mini_through_the_task(tmp_path: Path) -> None:
    pytest.importorskip("vlbench.tasks.mini.world")
    mini_fixture(tmp_path / "src")
    bench = BY_ID["mini-decorrelated"]
    with deviation_expected():  # a toy source, forced: the warning is expected
        [path] = TASK.prepare(bench, str(tmp_path / "src"), tmp_path / "data", force=True)
    assert path == tmp_path / "data" / "mini-decorrelated" / "mini-decorrelated.json"
    gt = TASK.load_ground_truth(bench, GroundTruthFiles({"manifest": path}, {}))
    assert gt.query_ids == ["m1", "m2"] and gt.groups == ["control", "partner"]


def test_prepare_rejects_a_missing_source(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        TASK.prepare(BY_ID["coco-5k-decorrelated"], str(tmp_path / "nope"), tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError):
        TASK.prepare(BY_ID["coco-5k-decorrelated"], str(tmp_path / "empty"), tmp_path)


def test_prepare_on_a_generated_mini_world(tmp_path: Path) -> None:
    mini = pytest.importorskip("vlbench.tasks.mini")
    build = pytest.importorskip("vlbench.tasks.mini.build")
    from vlbench.tasks.mini import world

    src = tmp_path / "world"
    mini.write_mini_benchmark(src, config=build.MiniConfig(n_train=60, n_val=10, n_test=80), images=False)
    bench = BY_ID["mini-decorrelated"]
    with deviation_expected():  # a toy source, forced: the warning is expected
        [path] = TASK.prepare(bench, str(src), tmp_path / "data", force=True)
    doc = json.loads(path.read_text())
    issues = IssueList()
    schema_issues(doc, SCHEMA_PATH, issues)
    assert not issues, issues.report()
    source = json.loads((src / "decorrelated" / "queries.json").read_text())
    assert [q["id"] for q in doc["queries"]] == [str(q["id"]) for q in source["queries"]]
    assert set(doc["groups"]) <= {"partner", "control"} and doc["groups"]
    # Mentions agree with the mini world's own word lookup, caption by caption.
    dataset = json.loads((src / "dataset_mini.json").read_text())
    raws = [s["raw"] for img in dataset["images"] for s in img["sentences"]]
    g = doc["gallery"]
    for i, raw in enumerate(raws):
        own = {world.class_of_word(t) for t in raw.lower().replace(".", " ").replace(",", " ").split()} - {None}
        got = {doc["classes"][c] for c in g["mention_classes"][g["mention_indptr"][i] : g["mention_indptr"][i + 1]]}
        assert got == own, raw
    # The chance floor validates; an oracle that lists correct captions first scores 1.
    gt = TASK.load_ground_truth(bench, GroundTruthFiles({"manifest": path}, {}))
    floor = TASK.random_predictions(gt, bench, seed=0)
    assert TASK.check(floor, gt, bench, IssueList()) is not None
    from vlbench.tasks.decorrelated.metrics import relevance

    ids = gt.caption_index.ids()
    ok = relevance(np.broadcast_to(gt.caption_masks, (len(gt.query_ids), *gt.caption_masks.shape)), gt.removed, gt.present)
    oracle = {q: [ids[i] for i in np.argsort(~ok[j], kind="stable")[:10]] for j, q in enumerate(gt.query_ids)}
    scores = TASK.score(TASK.check({"image_to_text": oracle}, gt, bench, IssueList()), gt, bench).scores
    assert scores["ODmAP@10"] == 1.0 and scores["ODmAP@1/partner"] == 1.0


def test_cli_prepare_then_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vlbench.cli import main

    coco_fixture(tmp_path / "src")
    data = tmp_path / "data"
    args = ["data", "prepare", "coco-5k-decorrelated", "--source", str(tmp_path / "src"), "--data-dir", str(data)]
    assert main(args) == 2  # a toy source: refused, with what was expected and found
    assert "images in split 'test': expected 5,000, found" in capsys.readouterr().err
    assert main([*args, "--force"]) == 0
    doc = json.loads((data / "coco-5k-decorrelated" / "manifest.json").read_text())
    queries = [q["id"] for q in doc["queries"]]
    # The fixture gallery has 8 captions (ids 0..7), so no list can reach 10: the CLI reports
    # list_too_short for each query and exits 1.
    sub = {"vlbench": 1, "benchmark": "coco-5k-decorrelated", "task": "decorrelated_retrieval",
           "meta": {"method": "test"}, "predictions": {"image_to_text": {q: list(range(8)) for q in queries}}}  # fmt: skip
    path = tmp_path / "sub.json"
    path.write_text(json.dumps(sub))
    capsys.readouterr()
    assert main(["validate", str(path), "--data-dir", str(data)]) == 1
    out = capsys.readouterr()
    assert out.err.count("[list_too_short]") == len(queries) == 2


def test_a_coco_manifest_of_the_old_matcher_is_prepared_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """coco-5k-decorrelated 1.1 changed the class matcher (no phrase across punctuation): a manifest
    prepared by 1.0 ("coco-table4") holds the old mentions, so scoring refuses it and says what to do."""
    from vlbench.cli import main
    from vlbench.tasks.decorrelated.mentions import COCO_MATCHER

    coco_fixture(tmp_path / "src")
    data = tmp_path / "data"
    with deviation_expected():  # a toy source, forced: the warning is expected
        [path] = TASK.prepare(BY_ID["coco-5k-decorrelated"], str(tmp_path / "src"), data, force=True)
    doc = json.loads(path.read_text())
    assert doc["params"]["matcher"] == COCO_MATCHER and BY_ID["coco-5k-decorrelated"].version == "1.1"
    sub = {"vlbench": 1, "benchmark": "coco-5k-decorrelated", "task": "decorrelated_retrieval",
           "meta": {"method": "test"}, "predictions": {"image_to_text": {q["id"]: list(range(8)) for q in doc["queries"]}}}
    (tmp_path / "sub.json").write_text(json.dumps(sub))
    assert main(["validate", str(tmp_path / "sub.json"), "--data-dir", str(data)]) == 1  # read: lists too short
    doc["params"]["matcher"] = "coco-table4"
    path.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "sub.json"), "--data-dir", str(data)]) == 2
    err = capsys.readouterr().err
    assert "prepared with the class matcher 'coco-table4'" in err
    assert "vlbench data prepare coco-5k-decorrelated --source DIR" in err


def test_the_coco_gallery_mentions_end_at_punctuation(tmp_path: Path) -> None:
    coco_fixture(tmp_path / "src")
    dataset = json.loads((tmp_path / "src" / "dataset_coco.json").read_text())
    extra = ["The grill is hot. Dog sleeps on the porch.", "A bottle of red wine, glass of water.", "A hot-dog."]
    dataset["images"][3]["sentences"] += [{"sentid": 8 + i, "raw": t, "tokens": [], "imgid": 9} for i, t in enumerate(extra)]
    dataset["images"][3]["sentids"] += [8, 9, 10]
    (tmp_path / "src" / "dataset_coco.json").write_text(json.dumps(dataset))
    with deviation_expected():  # a toy source, forced: the warning is expected
        [path] = TASK.prepare(BY_ID["coco-5k-decorrelated"], str(tmp_path / "src"), tmp_path / "data", force=True)
    doc = json.loads(path.read_text())
    g, classes = doc["gallery"], doc["classes"]
    mentions = {cid: sorted(classes[c] for c in g["mention_classes"][a:b])
                for cid, a, b in zip(g["caption_ids"], g["mention_indptr"], g["mention_indptr"][1:])}
    assert mentions[8] == ["dog"] and mentions[9] == ["bottle", "cup", "wine glass"] and mentions[10] == ["hot dog"]
