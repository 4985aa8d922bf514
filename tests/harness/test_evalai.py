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
from vlbench.backports import strict_zip
from vlbench.errors import UsageError
from vlbench.registry import registry
from vlbench.scoring import score_file

MINI_RANDOM = REPO / "submissions" / "mini-retrieval" / "random.json"


# The `submission_metadata` EvalAI's worker passes (its SubmissionSerializer's fields; EvalAI-Starters'
# evaluation_script documents this sample).
SUBMISSION_METADATA = {
    "status": "running", "when_made_public": None, "participant_team": 5,
    "input_file": "https://abc.xyz/path/to/submission/file.json", "execution_time": "123",
    "publication_url": "ABC", "challenge_phase": 1, "created_by": "ABC",
    "stdout_file": "https://abc.xyz/path/to/stdout/file.json", "method_name": "Team method",
    "stderr_file": "https://abc.xyz/path/to/stderr/file.json", "participant_team_name": "Test Team",
    "project_url": "http://foo.bar", "method_description": "ABC", "is_public": False,
    "submission_result_file": "https://abc.xyz/path/result/file.json", "id": 7,
    "submitted_at": "2017-03-20T19:22:03.880652Z",
}


def worker_call(package_root: Path, annotation: Path, submission: Path, phase: str) -> dict:
    """What EvalAI's worker does (scripts/workers/submission_worker.py): import the challenge's
    `evaluation_script` package, call `evaluate(annotation_file_path, user_annotation_file_path,
    challenge_phase.codename, submission_metadata=...)`, keep `result` and `error` per split (the
    split codename is each entry's first key), and store `json.dumps(submission_result)`."""
    script = package_root / "evaluation_script"
    script.mkdir(parents=True, exist_ok=True)
    (script / "__init__.py").write_text("from vlbench.evalai import evaluate  # noqa: F401\n")
    sys.path.insert(0, str(package_root))
    try:
        sys.modules.pop("evaluation_script", None)
        module = importlib.import_module("evaluation_script")
        output = module.evaluate(str(annotation), str(submission), phase, submission_metadata=SUBMISSION_METADATA)
    finally:
        sys.path.remove(str(package_root))
        sys.modules.pop("evaluation_script", None)
    assert set(output) >= {"result", "submission_result"}
    for split_result in output["result"]:
        (split,) = split_result  # one key: the dataset split codename
        assert all(isinstance(v, float) for v in split_result[split].values())
    json.dumps(output["submission_result"], allow_nan=False)  # the worker stores it as JSON
    return output


def leaderboard_rows(outputs: list[dict], split: str, schema: dict) -> list[tuple[list, list | None]]:
    """EvalAI's leaderboard for one phase split, read as apps/jobs/utils.py reads it: the worker
    stored `result[split]` and, with an `error` list, `error[split]`; the page sorts by
    (result[default_order_by], -error["error_<default_order_by>"]) (a missing error entry is 0,
    a missing score 0) and shows, per label, the score ("#" if absent) and `error["error_<label>"]`."""
    rows = []
    for output in outputs:
        result = next(r[split] for r in output["result"] if next(iter(r)) == split)
        errors = {next(iter(e)): e[next(iter(e))] for e in output.get("error", [])}.get(split)
        rows.append({"result": result, "error": errors})
    order_by = schema["default_order_by"]
    descending = schema["metadata"][order_by].get("sort_ascending") is False
    for row in rows:
        row["filtering_score"] = row["result"].get(order_by)
        row["filtering_error"] = None if row["error"] is None else row["error"].get(f"error_{order_by}")
        if row["error"] is None:
            row["filtering_error"] = 0
        if row["filtering_score"] is None:
            row["filtering_score"] = 0
    rows.sort(key=lambda k: (float(k["filtering_score"]), float(-k["filtering_error"])), reverse=descending)
    shown = []
    for row in rows:
        values = [row["result"].get(label, "#") for label in schema["labels"]]
        bars = None if row["error"] is None else [row["error"][f"error_{label}"] for label in schema["labels"]]
        shown.append((values, bars))
    return shown


def test_mini_benchmark_scores_as_vlbench_score(tmp_path: Path) -> None:
    annotation = evalai.pack("mini-retrieval", tmp_path / "mini.evalai.json", split="test_split", bootstrap=200)
    doc = json.loads(annotation.read_text())
    assert doc["benchmark"] == "mini-retrieval" and "base64" not in doc["files"]["ground_truth"]  # ships with vlbench
    output = worker_call(tmp_path / "challenge", annotation, MINI_RANDOM, "dev")
    expected = score_file(MINI_RANDOM, bootstrap=200, seed=0).result
    assert output["result"] == [{"test_split": expected.scores}]
    assert output["error"] == [{"test_split": {f"error_{k}": (hi - lo) / 2 for k, (lo, hi) in expected.ci95.items()}}]
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


