"""Every recipe end to end on the mini world with a tiny random model; outputs pass validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.baselines.conftest import TINY
from vlbench.cli import main
from vlbench.submission import validate


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("recipe", "benchmark", "extra"),
    [
        ("clip-zeroshot", "mini-retrieval", []),
        ("clip-zeroshot", "mini-decorrelated", []),
        ("clip-finetune", "mini-retrieval", ["steps=2"]),
        ("clip-scratch", "mini-retrieval", ["steps=2", "model=tiny-vit-p8"]),
        ("clip-scratch", "mini-decorrelated", ["steps=2", "model=tiny-vit-p8", "mini_train=unbiased", "max_train_pairs=64"]),
        ("clip-finetune-synthetic", "mini-decorrelated", ["steps=2", "synthetic_fill=rerender", "synthetic_ratio=0.02"]),
    ],
)
def test_recipe_writes_a_valid_submission(capsys: pytest.CaptureFixture[str], tmp_path: Path, data_dir: Path,
                                          recipe: str, benchmark: str, extra: list[str]) -> None:
    out = tmp_path / "sub.json"
    code, stdout, err = run_cli(capsys, "baseline", "run", recipe, "--benchmark", benchmark, "--out", str(out),
                                "--data-dir", str(data_dir), "--device", "cpu", "--quiet", "--set", *TINY, *extra)
    assert code == 0, err
    assert f"wrote {out}" in stdout
    validated = validate(out, data_dir=data_dir)
    assert validated.benchmark.id == benchmark
    meta = json.loads(out.read_text())["meta"]
    recipe_meta = meta["extra"]["recipe"]
    assert meta["baseline"] == recipe and meta["reference"] is True
    assert recipe_meta["config"]["model"] == "tiny-vit-p8" and recipe_meta["seed"] == 0
    assert recipe_meta["command"].startswith(f"vlbench baseline run {recipe} --benchmark {benchmark}")
    assert {"python", "torch", "open_clip_torch"} <= set(recipe_meta["packages"])
    assert recipe_meta["device"].startswith("cpu") and recipe_meta["wall_time_s"] > 0
    if "steps=2" in extra:
        assert recipe_meta["train"]["steps"] == 2
    if recipe.endswith("synthetic"):
        assert recipe_meta["train"]["synthetic_pairs"] > 0


def test_same_command_gives_the_same_submission(capsys: pytest.CaptureFixture[str], tmp_path: Path, data_dir: Path) -> None:
    preds = []
    for name in ("a.json", "b.json"):
        code, _, err = run_cli(capsys, "baseline", "run", "clip-finetune", "--benchmark", "mini-retrieval", "--out",
                               str(tmp_path / name), "--data-dir", str(data_dir), "--device", "cpu", "--quiet",
                               "--set", *TINY, "steps=2")
        assert code == 0, err
        preds.append(json.loads((tmp_path / name).read_text())["predictions"])
    assert preds[0] == preds[1]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["baseline", "run", "clip-nope", "--benchmark", "mini-retrieval"], "unknown recipe 'clip-nope'"),
        (["baseline", "run", "clip-zeroshot", "--benchmark", "nope"], "unknown benchmark 'nope'"),
        (["baseline", "run", "clip-zeroshot", "--benchmark", "mini-captions"], "is a captioning benchmark"),
        (["baseline", "run", "clip-zeroshot", "--benchmark", "mini-retrieval", "--set", "colour=red"], "unknown setting 'colour'"),
        (["baseline", "run", "clip-zeroshot", "--benchmark", "mini-retrieval", "--set", "topk=ten"], "topk='ten': expected an integer"),
        (["baseline", "run", "clip-zeroshot", "--benchmark", "mini-retrieval", "--set", "model=NoSuchNet"], "unknown open_clip model"),
        (["baseline", "run", "clip-zeroshot", "--benchmark", "mini-retrieval", "--set", "model=tiny-vit-p8", "pretrained=/no/such.pt"], "does not exist"),
        (["baseline", "run", "clip-zeroshot", "--benchmark", "mini-retrieval", "--set", "model=tiny-vit-p8", "pretrained=laion9b"], "has no pretrained tag"),
        (["baseline", "run", "clip-finetune", "--benchmark", "coco-5k"], "dataset_coco.json"),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, data_dir: Path,
                                              argv: list[str], message: str) -> None:
    out = tmp_path / "sub.json"
    code, _, err = run_cli(capsys, *argv, "--out", str(out), "--data-dir", str(data_dir), "--device", "cpu", "--quiet")
    assert code == 2
    assert message in err and "Traceback" not in err
    assert not out.exists()


def test_missing_pretrained_weights_name_the_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, data_dir: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from vlbench.baselines import models

    monkeypatch.setattr(models, "_online", lambda timeout=3.0: False)  # never download in a test
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    code, _, err = run_cli(capsys, "baseline", "run", "clip-zeroshot", "--benchmark", "mini-retrieval", "--out",
                           str(tmp_path / "s.json"), "--data-dir", str(data_dir), "--device", "cpu", "--quiet",
                           "--set", "model=ViT-B-32", "pretrained=openai")
    assert code == 2, err
    assert "not available offline" in err and "ViT-B-32.pt" in err and "Traceback" not in err


def test_out_naming_a_folder_is_refused_before_any_work(capsys: pytest.CaptureFixture[str], tmp_path: Path, data_dir: Path) -> None:
    code, _, err = run_cli(capsys, "baseline", "run", "clip-zeroshot", "--benchmark", "mini-retrieval", "--out",
                           str(tmp_path), "--data-dir", str(data_dir), "--set", *TINY)
    assert code == 2 and "is a folder" in err


def test_list_shows_every_recipe_with_its_benchmarks(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "baseline", "list", "--json")
    rows = {r["recipe"]: r for r in json.loads(out)}
    assert code == 0
    assert {"clip-zeroshot", "clip-finetune", "clip-finetune-synthetic", "clip-scratch"} <= set(rows)
    assert "coco-5k-decorrelated" in rows["clip-finetune-synthetic"]["benchmarks"]
    assert "ODmAP paper" in rows["clip-finetune"]["sources"]["lr"]


def test_run_follows_the_output_rule(capsys: pytest.CaptureFixture[str], tmp_path: Path, data_dir: Path) -> None:
    """`--out` replaces only a submission a recipe (or another vlbench command) wrote: one written
    by hand is refused unless --force (tests/output_rule_checks.py)."""
    from tests.output_rule_checks import check_file_writer

    def write(target: Path, force: bool) -> int:
        code, _, _ = run_cli(capsys, "baseline", "run", "clip-zeroshot", "--benchmark", "mini-retrieval", "--out",
                             str(target), "--data-dir", str(data_dir), "--device", "cpu", "--quiet", "--set", *TINY,
                             *(["--force"] if force else []))
        return code

    check_file_writer(tmp_path, write, name="sub.json")


def test_coco_results_and_checkpoint_dir_follow_the_output_rule(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                data_dir: Path) -> None:
    base = ["baseline", "run", "caption-nn", "--benchmark", "mini-captions", "--data-dir", str(data_dir), "--device",
            "cpu", "--quiet", "--set", *TINY]
    results = tmp_path / "results.json"
    results.write_text("[]")  # a COCO results file of anyone's: no room for a mark, so --force only
    code, _, err = run_cli(capsys, *base, "--out", str(tmp_path / "sub.json"), "--coco-results", str(results))
    assert code == 2 and "--coco-results" in err and "--force" in err
    assert results.read_text() == "[]" and not (tmp_path / "sub.json").exists()
    code, _, err = run_cli(capsys, *base, "--out", str(tmp_path / "sub.json"), "--coco-results", str(results), "--force")
    assert code == 0, err
    assert len(json.loads(results.read_text())) == 250
    code, _, err = run_cli(capsys, *base, "--out", str(tmp_path / "s2.json"), "--coco-results",
                           str(tmp_path / "no" / "r.json"))
    assert code == 2 and "does not exist" in err and not (tmp_path / "no").exists()
    finetune = ["baseline", "run", "clip-finetune", "--benchmark", "mini-retrieval", "--data-dir", str(data_dir),
                "--device", "cpu", "--quiet", "--set", *TINY, "steps=2", "--out", str(tmp_path / "ft.json")]
    code, _, err = run_cli(capsys, *finetune, "--checkpoint-dir", str(tmp_path / "no" / "ckpt"))
    assert code == 2 and "does not exist" in err and not (tmp_path / "no").exists()
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "train_log.jsonl").write_text("my own log\n")
    code, _, err = run_cli(capsys, *finetune, "--checkpoint-dir", str(ckpt))
    assert code == 2 and "train_log.jsonl exists and is not a training log" in err
    assert (ckpt / "train_log.jsonl").read_text() == "my own log\n" and not (tmp_path / "ft.json").exists()
