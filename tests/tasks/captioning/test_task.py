"""The captioning task: reference formats, validation issues, CLI with --references, prepare,
the chance floor, SPICE detection."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import deviation_expected
from vlbench.backports import strict_zip
from vlbench.cli import main
from vlbench.errors import InvalidSubmission, UsageError
from vlbench.registry import registry
from vlbench.submission import validate_document
from vlbench.tasks.captioning import TASK
from vlbench.tasks.captioning import prepare as prep
from vlbench.tasks.captioning.loaders import load_references
from vlbench.tasks.captioning.spice import CORENLP_JARS, spice_status
from vlbench.tasks.captioning.task import MAX_CAPTION_CHARS

IMAGES = {391895: ["A man riding a bike.", "A person on a bicycle."], 522418: ["A woman cutting a cake."],
          184613: ["A boy with cows.", "Kids and cattle", "Cows in a field."]}


def coco_captions_doc(images=IMAGES) -> dict:
    anns, k = [], 0
    for iid, caps in images.items():
        for c in caps:
            k += 1
            anns.append({"id": k, "image_id": iid, "caption": c})
    return {"images": [{"id": i, "file_name": f"COCO_val2014_{i:012d}.jpg"} for i in images], "annotations": anns}


def karpathy_doc(images=IMAGES, splits=("test", "test", "val")) -> dict:
    return {"images": [
        {"cocoid": iid, "filename": f"COCO_val2014_{iid:012d}.jpg", "split": s, "imgid": n,
         "sentences": [{"raw": c, "tokens": c.lower().split()} for c in caps]}
        for n, ((iid, caps), s) in enumerate(strict_zip(images.items(), splits))
    ]}


@pytest.fixture
def refs_file(tmp_path) -> Path:
    p = tmp_path / "captions_val2014.json"
    p.write_text(json.dumps(coco_captions_doc()))
    return p


def _validate(preds, refs_file):
    return validate_document(preds, benchmark_override=TASK.references_benchmark(refs_file))


def test_reference_formats_agree(tmp_path, refs_file):
    coco = load_references(refs_file)
    assert coco.ids == list(IMAGES) and coco.captions == list(IMAGES.values())
    k = tmp_path / "dataset_coco.json"
    k.write_text(json.dumps(karpathy_doc()))
    kar = load_references(k)
    assert kar.ids == [391895, 522418] and kar.captions == coco.captions[:2]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"foo": 1}))
    with pytest.raises(UsageError, match="not a COCO captions"):
        load_references(bad)
    bad.write_text(json.dumps({"images": [], "annotations": []}))
    with pytest.raises(UsageError, match="no image"):
        load_references(bad)
    bad.write_text(json.dumps(coco_captions_doc({1: ["a cat"], 2: []})))
    with pytest.raises(UsageError, match="image 2 has no reference"):
        load_references(bad)


def test_valid_bare_list_and_empty_caption_warning(refs_file):
    preds = [{"image_id": i, "caption": c[0]} for i, c in IMAGES.items()]
    preds[1]["caption"] = ""
    sub = _validate(preds, refs_file)
    assert sub.bare and sub.parsed.captions[1] == ""
    assert "empty caption" in sub.parsed.warnings[0] and "/predictions/1/caption" in sub.parsed.warnings[0]


def test_every_problem_is_listed(refs_file):
    preds = [
        {"image_id": 391895, "caption": "a bike"},
        {"image_id": 391895, "caption": "again"},
        {"image_id": "522418", "caption": "string id"},
        {"image_id": 7, "caption": "unknown"},
        {"image_id": 184613, "caption": 42},
        {"image_id": 184613, "caption": "x" * (MAX_CAPTION_CHARS + 1)},
        {"caption": "no id"},
        {"image_id": 522418.0, "caption": "float id"},
    ]
    with pytest.raises(InvalidSubmission) as info:
        _validate(preds, refs_file)
    got = {(i.code, i.pointer) for i in info.value.issues}
    assert ("duplicate_image", "/predictions/1/image_id") in got
    assert ("unknown_image", "/predictions/2/image_id") in got
    assert ("unknown_image", "/predictions/3/image_id") in got
    assert ("schema.type", "/predictions/4/caption") in got
    assert ("duplicate_image", "/predictions/5/image_id") in got
    assert ("missing_images", "/predictions") in got
    assert any(c == "schema.required" for c, _ in got)
    assert ("bad_image_id", "/predictions/7/image_id") in got
    hint = next(i.hint for i in info.value.issues if i.pointer == "/predictions/2/image_id")
    assert "write 522418" in hint


def test_too_long_caption_and_capped_missing_list(tmp_path):
    images = {i: [f"caption {i}"] for i in range(100)}
    p = tmp_path / "refs.json"
    p.write_text(json.dumps(coco_captions_doc(images)))
    with pytest.raises(InvalidSubmission) as info:
        _validate([{"image_id": 0, "caption": "y" * (MAX_CAPTION_CHARS + 1)}], p)
    by_code = {i.code: i for i in info.value.issues}
    assert by_code["caption_too_long"].pointer == "/predictions/0/caption"
    assert "99 of 100 images" in by_code["missing_images"].message and "and 79 more" in by_code["missing_images"].message


def test_cli_score_with_references(tmp_path, refs_file, capsys, monkeypatch):
    monkeypatch.setenv("VLBENCH_JAVA", str(tmp_path / "no-java"))  # METEOR still computed, in Python
    preds = tmp_path / "captions_results.json"
    preds.write_text(json.dumps([{"image_id": i, "caption": c[0]} for i, c in IMAGES.items()]))
    out = tmp_path / "result.json"
    assert main(["score", str(preds), "--references", str(refs_file), "--bootstrap", "50", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "CIDEr-D" in printed.out and "METEOR" in printed.out and "METEOR unavailable" not in printed.err
    rec = json.loads(out.read_text())
    assert set(rec["scores"]) == {"BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR", "ROUGE-L", "CIDEr-D", "CIDEr"}
    assert rec["scores"]["METEOR"] is not None and "SPICE" in rec["extra"]["unavailable"]
    assert rec["scores"]["ROUGE-L"] == pytest.approx(1.0)
    assert (tmp_path / rec["per_item"]).exists()


def test_cli_subset_scores_the_captioned_images(tmp_path, refs_file, capsys, monkeypatch):
    """--subset: 2 of the 3 reference images captioned score as a references file of those two
    alone; the coverage is printed and recorded; without --subset the file is refused."""
    monkeypatch.setenv("VLBENCH_JAVA", "none")
    two = {i: IMAGES[i] for i in (391895, 184613)}
    preds = tmp_path / "results.json"
    preds.write_text(json.dumps([{"image_id": i, "caption": c[-1].upper()} for i, c in reversed(two.items())]))
    only_two = tmp_path / "two.json"
    only_two.write_text(json.dumps(coco_captions_doc(two)))
    out, full = tmp_path / "subset.json", tmp_path / "full.json"
    args = ["score", str(preds), "--bootstrap", "20"]
    assert main([*args, "--references", str(refs_file), "--subset", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "scored the 2 images the results caption, of the 3 images of the references" in printed
    assert 'CIDEr-D is the score pycocoevalcap reports as "CIDEr"' in printed
    assert main([*args, "--references", str(only_two), "--out", str(full)]) == 0
    rec, ref = json.loads(out.read_text()), json.loads(full.read_text())
    assert rec["scores"] == ref["scores"] and rec["ci95"] == ref["ci95"]
    assert rec["n"] == {"images": 2, "references": 5, "reference_images": 3}
    assert rec["extra"]["subset"] == {"scored_images": 2, "reference_images": 3}
    assert "subset" not in ref["extra"] and rec["extra"]["pycocoevalcap_names"]["CIDEr-D"] == "CIDEr"
    capsys.readouterr()
    assert main([*args, "--references", str(refs_file)]) == 1  # full coverage is the default
    assert "missing_images" in capsys.readouterr().err
    # --subset is for a references file: a benchmark is scored on all its images
    assert main([*args, "--benchmark", "mini-captions", "--subset"]) == 2
    assert "--subset needs --references" in capsys.readouterr().err
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    assert main(["score", str(empty), "--references", str(refs_file), "--subset"]) == 1
    assert "no_images" in capsys.readouterr().err


def test_prepare_coco_karpathy_from_folder(tmp_path):
    src = tmp_path / "coco"
    src.mkdir()
    (src / "captions_val2014.json").write_text(json.dumps(coco_captions_doc()))
    (src / "dataset_coco.json").write_text(json.dumps(karpathy_doc()))
    b = registry().benchmark("coco-karpathy-test")
    with deviation_expected():  # a toy source, forced: the warning is expected
        [written] = TASK.prepare(b, str(src), tmp_path / "data", force=True)  # a 2-image toy source
    assert written == tmp_path / "data" / "coco-karpathy-test" / "references.json"
    refs = load_references(written)
    assert refs.ids == [391895, 522418]  # the Karpathy test images, sorted
    assert refs.captions == [IMAGES[391895], IMAGES[522418]]
    with deviation_expected():
        again = TASK.prepare(b, str(src), tmp_path / "data2", force=True)[0]
    assert again.read_bytes() == written.read_bytes()


def test_prepare_from_hub_ids(tmp_path, monkeypatch):
    b = registry().benchmark("coco-karpathy-test")
    folder = tmp_path / "snap"
    folder.mkdir()
    (folder / "dataset_coco.json").write_text(json.dumps(karpathy_doc()))
    monkeypatch.setattr(prep, "_hub_snapshot", lambda repo: folder)
    with deviation_expected():  # a toy source, forced: the warning is expected
        refs = load_references(TASK.prepare(b, "someone/coco-karpathy", tmp_path / "a", force=True)[0])
    assert refs.ids == [391895, 522418]
    # a hub dataset's table of rows: tests/tasks/retrieval/test_hub_tables.py


def test_prepare_mini_and_random_floor(tmp_path):
    from vlbench.ground_truth import GroundTruthFiles
    from vlbench.tasks.mini import write_mini_benchmark

    world = tmp_path / "world"
    write_mini_benchmark(world, seed=0, images=False)
    b = registry().benchmark("mini-captions")
    [written] = TASK.prepare(b, str(world), tmp_path / "data")
    assert written == tmp_path / "data" / "mini-captions" / "captions" / "references.json"
    refs = TASK.load_ground_truth(b, GroundTruthFiles({"references": written}, {"references": ""}))
    coco = json.loads((world / "annotations" / "captions_test.json").read_text())
    assert refs.n_images == len(coco["images"])
    floor = TASK.random_predictions(refs, b, seed=0)
    assert floor == TASK.random_predictions(refs, b, seed=0)
    own = {i: set(c) for i, c in strict_zip(refs.ids, refs.captions)}
    assert all(p["caption"] not in own[p["image_id"]] for p in floor[:50])
    sub = validate_document(floor, benchmark_override=TASK.references_benchmark(written))
    assert len(sub.parsed.captions) == refs.n_images


def test_spice_is_detected_not_faked(tmp_path, monkeypatch):
    jar, reason = spice_status()
    if jar is None:
        assert "stanford-corenlp-3.6.0" in reason or "java" in reason
    fake = tmp_path / "spice"
    (fake / "lib").mkdir(parents=True)
    (fake / "spice-1.0.jar").write_bytes(b"PK")
    monkeypatch.setenv("VLBENCH_SPICE_JAR", str(fake / "spice-1.0.jar"))
    monkeypatch.setenv("VLBENCH_JAVA", "none")
    jar, reason = spice_status()
    assert jar is None and "VLBENCH_JAVA=none" in reason  # no Java: unavailable, with the reason
    # the jar checks, on a "java" that exists whether or not this machine has Java (never run here)
    monkeypatch.setenv("VLBENCH_JAVA", sys.executable)
    jar, reason = spice_status()
    assert jar is None and "stanford-corenlp-3.6.0.jar" in reason
    for name in CORENLP_JARS:
        (fake / "lib" / name).write_bytes(b"PK")
    jar, reason = spice_status()
    assert jar == fake / "spice-1.0.jar" and reason == ""
