"""`vlbench data prepare` refuses a Karpathy file that is not the benchmark's, says what was expected
and what was found (exit 2), and with --force prepares anyway and records the deviation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import deviation_expected
from vlbench.cli import main
from vlbench.errors import UsageError
from vlbench.ground_truth import locate_ground_truth
from vlbench.registry import registry
from vlbench.tasks.karpathy import FROM_ROWS, OFFICIAL, check_karpathy

REALDATA = Path(__file__).resolve().parents[4] / "shared" / "realdata"
RECONSTRUCTED = REALDATA / "derived" / "dataset_flickr30k_test_reconstructed.json"


def shaped(splits: dict[str, int], dataset: str | None, captions: int = 5, coco: bool = False) -> dict:
    """A Karpathy-format document with these images per split (in this order), `captions` each."""
    images, sentid, imgid = [], 0, 0
    for split, count in splits.items():
        for _ in range(count):
            sentences = [{"sentid": sentid + j, "raw": f"a photo {imgid} {j}", "imgid": imgid} for j in range(captions)]
            entry = {"split": split, "imgid": imgid, "sentids": [s["sentid"] for s in sentences],
                     "sentences": sentences, "filename": f"{1000000 + imgid}.jpg"}
            if coco:
                entry["cocoid"] = 100000 + imgid
            images.append(entry)
            sentid += captions
            imgid += 1
    doc: dict = {"images": images}
    if dataset is not None:
        doc["dataset"] = dataset
    return doc


def flickr_official_shape() -> dict:
    return shaped(dict(OFFICIAL["dataset_flickr30k.json"].splits), "flickr30k")


def prepare(capsys: pytest.CaptureFixture[str], benchmark: str, source: Path, data: Path, *extra: str) -> tuple[int, str]:
    code = main(["data", "prepare", benchmark, "--source", str(source), "--data-dir", str(data), *extra])
    return code, capsys.readouterr().err


def test_coco_refuses_the_mini_world_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The bug report: the mini world's Karpathy file was accepted as COCO."""
    source = tmp_path / "dataset_mini.json"
    source.write_text(json.dumps(shaped({"train": 2000, "val": 250, "test": 250}, "mini", coco=False)))
    for benchmark in ("coco-5k", "coco-1k"):
        code, err = prepare(capsys, benchmark, source, tmp_path / "data")
        assert code == 2 and "Traceback" not in err
        assert f"is not the source of {benchmark}" in err
        assert "the 'dataset' field: expected 'coco', found 'mini'" in err
        assert "images in split 'test': expected 5,000, found 250" in err
        assert "images per split: expected train 82,783, restval 30,504, val 5,000, test 5,000, found train 2,000, val 250, test 250" in err
        assert "captions in the file: expected 616,767, found 12,500" in err
        assert "--force" in err
        assert not (tmp_path / "data" / benchmark).exists()  # nothing written


def test_official_shape_passes_and_force_is_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    official = tmp_path / "official"
    official.mkdir()
    doc = flickr_official_shape()
    (official / "dataset_flickr30k.json").write_text(json.dumps(doc))
    code, err = prepare(capsys, "flickr30k-1k", official, tmp_path / "a")
    assert code == 0 and err == ""
    clean = json.loads((tmp_path / "a" / "flickr30k-1k" / "ground_truth.json").read_text())
    assert "source_check" not in clean and len(clean["images"]) == 1000 and len(clean["captions"]) == 5000
    # the same file with --force: nothing to record, the same bytes
    assert prepare(capsys, "flickr30k-1k", official, tmp_path / "b", "--force")[0] == 0
    assert (tmp_path / "b" / "flickr30k-1k" / "ground_truth.json").read_bytes() == \
        (tmp_path / "a" / "flickr30k-1k" / "ground_truth.json").read_bytes()
    # a deviation: one test image with four captions, another dataset name
    doc["dataset"] = "flickr8k"
    test_image = next(e for e in doc["images"] if e["split"] == "test")
    test_image["sentences"].pop()
    test_image["sentids"].pop()
    (official / "dataset_flickr30k.json").write_text(json.dumps(doc))
    code, err = prepare(capsys, "flickr30k-1k", official, tmp_path / "c")
    assert code == 2
    assert "the 'dataset' field: expected 'flickr30k', found 'flickr8k'" in err
    assert "captions per test image: expected at least 5, found fewer on 1 images" in err
    assert "captions in the file: expected 155,070, found 155,069" in err
    code, err = prepare(capsys, "flickr30k-1k", official, tmp_path / "c", "--force")
    assert code == 0 and "warning: --force" in err
    forced = json.loads((tmp_path / "c" / "flickr30k-1k" / "ground_truth.json").read_text())
    record = forced.pop("source_check")
    assert record["forced"] is True and record["source"] == str(official)
    assert {d["what"] for d in record["deviations"]} == {"the 'dataset' field", "captions per test image",
                                                          "captions in the file"}
    assert record["expected"].startswith("dataset_flickr30k.json with dataset 'flickr30k'")
    assert forced["images"] == clean["images"] and len(forced["captions"]) == 4999


