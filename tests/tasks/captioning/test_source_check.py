"""`vlbench data prepare` for the caption benchmarks refuses sources that are not the benchmark's
(what was expected, what was found, exit 2); --force prepares anyway and records the deviation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import deviation_expected
from tests.tasks.retrieval.test_source_check import shaped
from vlbench.backports import strict_zip
from vlbench.cli import main
from vlbench.registry import registry
from vlbench.tasks.captioning.loaders import load_references

REALDATA = Path(__file__).resolve().parents[4] / "shared" / "realdata"
ECE285 = REALDATA / "ece285" / "captions_val2014.json"


def prepare(capsys: pytest.CaptureFixture[str], benchmark: str, source: Path, data: Path, *extra: str) -> tuple[int, str]:
    code = main(["data", "prepare", benchmark, "--source", str(source), "--data-dir", str(data), *extra])
    return code, capsys.readouterr().err


def captions_doc(image_ids: list[int], per_image: int = 5) -> dict:
    anns = [{"id": 10 * i + j, "image_id": i, "caption": f"a photo of thing {i} number {j}"}
            for i in image_ids for j in range(per_image)]
    return {"images": [{"id": i} for i in image_ids], "annotations": anns}


def test_coco_karpathy_test_refuses_the_mini_world_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "dataset_mini.json"
    source.write_text(json.dumps(shaped({"train": 2000, "val": 250, "test": 250}, "mini", coco=True)))
    code, err = prepare(capsys, "coco-karpathy-test", source, tmp_path / "data")
    assert code == 2 and "is not the source of coco-karpathy-test" in err
    assert "the 'dataset' field: expected 'coco', found 'mini'" in err
    assert "images in split 'test': expected 5,000, found 250" in err
    assert not (tmp_path / "data").exists()
    code, err = prepare(capsys, "coco-karpathy-test", source, tmp_path / "data", "--force")
    assert code == 0 and "warning: --force" in err
    written = tmp_path / "data" / "coco-karpathy-test" / "references.json"
    doc = json.loads(written.read_text())
    assert doc["source_check"]["forced"] is True and doc["source_check"]["source"] == str(source)
    assert load_references(written).n_images == 250


def test_captions_file_must_caption_every_test_image(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A cut-down captions_val2014.json: the test images it lacks are named, and a forced prepare
    keeps the ones it has."""
    folder = tmp_path / "src"
    folder.mkdir()
    karpathy = shaped({"test": 6}, "coco", coco=True)
    test_ids = [e["cocoid"] for e in karpathy["images"]]
    (folder / "dataset_coco.json").write_text(json.dumps(karpathy))
    (folder / "captions_val2014.json").write_text(json.dumps(captions_doc(test_ids[:4] + [7, 8])))
    code, err = prepare(capsys, "coco-karpathy-test", folder, tmp_path / "data")
    assert code == 2
    assert "images in captions_val2014.json (COCO 2014 val): expected 40,504, found 6" in err
    assert "captions in captions_val2014.json (COCO 2014 val): expected 202,654, found 30" in err
    assert f"Karpathy test images with captions in captions_val2014.json: expected 6, found 4 (e.g. {test_ids[4]} has none)" in err
    code, err = prepare(capsys, "coco-karpathy-test", folder, tmp_path / "data", "--force")
    assert code == 0
    written = tmp_path / "data" / "coco-karpathy-test" / "references.json"
    assert load_references(written).ids == test_ids[:4]
    assert "Karpathy test images with captions in captions_val2014.json" in {
        d["what"] for d in json.loads(written.read_text())["source_check"]["deviations"]}


def test_mini_captions_checks_the_generator_shape(tmp_path: Path) -> None:
    b = registry().benchmark("mini-captions")
    task = registry().task_of(b)
    world = tmp_path / "world"
    (world / "annotations").mkdir(parents=True)
    (world / "annotations" / "captions_test.json").write_text(json.dumps(captions_doc([1, 2, 3], per_image=4)))
    from vlbench.errors import UsageError

    with pytest.raises(UsageError) as refused:
        task.prepare(b, str(world), tmp_path / "data")
    assert "expected 250, found 3" in str(refused.value) and "references per image: expected at least 5" in str(refused.value)
    with deviation_expected():  # a toy source, forced: the warning is expected
        [path] = task.prepare(b, str(world), tmp_path / "data", force=True)
    assert len(json.loads(path.read_text())["source_check"]["deviations"]) == 2


@pytest.mark.skipif(not ECE285.is_file(), reason="../shared/realdata is absent")
def test_real_cut_down_val2014_captions_need_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ece285's captions_val2014.json is a real COCO file cut to 4,800 images: refused as the
    benchmark's source, usable with --force (its images are the ones scored)."""
    real = json.loads(ECE285.read_text())
    have = sorted({a["image_id"] for a in real["annotations"]})
    karpathy = shaped({"test": 5000}, "coco", coco=True)
    ids = have + [9_000_000 + i for i in range(5000 - len(have))]
    for entry, cocoid in strict_zip(karpathy["images"], ids):
        entry["cocoid"] = cocoid
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "dataset_coco.json").write_text(json.dumps(karpathy))
    (folder / "captions_val2014.json").symlink_to(ECE285)
    code, err = prepare(capsys, "coco-karpathy-test", folder, tmp_path / "data")
    assert code == 2
    assert f"images in captions_val2014.json (COCO 2014 val): expected 40,504, found {len(real['images']):,}" in err
    assert f"Karpathy test images with captions in captions_val2014.json: expected 5,000, found {len(have):,}" in err
    assert prepare(capsys, "coco-karpathy-test", folder, tmp_path / "data", "--force")[0] == 0
    refs = load_references(tmp_path / "data" / "coco-karpathy-test" / "references.json")
    assert refs.ids == have and min(len(c) for c in refs.captions) >= 5
