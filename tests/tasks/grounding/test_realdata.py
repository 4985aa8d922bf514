"""Regression tests on the real Flickr30k Entities test and val annotations and real-format MDETR
prediction files in ../shared/realdata (see its README). Skipped when the folder is absent."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from vlbench.cli import main as vlbench
from vlbench.errors import InvalidSubmission
from vlbench.ground_truth import locate_ground_truth
from vlbench.registry import registry
from vlbench.scoring import score_file
from vlbench.tasks.grounding import TASK
from vlbench.tasks.grounding.reference import MdetrStyleEvaluator
from vlbench.tasks.grounding.scores import PROTOCOLS

REALDATA = Path(os.environ.get("VLBENCH_REALDATA",
                               Path(__file__).resolve().parents[4] / "shared" / "realdata"))
ENTITIES = REALDATA / "flickr30k_entities"
UNCLIPPED = REALDATA / "derived" / "mdetr_preds_test_var_unclipped.json.gz"
JITTER = REALDATA / "derived" / "mdetr_preds_test_jitter.json.gz"
TYPES = ["people", "clothing", "bodyparts", "animals", "vehicles", "instruments", "scene", "other"]
KS = {"R@1": 1, "R@5": 5, "R@10": 10, "UB": -1}

pytestmark = pytest.mark.skipif(
    not (ENTITIES / "sentences_annotations_test_val.tar.gz").is_file(),
    reason=f"real data not found in {REALDATA}",
)


@pytest.fixture(scope="session")
def real(tmp_path_factory):
    """The real test and val trees, unpacked and prepared once per session with the CLI."""
    root = tmp_path_factory.mktemp("realdata")
    tree = root / "tree"
    tree.mkdir()
    with tarfile.open(ENTITIES / "sentences_annotations_test_val.tar.gz") as tar:
        tar.extractall(tree, filter="data")
    for split in ("test", "val"):
        shutil.copy(ENTITIES / f"{split}.txt", tree / f"{split}.txt")
    data = root / "data"
    for benchmark in ("flickr30k-entities-test", "flickr30k-entities-val"):
        assert vlbench(["data", "prepare", benchmark, "--source", str(tree),
                        "--data-dir", str(data)]) == 0
    return tree, data


@pytest.fixture(scope="session")
def reference(real):
    tree, _ = real
    cache: dict[tuple[str, bool], MdetrStyleEvaluator] = {}

    def get(split: str, merged: bool) -> MdetrStyleEvaluator:
        if (split, merged) not in cache:
            cache[(split, merged)] = MdetrStyleEvaluator(tree, split, merge_boxes=merged)
        return cache[(split, merged)]

    return get


def load(path: Path) -> list[dict]:
    return json.loads(gzip.decompress(path.read_bytes()))


def assert_equals_reference(scores: dict, records: list[dict], reference, split: str) -> None:
    """All 72 numbers (both protocols, four measures, overall and per type) are identical."""
    for prefix in PROTOCOLS:
        ref = reference(split, prefix == "merged_").evaluate(records)
        for name, k in KS.items():
            assert scores[f"{prefix}{name}"] == ref[k]["all"], (prefix, name)
            for t in TYPES:
                assert scores[f"{prefix}{name}/{t}"] == ref[k].get(t), (prefix, name, t)


# sha256 of the files `prepare` wrote from the real release before its reader was made faster:
# the reader may change, the bytes it prepares may not.
PREPARED_SHA256 = {
    "flickr30k-entities-test": "9f86d8f0163b8b511b6a9df7d46fd89b4e1a3961af067009ba2c0ae0b554be85",
    "flickr30k-entities-val": "4424da2a2594a6276d0d06aa958573e72f3df16cf06a4962f2fa87d073c1a050",
}


@pytest.mark.parametrize(("benchmark", "phrases", "sentences"),
                         [("flickr30k-entities-test", 14481, 4969),
                          ("flickr30k-entities-val", 14433, 4986)])
def test_real_trees_prepare_as_the_release(real, benchmark, phrases, sentences):
    _, data = real
    prepared = (data / benchmark / "ground_truth.json").read_bytes()
    assert hashlib.sha256(prepared).hexdigest() == PREPARED_SHA256[benchmark]
    doc = json.loads(prepared)
    assert "source_check" not in doc  # the real release passes the source check
    assert len(doc["phrases"]["image"]) == phrases and len(doc["images"]["id"]) == 1000
    assert sum(len(s) for s in doc["lookup"].values()) == sentences


def test_val_scores_as_the_reference(real, reference, tmp_path):
    # No real val predictions exist here: the chance floor, written as MDETR records.
    _, data = real
    benchmark = registry().benchmark("flickr30k-entities-val")
    gt = TASK.load_ground_truth(benchmark, locate_ground_truth(benchmark, data))
    predictions = TASK.random_predictions(gt, benchmark, seed=5)
    records = [{"image_id": int(image), "sentence_id": int(sentence),
                "boxes": [p["boxes"] for _, p in sorted(phrases.items(), key=lambda kv: int(kv[0]))]}
               for image, sentences in predictions.items() for sentence, phrases in sentences.items()]
    path = tmp_path / "val.json"
    path.write_text(json.dumps(records))
    ev = score_file(path, benchmark_id=benchmark.id, data_dir=data, bootstrap=0, strict=True)
    assert ev.result.n["phrases"] == 14433
    assert_equals_reference(ev.result.scores, records, reference, "val")


def test_unclipped_mdetr_file_scores_as_the_reference(real, reference):
    _, data = real
    ev = score_file(UNCLIPPED, benchmark_id="flickr30k-entities-test", data_dir=data,
                    bootstrap=0, strict=True)
    assert ev.result.extra["input_format"] == "mdetr"
    assert ev.result.extra["boxes_outside_image"]["count"] == 861
    assert ev.result.extra["warnings"][0].startswith("861 of 156,961 boxes extend past the image")
    assert ev.result.extra["covered"] == {"sentences": 4969, "sentences_total": 4969,
                                          "phrases": 14481, "phrases_total": 14481}
    assert_equals_reference(ev.result.scores, load(UNCLIPPED), reference, "test")


def test_jitter_file_scores_directly_with_format_mdetr(real, reference, tmp_path, capsys):
    _, data = real
    out = tmp_path / "result.json"
    rc = vlbench(["score", str(JITTER), "--benchmark", "flickr30k-entities-test", "--format",
                  "mdetr", "--data-dir", str(data), "--bootstrap", "100", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    record = json.loads(out.read_text())
    assert record["n"]["phrases"] == 14481 and "warnings" not in record["extra"]
    assert_equals_reference(record["scores"], load(JITTER), reference, "test")


def test_import_grounding_warns_about_the_unclipped_boxes(real, tmp_path, capsys):
    _, data = real
    out = tmp_path / "sub.json"
    assert vlbench(["import", "grounding", str(UNCLIPPED), "--benchmark", "flickr30k-entities-test",
                    "--out", str(out), "--data-dir", str(data)]) == 0
    assert "warning: 861 of 156,961 boxes extend past the image" in capsys.readouterr().err
    direct = score_file(UNCLIPPED, benchmark_id="flickr30k-entities-test", data_dir=data,
                        bootstrap=0)
    assert score_file(out, data_dir=data, bootstrap=0).result.scores == direct.result.scores


def test_partial_real_file_warns_and_strict_refuses(real, tmp_path):
    _, data = real
    records = load(JITTER)
    kept = [r for i, r in enumerate(records) if i % 10]
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(kept))
    ev = score_file(path, benchmark_id="flickr30k-entities-test", data_dir=data, bootstrap=0)
    covered = ev.result.extra["covered"]
    assert covered["sentences"] == len(kept) and covered["sentences_total"] == 4969
    assert covered["phrases"] == sum(len(r["boxes"]) for r in kept)
    assert any(w.startswith(f"the submission covers {len(kept):,} of 4,969 sentences")
               for w in ev.result.extra["warnings"])
    with pytest.raises(InvalidSubmission) as exc:
        score_file(path, benchmark_id="flickr30k-entities-test", data_dir=data, strict=True)
    assert exc.value.issues.codes() == {"partial_submission"}
