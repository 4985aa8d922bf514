"""The vlbench command line: exit codes, output, result files, no tracebacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tasks.retrieval.test_validation import envelope, load_gt, perfect_predictions
from vlbench.cli import main
from vlbench.registry import registry


@pytest.fixture
def good(retrieval_data: Path, write_json) -> Path:
    gt = load_gt("coco-5k", retrieval_data)
    return write_json(envelope(perfect_predictions(gt)), "good.json")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_ok(capsys, good: Path, retrieval_data: Path) -> None:
    code, out, _ = run(capsys, "validate", str(good), "--data-dir", str(retrieval_data))
    assert code == 0 and "VALID" in out


def test_validate_invalid_lists_every_error_and_exits_1(capsys, tmp_path: Path, retrieval_data: Path, write_json) -> None:
    gt = load_gt("coco-5k", retrieval_data)
    doc = envelope(perfect_predictions(gt))
    doc["predictions"]["image_to_text"][gt.images[0]][0] = 5
    del doc["predictions"]["text_to_image"][gt.captions[0]]
    code, out, err = run(capsys, "validate", str(write_json(doc)), "--data-dir", str(retrieval_data))
    assert code == 1
    assert "unknown_id" in err and "missing_query" in err and f"/predictions/image_to_text/{gt.images[0]}/0" in err
    assert "Traceback" not in err + out


def test_validate_json_output(capsys, write_json, retrieval_data: Path) -> None:
    code, out, _ = run(capsys, "validate", str(write_json({"vlbench": 1})), "--data-dir", str(retrieval_data), "--json")
    report = json.loads(out)
    assert code == 1 and report["valid"] is False and report["error_count"] == len(report["errors"]) > 0
    assert {"code", "pointer", "message", "hint"} <= set(report["errors"][0])


def test_score_writes_record_and_per_item(capsys, good: Path, retrieval_data: Path, tmp_path: Path) -> None:
    out_path = tmp_path / "results" / "r.json"
    out_path.parent.mkdir()  # vlbench makes no folder for an --out file (output_rule)
    code, out, _ = run(capsys, "score", str(good), "--data-dir", str(retrieval_data), "--out", str(out_path), "--bootstrap", "50")
    assert code == 0 and "RSUM" in out and "i2t_R@1" in out
    record = json.loads(out_path.read_text())
    assert record["scores"]["RSUM"] == 600.0
    assert record["benchmark_version"] == "1.0" and len(record["submission_sha256"]) == 64
    assert len(record["ground_truth_sha256"]) == 64 and record["harness_version"]
    assert (out_path.parent / record["per_item"]).exists()
    assert sorted(p.name for p in out_path.parent.iterdir()) == ["r.json", "r.per_item.json"]


def test_score_json_is_the_record(capsys, good: Path, retrieval_data: Path) -> None:
    code, out, _ = run(capsys, "score", str(good), "--data-dir", str(retrieval_data), "--json", "--bootstrap", "0")
    assert code == 0 and json.loads(out)["scores"]["i2t_R@10"] == 1.0


def test_invalid_score_writes_nothing(capsys, write_json, retrieval_data: Path, tmp_path: Path) -> None:
    out_path = tmp_path / "never.json"
    code, _, _ = run(capsys, "score", str(write_json({"vlbench": 1})), "--data-dir", str(retrieval_data), "--out", str(out_path))
    assert code == 1 and not out_path.exists()


def test_usage_errors_exit_2_without_traceback(capsys, tmp_path: Path, good: Path) -> None:
    code, _, err = run(capsys, "validate", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in err and "Traceback" not in err
    code, _, err = run(capsys, "validate", str(good), "--data-dir", str(tmp_path / "nodata"))
    assert code == 2 and "vlbench data prepare coco-5k" in err
    code, _, err = run(capsys, "score", str(good), "--benchmark", "coco-9k")
    assert code == 2 and "unknown benchmark" in err
    with pytest.raises(SystemExit) as info:
        main(["score"])
    assert info.value.code == 2


def test_compare_two_results(capsys, retrieval_data: Path, write_json, tmp_path: Path) -> None:
    reg = registry()
    b = reg.benchmark("coco-5k")
    gt = load_gt("coco-5k", retrieval_data)
    good = write_json(envelope(perfect_predictions(gt)), "a.json")
    rand = write_json(envelope(reg.task_of(b).random_predictions(gt, b, seed=0)), "b.json")
    for name, sub in (("a", good), ("b", rand)):
        assert main(["score", str(sub), "--data-dir", str(retrieval_data), "--out", str(tmp_path / f"{name}.result.json"), "--bootstrap", "0"]) == 0
    capsys.readouterr()
    code, out, _ = run(capsys, "compare", str(tmp_path / "a.result.json"), str(tmp_path / "b.result.json"), "--bootstrap", "300", "--json")
    rows = {r["metric"]: r for r in json.loads(out)}
    assert code == 0 and rows["i2t_R@1"]["difference"] > 0.5 and rows["i2t_R@1"]["p_value"] < 0.01


def test_tasks_lists_benchmarks_and_data_status(capsys, retrieval_data: Path) -> None:
    code, out, _ = run(capsys, "tasks", "--data-dir", str(retrieval_data), "--json")
    rows = {r["benchmark"]: r for r in json.loads(out)}
    assert code == 0
    assert rows["coco-5k"]["data"] == "present" and rows["coco-5k"]["version"] == "1.0"


def test_data_prepare_cli(capsys, tmp_path: Path) -> None:
    from tests.conftest import karpathy_doc

    (tmp_path / "dataset_flickr30k.json").write_text(json.dumps(karpathy_doc(10, dataset="flickr30k")))
    args = ["data", "prepare", "flickr30k-1k", "--source", str(tmp_path), "--data-dir", str(tmp_path / "d")]
    code, _, err = run(capsys, *args)  # 10 test images, not the official file: refused
    assert code == 2 and "images in split 'test': expected 1,000, found 10" in err and "--force" in err
    assert not (tmp_path / "d" / "flickr30k-1k" / "ground_truth.json").exists()
    code, out, err = run(capsys, *args, "--force")
    assert code == 0 and (tmp_path / "d" / "flickr30k-1k" / "ground_truth.json").exists() and "warning: --force" in err


def _parsers(parser) -> list:
    """The parser and every subcommand's parser, the plugins' included."""
    import argparse

    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _parsers(sub)
    return found


def test_options_take_their_exact_names_only(capsys, tmp_path: Path) -> None:
    from vlbench.cli import build_parser

    parsers = _parsers(build_parser())
    assert len(parsers) > 10 and all(p.allow_abbrev is False for p in parsers)
    for argv, says in ((["score", "submissions/mini-retrieval/random.json", "--boot", "10"],
                        "unrecognized arguments: --boot"),
                       (["leaderboard", "build", "--sub", "x", "--out", str(tmp_path / "lb")],
                        "unrecognized arguments: --sub"),
                       (["baseline", "run", "clip-zeroshot", "--bench", "mini-retrieval", "--out", "x"],
                        "the following arguments are required: --benchmark")):
        with pytest.raises(SystemExit) as info:
            main(argv)
        out, err = capsys.readouterr()
        assert info.value.code == 2 and says in err and out == ""
    assert not (tmp_path / "lb").exists()


REPO = Path(__file__).resolve().parents[2]


def test_several_submissions_one_summary_and_each_note_once(capsys, tmp_path: Path) -> None:
    files = [str(REPO / "submissions" / "mini-retrieval" / "random.json"),
             str(REPO / "submissions" / "mini-decorrelated" / "random.json")]
    bad = tmp_path / "bad.json"
    bad.write_text("", encoding="utf-8")
    code, out, err = run(capsys, "score", *files, str(bad), "--bootstrap", "20", "--out-dir", str(tmp_path / "res"))
    assert code == 1  # one invalid file: listed, the others scored and written
    assert "the file is empty" in err
    lines = out.strip().splitlines()
    assert lines[0].split() == ["submission", "benchmark", "method", "main", "score", "value", "95%", "CI"]
    assert len([line for line in lines if "random (chance floor)" in line]) == 2
    assert "2 scored, 1 invalid" in lines[-1] and "--verbose" in lines[-1]
    assert "i2t_R@5" not in out  # the full tables only with --verbose
    written = sorted(p.name for p in (tmp_path / "res").iterdir())
    assert [n for n in written if not n.endswith(".per_item.json")] == [
        "mini-decorrelated-random.json", "mini-retrieval-random.json"] and len(written) == 4
    code, out, _ = run(capsys, "score", *files, "--bootstrap", "0", "--verbose")
    assert code == 0 and "i2t_R@5" in out and out.count("== ") == 2
    # a note every file repeats is printed once per run
    captions = [str(REPO / "submissions" / "mini-captions" / n) for n in ("random.json", "caption-nn.json")]
    code, out, err = run(capsys, "score", *captions, "--bootstrap", "0")
    assert code == 0 and out.count('reports as "CIDEr"') == 1
    assert all(err.count(line) == 1 for line in err.splitlines() if line.startswith("note:"))
    code, _, err = run(capsys, "score", *files, "--out", str(tmp_path / "x.json"))
    assert code == 2 and "--out-dir" in err and not (tmp_path / "x.json").exists()


REPO = Path(__file__).resolve().parents[2]


def test_a_folder_as_the_submission_is_called_a_folder(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "score", str(tmp_path), "--bootstrap", "0")
    assert code == 2 and err == f"error: {tmp_path} is a folder, not a submission file; name the file inside it\n"


def test_a_mistyped_benchmark_gets_a_did_you_mean(capsys) -> None:
    code, _, err = run(capsys, "score", str(REPO / "submissions" / "mini-retrieval" / "random.json"), "--benchmark",
                       "mini-retreival")
    assert code == 2 and "unknown benchmark 'mini-retreival'; did you mean 'mini-retrieval'?" in err
    code, _, err = run(capsys, "validate", str(REPO / "submissions" / "mini-retrieval" / "random.json"), "--benchmark",
                       "zzzz")
    assert code == 2 and "did you mean" not in err and "known: coco-1k" in err


@pytest.mark.parametrize(("argv", "usage"), [
    (["score", "x.json", "--boot", "10"], "usage: vlbench score "),
    (["leaderboard", "build", "--outt", "x"], "usage: vlbench leaderboard build "),
    (["data", "mini", "--wrld", "v3"], "usage: vlbench data mini "),
])
def test_an_unknown_option_gets_its_own_command_s_usage(capsys, argv: list[str], usage: str) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.startswith(usage) and f"error: unrecognized arguments: {' '.join(argv[-2:])}" in err


def test_the_header_names_what_was_scored_against_what(capsys, tmp_path: Path) -> None:
    compact = json.loads((REPO / "tasks" / "mini" / "data" / "captions" / "references.json").read_text())
    refs = tmp_path / "a-refs.json"
    refs.write_text(json.dumps({"images": [{"id": i} for i, _ in compact["images"]],
                                "annotations": [{"image_id": i, "id": 10 * i + k, "caption": c}
                                                for i, caps in compact["images"] for k, c in enumerate(caps)]}))
    captions = tmp_path / "captions.json"
    captions.write_text(json.dumps([{"image_id": i, "caption": caps[0]} for i, caps in compact["images"]]))
    code, out, _ = run(capsys, "score", str(captions), "--references", str(refs), "--bootstrap", "0")
    assert code == 0 and out.splitlines()[0] == "captions.json scored against the references in a-refs.json (captioning)"
    code, out, _ = run(capsys, "score", str(captions), "--benchmark", "mini-captions", "--bootstrap", "0")
    assert out.splitlines()[0] == "mini-captions v1.0 (captioning) - captions.json (a bare predictions file: no method named)"
    code, out, _ = run(capsys, "score", str(REPO / "submissions" / "mini-retrieval" / "random.json"), "--bootstrap", "0")
    assert out.splitlines()[0] == "mini-retrieval v1.0 (retrieval) - random (chance floor)"
