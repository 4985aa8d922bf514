"""`--references` given the wrong file: one sentence, not a KeyError or one problem per image."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlbench.cli import main

REPO = Path(__file__).resolve().parents[3]
MINI_REFERENCES = REPO / "tasks" / "mini" / "data" / "captions" / "references.json"


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    """The bundled random caption submission as a bare COCO results list."""
    doc = json.loads((REPO / "submissions" / "mini-captions" / "random.json").read_text(encoding="utf-8"))
    path = tmp_path / "captions.json"
    path.write_text(json.dumps(doc["predictions"]), encoding="utf-8")
    return path


def _ids() -> list[int]:
    return [row[0] for row in json.loads(MINI_REFERENCES.read_text(encoding="utf-8"))["images"]]


def test_a_coco_instances_file_is_named(bare: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = _ids()
    instances = {"images": [{"id": i} for i in ids],
                 "annotations": [{"id": 1, "image_id": ids[0], "bbox": [0, 0, 1, 1], "category_id": 1, "area": 1,
                                  "iscrowd": 0, "segmentation": []}],
                 "categories": [{"id": 1, "name": "star"}]}
    path = tmp_path / "instances_val2014.json"
    path.write_text(json.dumps(instances), encoding="utf-8")
    assert main(["score", str(bare), "--references", str(path), "--bootstrap", "0"]) == 2
    err = capsys.readouterr().err
    assert "is an instances (object detection) file, not a captions file" in err and "captions_val2014" in err
    assert "KeyError" not in err and len(err.strip().splitlines()) == 1


def test_references_of_another_split_are_one_problem(bare: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    other = {"images": [{"id": i + 100_000} for i in _ids()],
             "annotations": [{"id": k, "image_id": i + 100_000, "caption": "a red star"} for k, i in enumerate(_ids())]}
    path = tmp_path / "captions_other.json"
    path.write_text(json.dumps(other), encoding="utf-8")
    assert main(["score", str(bare), "--references", str(path), "--bootstrap", "0"]) == 1
    err = capsys.readouterr().err
    assert "1 problem found" in err and "[no_matching_images] none of the 250 image ids" in err
    assert "another split or dataset" in err and str(path) in err
    # one id in common: the usual per-image problems, each with its pointer
    other["annotations"].append({"id": 10**6, "image_id": _ids()[0], "caption": "a star"})
    other["images"].append({"id": _ids()[0]})
    path.write_text(json.dumps(other), encoding="utf-8")
    assert main(["score", str(bare), "--references", str(path), "--bootstrap", "0"]) == 1
    assert "unknown_image" in capsys.readouterr().err


@pytest.mark.parametrize(("content", "says"), [(b"", "the file is empty"), (b"image_id,caption\n", "looks like CSV"),
                                              (b'{"annotations": [{"caption": "a d', "it looks truncated")])
def test_a_references_file_that_is_not_json(bare: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            content: bytes, says: str) -> None:
    path = tmp_path / "refs.json"
    path.write_bytes(content)
    assert main(["score", str(bare), "--references", str(path), "--bootstrap", "0"]) == 2
    err = capsys.readouterr().err
    assert says in err and "Expecting value" not in err and len(err.strip().splitlines()) == 1
