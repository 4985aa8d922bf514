"""vlbench.evalai: EvalAI's `evaluate(test_annotation_file, user_submission_file, phase_codename,
**kwargs)` contract, run the way EvalAI's submission worker runs it."""

from __future__ import annotations

import base64
import importlib
import json
import sys
from pathlib import Path

import pytest

from tests.harness.leaderboard.conftest import REPO
from vlbench import evalai
from vlbench.errors import UsageError
from vlbench.registry import registry
from vlbench.scoring import score_file

MINI_RANDOM = REPO / "submissions" / "mini-retrieval" / "random.json"


def worker_call(package_root: Path, annotation: Path, submission: Path, phase: str) -> dict:
    """What EvalAI's worker does: import the challenge's `evaluation_script` package, call its
    `evaluate` with the phase codename and `submission_metadata`, store `result` per split and
    `json.dumps(submission_result)` as the result file."""
    script = package_root / "evaluation_script"
    script.mkdir(parents=True, exist_ok=True)
    (script / "__init__.py").write_text("from vlbench.evalai import evaluate  # noqa: F401\n")
    sys.path.insert(0, str(package_root))
    try:
        sys.modules.pop("evaluation_script", None)
        module = importlib.import_module("evaluation_script")
        output = module.evaluate(str(annotation), str(submission), phase,
                                 submission_metadata={"method_name": "Team method", "id": 7})
    finally:
        sys.path.remove(str(package_root))
        sys.modules.pop("evaluation_script", None)
    assert set(output) >= {"result", "submission_result"}
    for split_result in output["result"]:
        (split,) = split_result  # one key: the dataset split codename
        assert all(isinstance(v, float) for v in split_result[split].values())
    json.dumps(output["submission_result"], allow_nan=False)  # the worker stores it as JSON
    return output


def test_mini_benchmark_scores_as_vlbench_score(tmp_path: Path) -> None:
    annotation = evalai.pack("mini-retrieval", tmp_path / "mini.evalai.json", split="test_split", bootstrap=200)
    doc = json.loads(annotation.read_text())
    assert doc["benchmark"] == "mini-retrieval" and "base64" not in doc["files"]["ground_truth"]  # ships with vlbench
    output = worker_call(tmp_path / "challenge", annotation, MINI_RANDOM, "dev")
    expected = score_file(MINI_RANDOM, bootstrap=200, seed=0).result
    assert output["result"] == [{"test_split": expected.scores}]
    assert output["error"] == [{"test_split": {k: (hi - lo) / 2 for k, (lo, hi) in expected.ci95.items()}}]
    record = output["submission_result"]
    assert record["ci95"] == expected.ci95 and record["submission_sha256"] == expected.submission_sha256
    assert record["evalai"] == {"phase_codename": "dev", "split": "test_split"}
    assert record["meta"]["method"] == expected.meta["method"]  # the envelope's name wins


