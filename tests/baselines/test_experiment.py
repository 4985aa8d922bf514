"""`vlbench baseline experiment mini-odmap --quick` end to end: the files it writes, every submission
valid and regenerable from its meta, the report's numbers equal to `vlbench score`. No claim about
the sign of any result: at toy size the numbers mean nothing."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from vlbench.baselines.analysis import _paired_runs
from vlbench.baselines.experiment import BENCHMARKS, get_experiment, job_argv, plan_jobs
from vlbench.cli import main
from vlbench.errors import UsageError
from vlbench.scoring import score_file
from vlbench.submission import validate


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    work = tmp_path_factory.mktemp("quick")
    argv = [sys.executable, "-m", "vlbench", "baseline", "experiment", "mini-odmap", "--quick", "--data-dir",
            str(data_dir), "--work-dir", str(work / "runs"), "--out", str(work / "results"), "--submissions",
            str(work / "subs"), "--workers", "2", "--bootstrap", "50", "--quiet"]
    # its own process group, killed whole on timeout: a stuck training worker fails the test, never hangs it
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        output, _ = proc.communicate(timeout=900)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the quick experiment did not finish within 900 s")
    assert proc.returncode == 0, output
    return work


def test_quick_writes_the_report_and_valid_submissions(quick: Path, data_dir: Path) -> None:
    results = quick / "results"
    assert {p.name for p in results.iterdir()} == {"README.md", "results.json", "plot.png"}
    assert (results / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    doc = json.loads((results / "results.json").read_text())
    exp = get_experiment("mini-odmap", quick=True)
    arms = [a.name for a in exp.arms]
    assert [(r["arm"], r["seed"]) for r in doc["runs"]] == [(a, s) for a in arms for s in exp.seeds]
    overs = {(d["a"], d["b"], d["over"]) for d in doc["differences"]}
    for a, b in (("synthetic", "control"), ("synthetic", "biased"), ("unbiased", "biased")):
        assert {(a, b, f"seed {s}") for s in exp.seeds} | {(a, b, "pooled")} <= overs
    readme = (results / "README.md").read_text()
    assert "ODmAP@1/partner" in readme and "ODmAP@1/control" in readme and "i2t_R@1" in readme
    # the gates and the primary result are reported, whatever they show (no claim on any sign)
    pre = doc["preregistered"]
    assert [g["gate"].split()[0] for g in pre["gates"]] == ["G1", "G2", "V"]
    assert all(isinstance(g["passed"], bool) for g in pre["gates"])
    assert pre["primary"]["metric"] == "ODmAP@1/partner" and len(pre["primary"]["ci95"]) == 2
    assert isinstance(pre["secondary"]["non_inferior"], bool)
    assert "Validity gates" in readme and "Primary result" in readme
    assert "expected value of random ranking" in readme
    moved = doc["fine_tune_moved"]
    assert {(m["arm"], m["seed"]) for m in moved} == {(a, s) for a in ("control", "synthetic") for s in exp.seeds}
    assert all(0.0 <= m["top1_changed"] <= 1.0 for m in moved) and "Did the fine-tunes move" in readme
    for arm in arms:
        for seed in exp.seeds:
            for benchmark in BENCHMARKS:
                path = quick / "subs" / benchmark / f"mini-odmap-{arm}-seed{seed}.json"
                validated = validate(path, data_dir=data_dir)
                assert validated.benchmark.id == benchmark
                meta = json.loads(path.read_text())["meta"]
                assert meta["extra"]["experiment"]["arm"] == arm and meta["extra"]["recipe"]["seed"] == seed
                assert meta["extra"]["recipe"]["command"].startswith("vlbench baseline run ")


def test_report_numbers_are_what_vlbench_score_gives(quick: Path, data_dir: Path) -> None:
    doc = json.loads((quick / "results" / "results.json").read_text())
    run = doc["runs"][0]
    for benchmark in BENCHMARKS:
        path = quick / "subs" / benchmark / f"mini-odmap-{run['arm']}-seed{run['seed']}.json"
        scores = score_file(path, data_dir=data_dir, bootstrap=0).result.scores
        for key, value in run["scores"].items():
            if key in scores:
                assert value == scores[key]


def test_each_submission_names_the_command_that_regenerates_it(quick: Path, data_dir: Path) -> None:
    """The recorded per-run command, rerun, gives the same predictions (the finished checkpoint is
    reused; a fresh work folder would retrain to the same weights: the loop is seeded)."""
    path = quick / "subs" / "mini-shapes-retrieval" / "mini-odmap-control-seed1.json"
    meta = json.loads(path.read_text())["meta"]
    again = quick / "again.json"
    argv = meta["extra"]["recipe"]["command"].split()[1:]
    out_at = argv.index("--out")
    argv[out_at + 1] = str(again)
    assert main([*argv, "--quiet"]) == 0
    assert json.loads(again.read_text())["predictions"] == json.loads(path.read_text())["predictions"]


def test_jobs_are_one_recipe_command_each(tmp_path: Path) -> None:
    exp = get_experiment("mini-odmap")
    jobs = plan_jobs(exp, tmp_path / "w", tmp_path / "s")
    assert len(jobs) == len(exp.arms) * len(exp.seeds) == 20
    control = next(j for j in jobs if j.arm.name == "control" and j.seed == 2)
    argv = job_argv(control, "mini-decorrelated", tmp_path / "x.json", None)
    assert argv[:3] == ["baseline", "run", "clip-finetune"]
    assert f"pretrained={tmp_path / 'w' / 'biased-seed2' / 'checkpoint.pt'}" in argv and "seed=2" in argv
    synthetic = next(j for j in jobs if j.arm.name == "synthetic" and j.seed == 2)
    steps = {s for s in synthetic.sets if s.startswith("steps=")}
    assert steps == {s for s in control.sets if s.startswith("steps=")}  # arms 2 and 3: the same steps
    unbiased = next(j for j in jobs if j.arm.name == "unbiased")
    assert "mini_train=unbiased" in unbiased.sets


def test_the_full_experiment_is_the_preregistered_v3_recipe() -> None:
    """tasks/mini/README.md, "The recipe": both benchmarks on the v3 world, the mini-rn-w16 tower,
    900 scratch steps at lr 1e-3 (50 warmup), fine-tunes of 600 steps at lr 5e-4 (30 warmup),
    cosine, batch 128, weight decay 0.1, seeds 0-4, D' as in v2; declared pre-registered."""
    from vlbench.registry import registry

    exp = get_experiment("mini-odmap")
    assert BENCHMARKS == ("mini-decorrelated", "mini-shapes-retrieval")
    for bid in BENCHMARKS:
        assert registry().benchmark(bid).option("mini_world") == "v3"
    assert registry().benchmark("mini-decorrelated").version == "3.0"
    assert exp.preregistered and exp.seeds == (0, 1, 2, 3, 4)
    c = exp.common
    assert (c["model"], c["pretrained"], c["batch_size"], c["optimizer"], c["weight_decay"]) == (
        "mini-rn-w16", "none", 128, "adamw", 0.1)
    scratch = exp.arm("biased").sets
    assert scratch == {"steps": 900, "lr": 1e-3, "lr_schedule": "cosine", "warmup_steps": 50}
    assert exp.arm("unbiased").sets == {**scratch, "mini_train": "unbiased"}
    assert exp.finetune == {"steps": 600, "lr": 5e-4, "lr_schedule": "cosine", "warmup_steps": 30}
    assert exp.arm("control").init == exp.arm("synthetic").init == "biased"
    assert exp.arm("synthetic").sets == {"synthetic_ratio": 0.4, "synthetic_fill": "rerender",
                                         "synthetic_captions": "noun-phrase", "group_batches": True}
    # a learning-rate budget (sum of lr over steps) of about a third of the from-scratch one
    def budget(steps: int, lr: float, warmup: int) -> float:
        return sum(lr * (t + 1) / warmup if t < warmup else
                   lr * 0.5 * (1 + math.cos(math.pi * (t - warmup) / (steps - warmup))) for t in range(steps))
    ratio = budget(600, 5e-4, 30) / budget(900, 1e-3, 50)
    assert 0.30 < ratio < 0.36


def test_runs_fine_tuned_from_one_seed_are_paired() -> None:
    exp = get_experiment("mini-odmap")
    assert _paired_runs(exp, "synthetic", "control") and _paired_runs(exp, "synthetic", "biased")
    assert not _paired_runs(exp, "unbiased", "biased")


@pytest.mark.parametrize(("argv", "message"), [
    (["baseline", "experiment", "nope"], "unknown experiment 'nope'"),
    (["baseline", "experiment", "mini-odmap", "--seeds", "a,b"], "--seeds"),
    (["baseline", "experiment", "mini-odmap", "--seeds", "1,1"], "distinct"),
    (["baseline", "experiment", "mini-odmap", "--workers", "0"], "--workers"),
    (["baseline", "experiment", "mini-odmap", "--bootstrap", "-1"], "--bootstrap"),
])
def test_bad_options_are_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_unknown_experiment_in_the_api() -> None:
    with pytest.raises(UsageError):
        get_experiment("mini-odmap-x")