def test_each_difference_is_reported() -> None:
    expected = OFFICIAL["dataset_flickr30k.json"]
    assert check_karpathy(flickr_official_shape(), "dataset_flickr30k.json") == []
    doc = flickr_official_shape()
    del doc["dataset"]
    assert [m.what for m in check_karpathy(doc, "dataset_flickr30k.json")] == ["the 'dataset' field"]
    assert str(check_karpathy(doc, "dataset_flickr30k.json")[0]) == \
        "the 'dataset' field: expected 'flickr30k', found no 'dataset' field"
    # a test-only cut: right test split, the other splits and the caption total wrong
    cut = shaped({"test": expected.splits["test"]}, "flickr30k")
    assert [m.what for m in check_karpathy(cut, "dataset_flickr30k.json")] == ["images per split", "captions in the file"]
    # val and test swapped in size
    swapped = shaped({"train": 29_000, "val": 1_000, "test": 1_014}, "flickr30k")
    found = {m.what: m.found for m in check_karpathy(swapped, "dataset_flickr30k.json")}
    assert found == {"images in split 'test'": "1,014", "images per split": "train 29,000, val 1,000, test 1,014"}
    # a hub dataset's rows: no dataset field and the hub's split names are not errors, counts are
    rows = flickr_official_shape()
    del rows["dataset"]
    for entry in rows["images"]:
        entry["split"] = {"val": "validation"}.get(entry["split"], entry["split"])
    rows[FROM_ROWS] = "someone/flickr30k"
    assert check_karpathy(rows, "dataset_flickr30k.json") == []
    rows["images"] = rows["images"][1:]  # one train image fewer
    assert [m.what for m in check_karpathy(rows, "dataset_flickr30k.json")] == ["images in all splits",
                                                                               "captions in the file"]


def test_mini_retrieval_checks_the_generator_shape(tmp_path: Path) -> None:
    b = registry().benchmark("mini-retrieval")
    task = registry().task_of(b)
    small = shaped({"train": 20, "val": 5, "test": 5}, "mini")
    (tmp_path / "dataset_mini.json").write_text(json.dumps(small))
    with pytest.raises(UsageError, match="images in split 'test': expected 250, found 5"):
        task.prepare(b, str(tmp_path), tmp_path / "data")
    with deviation_expected():  # a toy source, forced: the warning is expected
        [path] = task.prepare(b, str(tmp_path), tmp_path / "data", force=True)
    assert json.loads(path.read_text())["source_check"]["expected"].startswith("dataset_mini.json with dataset 'mini'")


@pytest.mark.skipif(not RECONSTRUCTED.is_file(), reason="../shared/realdata is absent")
def test_reconstructed_flickr_file_needs_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The realdata test-only Karpathy file is not the official one: refused, then accepted with
    --force, and the ground truth says so."""
    code, err = prepare(capsys, "flickr30k-1k", RECONSTRUCTED, tmp_path / "data")
    assert code == 2 and "reconstructed test-only Flickr30k file" in err
    assert "images per split: expected train 29,000, val 1,014, test 1,000, found test 1,000" in err
    code, err = prepare(capsys, "flickr30k-1k", RECONSTRUCTED, tmp_path / "data", "--force")
    assert code == 0
    gt = json.loads((tmp_path / "data" / "flickr30k-1k" / "ground_truth.json").read_text())
    assert (len(gt["images"]), len(gt["captions"])) == (1000, 5000)
    assert gt["source_check"]["source"] == str(RECONSTRUCTED)
    assert gt["source_check"]["deviations"][0]["what"] == "file (by sha256)"
    # scoring works on it, and the result records the forced ground truth's sha256
    b = registry().benchmark("flickr30k-1k")
    task = registry().task_of(b)
    preds = task.random_predictions(task.load_ground_truth(b, locate_ground_truth(b, tmp_path / "data")), b, seed=0)
    sub = tmp_path / "sub.json"
    sub.write_text(json.dumps({"vlbench": 1, "benchmark": "flickr30k-1k", "task": "retrieval",
                               "meta": {"method": "random"}, "predictions": preds}))
    assert main(["score", str(sub), "--data-dir", str(tmp_path / "data"), "--bootstrap", "0"]) == 0