def test_prepared_benchmark_travels_in_the_annotation_file(retrieval_data: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    b = registry().benchmark("coco-1k")
    task = registry().task_of(b)
    from vlbench.ground_truth import locate_ground_truth

    gt = task.load_ground_truth(b, locate_ground_truth(b, retrieval_data))
    sub = tmp_path / "sub.json"
    sub.write_text(json.dumps({"vlbench": 1, "benchmark": "coco-1k", "task": "retrieval", "meta": {"method": "r"},
                               "predictions": task.random_predictions(gt, b, seed=3)}))
    annotation = evalai.pack("coco-1k", tmp_path / "coco-1k.json", data_dir=retrieval_data, bootstrap=0)
    assert json.loads(annotation.read_text())["split"] == "coco-1k"  # default split codename
    # the worker has no data folder: everything comes from the annotation file
    monkeypatch.setenv("VLBENCH_DATA", str(tmp_path / "empty"))
    output = worker_call(tmp_path / "challenge", annotation, sub, "test")
    expected = score_file(sub, data_dir=retrieval_data, bootstrap=0).result
    assert output["result"] == [{"coco-1k": expected.scores}] and "error" not in output
    assert output["submission_result"]["ground_truth_sha256"] == expected.ground_truth_sha256


def test_invalid_submission_raises_with_every_problem(tmp_path: Path) -> None:
    annotation = evalai.pack("mini-retrieval", tmp_path / "a.json", bootstrap=0)
    doc = json.loads(MINI_RANDOM.read_text())
    first = next(iter(doc["predictions"]["image_to_text"]))
    doc["predictions"]["image_to_text"][first] = ["nope"] * 10
    del doc["predictions"]["text_to_image"][next(iter(doc["predictions"]["text_to_image"]))]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(evalai.EvaluationFailed) as failed:
        evalai.evaluate(str(annotation), str(bad), "test")
    message = str(failed.value)
    assert failed.value.exit_code == 1
    assert "[unknown_id]" in message and "[missing_query]" in message and f"/predictions/image_to_text/{first}" in message
    other = tmp_path / "other.json"  # a submission for another benchmark than the phase's
    other.write_text((REPO / "submissions" / "mini-decorrelated" / "random.json").read_text())
    with pytest.raises(evalai.EvaluationFailed, match="mini-decorrelated"):
        evalai.evaluate(str(annotation), str(other), "test")


def test_annotation_file_problems(tmp_path: Path, retrieval_data: Path) -> None:
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"images": []}))
    with pytest.raises(evalai.EvaluationFailed, match="python -m vlbench.evalai pack"):
        evalai.evaluate(str(plain), str(MINI_RANDOM), "test")
    annotation = evalai.pack("coco-5k", tmp_path / "c.json", data_dir=retrieval_data, bootstrap=0)
    doc = json.loads(annotation.read_text())
    damaged = json.loads(json.dumps(doc))
    data = bytearray(base64.b64decode(damaged["files"]["ground_truth"]["base64"]))
    data[-2] ^= 1
    damaged["files"]["ground_truth"]["base64"] = base64.b64encode(bytes(data)).decode()
    (tmp_path / "damaged.json").write_text(json.dumps(damaged))
    with pytest.raises(evalai.EvaluationFailed, match="damaged: ground_truth: sha256"):
        evalai.evaluate(str(tmp_path / "damaged.json"), str(MINI_RANDOM), "test")
    doc["benchmark_version"] = "0.9"
    (tmp_path / "old.json").write_text(json.dumps(doc))
    with pytest.raises(evalai.EvaluationFailed, match="v0.9 but this vlbench scores v1.0"):
        evalai.evaluate(str(tmp_path / "old.json"), str(MINI_RANDOM), "test")
    with pytest.raises(UsageError, match="not found"):
        evalai.pack("flickr30k-entities-test", tmp_path / "x.json", data_dir=tmp_path / "nothing")


def test_bare_caption_results_take_evalai_method_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLBENCH_JAVA", "none")  # no Java: METEOR is computed in Python
    annotation = evalai.pack("mini-captions", tmp_path / "caps.json", split="captions", bootstrap=0)
    bare = tmp_path / "results.json"
    bare.write_text(json.dumps(json.loads((REPO / "submissions" / "mini-captions" / "random.json").read_text())["predictions"]))
    output = worker_call(tmp_path / "challenge", annotation, bare, "test")
    scores = output["result"][0]["captions"]
    assert "CIDEr-D" in scores and "METEOR" in scores
    record = output["submission_result"]
    assert record["meta"]["method"] == "Team method" and "METEOR" not in record["extra"].get("unavailable", {})


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "a.json"
    assert evalai.main(["pack", "mini-retrieval", "--out", str(out), "--split", "s", "--bootstrap", "0"]) == 0
    assert "upload it as the phase's annotation file" in capsys.readouterr().out
    assert evalai.main(["evaluate", str(out), str(MINI_RANDOM)]) == 0
    assert json.loads(capsys.readouterr().out)["result"][0]["s"]["RSUM"] > 0
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert evalai.main(["evaluate", str(out), str(bad)]) == 1
    assert "problem" in capsys.readouterr().err
    assert evalai.main(["pack", "no-such-benchmark", "--out", str(out)]) == 2