def test_leaderboard_reads_results_and_error_bars_as_evalai_does(tmp_path: Path) -> None:
    """Three teams on one phase: EvalAI's leaderboard code finds every label's score and
    `error_<label>`, and ranks by the schema's default order key (the main score)."""
    schema = evalai.leaderboard_schema("mini-retrieval")
    benchmark = registry().benchmark("mini-retrieval")
    assert schema["labels"] == [m.key for m in benchmark.metrics] and schema["default_order_by"] == "RSUM"
    annotation = evalai.pack("mini-retrieval", tmp_path / "mini.json", split="test_split", bootstrap=50)
    files = [MINI_RANDOM, *(REPO / "submissions" / "mini-retrieval" / f"mini-odmap-{arm}-seed0.json"
                            for arm in ("biased", "unbiased"))]
    outputs = [worker_call(tmp_path / "challenge", annotation, f, "test") for f in files]
    rows = leaderboard_rows(outputs, "test_split", schema)
    rsum = schema["labels"].index("RSUM")
    assert [r[0][rsum] for r in rows] == sorted((o["result"][0]["test_split"]["RSUM"] for o in outputs), reverse=True)
    assert rows[-1][0][rsum] == outputs[0]["result"][0]["test_split"]["RSUM"]  # random is last
    for values, bars in rows:
        assert "#" not in values and bars is not None and all(isinstance(b, float) and b >= 0 for b in bars)
    assert any(b > 0 for b in rows[0][1])


def test_leaderboard_with_a_metric_left_out_and_without_bootstrap(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # METEOR has no value (its data files are missing): "#" on the page, its error bar None
    monkeypatch.setenv("VLBENCH_METEOR_JAR", str(tmp_path / "no-such-meteor.jar"))
    schema = evalai.leaderboard_schema("mini-captions")
    annotation = evalai.pack("mini-captions", tmp_path / "caps.json", split="captions", bootstrap=20)
    sub = REPO / "submissions" / "mini-captions" / "random.json"
    output = worker_call(tmp_path / "challenge", annotation, sub, "test")
    assert output["error"][0]["captions"]["error_METEOR"] is None
    ((values, bars),) = leaderboard_rows([output], "captions", schema)
    meteor = schema["labels"].index("METEOR")
    assert values[meteor] == "#" and bars[meteor] is None
    assert all((b is None) if v == "#" else (b > 0) for v, b in strict_zip(values, bars))
    # bootstrap 0: no intervals, so no `error` at all (EvalAI then ranks with error 0)
    plain = evalai.pack("mini-captions", tmp_path / "plain.json", split="captions", bootstrap=0)
    output = worker_call(tmp_path / "challenge", plain, sub, "test")
    assert "error" not in output
    ((values, bars),) = leaderboard_rows([output], "captions", schema)
    assert bars is None and values[schema["labels"].index("CIDEr-D")] > 0


def test_schema_for_every_benchmark_matches_what_evaluate_reports() -> None:
    for benchmark in registry().benchmarks.values():
        schema = evalai.leaderboard_schema(benchmark.id)
        assert schema["default_order_by"] in schema["labels"]
        assert set(schema["metadata"]) == set(schema["labels"])
        assert all(schema["metadata"][m.key]["sort_ascending"] is (not m.higher_is_better) for m in benchmark.metrics)


def test_remote_evaluation_payload(tmp_path: Path) -> None:
    """EvalAI-Starters' remote script: evaluate(user_submission_file, phase_codename,
    test_annotation_file=None, **kwargs), then update_submission with `result` = a JSON list of
    {"split", "show_to_participant", "accuracies"} naming only leaderboard labels, with numbers."""
    annotation = evalai.pack("mini-retrieval", tmp_path / "mini.json", split="test_split", bootstrap=0)
    output = evalai.remote_evaluate(str(MINI_RANDOM), "test", test_annotation_file=str(annotation),
                                    submission_metadata=SUBMISSION_METADATA)
    payload = json.loads(evalai.update_submission_result(output))
    labels = evalai.leaderboard_schema("mini-retrieval")["labels"]
    assert isinstance(payload, list) and len(payload) == 1
    (entry,) = payload
    assert set(entry) == {"split", "show_to_participant", "accuracies"}
    assert entry["split"] == "test_split" and entry["show_to_participant"] is True
    assert entry["accuracies"] == output["result"][0]["test_split"]
    # what apps/jobs/views.py update_submission refuses: a key outside the labels, a non-number
    assert not [k for k in entry["accuracies"] if k not in labels]
    assert all(isinstance(v, (float, int)) for v in entry["accuracies"].values())
    # a result carrying a key outside the schema and a None: both left out of the payload
    output["result"][0]["test_split"]["not_a_label"] = 1.0
    output["result"][0]["test_split"]["RSUM"] = None
    entry = json.loads(evalai.update_submission_result(output, show_to_participant=False))[0]
    assert "not_a_label" not in entry["accuracies"] and "RSUM" not in entry["accuracies"]
    assert entry["show_to_participant"] is False
    with pytest.raises(evalai.EvaluationFailed, match="test_annotation_file"):
        evalai.remote_evaluate(str(MINI_RANDOM), "test")


def test_schema_and_remote_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert evalai.main(["schema", "coco-5k"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["default_order_by"] == "RSUM" and "i2t_R@1" in schema["labels"]
    assert evalai.main(["schema", "no-such-benchmark"]) == 2
    capsys.readouterr()
    out = tmp_path / "a.json"
    assert evalai.main(["pack", "mini-retrieval", "--out", str(out), "--split", "s", "--bootstrap", "0"]) == 0
    capsys.readouterr()
    assert evalai.main(["evaluate", str(out), str(MINI_RANDOM), "--remote"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)
    assert entry["split"] == "s" and entry["accuracies"]["RSUM"] > 0
