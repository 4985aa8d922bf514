"""`vlbench baseline experiment mini-odmap --quick` end to end (`experiment_runner.py`): the files it
writes, every submission valid and regenerable from its meta, the report's numbers equal to
`vlbench score`. No claim about the sign of any result: at toy size the numbers mean nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from vlbench.baselines.experiment import BENCHMARKS, get_experiment
from vlbench.cli import main
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
    for a, b in (("synthetic", "control"), ("synthetic", "biased"), ("unbiased", "biased"),
                 ("synthetic", "synthetic-null"), ("synthetic-null", "control")):
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
    # issue 30: the specificity contrasts, the absent-dependent measures and P(dependent | cue)
    spec = pre["specificity"]
    assert spec["primary"]["contrast"] == "synthetic - synthetic-null" and spec["primary"]["metric"] == "ODmAP@1/partner"
    assert spec["key_secondary"]["metric"] == "absent-dependent@1/control" and len(spec["descriptive"]) == 6
    assert "Is the mitigation specific" in readme and "P(dependent | cue) in the training data" in readme
    for row in doc["pooled"]:
        for m in ("absent-dependent@1/control", "absent-dependent@1/partner", "any-absent-dependent@1/control"):
            assert 0.0 <= row["scores"][m] <= 1.0
    co = {(r["arm"], r["seed"]): r for r in doc["cooccurrence"]}
    assert set(co) == {(a, s) for a in ("synthetic", "synthetic-null") for s in exp.seeds}
    for (arm, _), r in co.items():
        p = r["p_dependent_given_cue"]
        assert (r["breaking_pairs"] == 0) is (arm == "synthetic-null") and r["synthetic_pairs"] > 0
        assert p["D"]["all"]["p"] == co[("synthetic", exp.seeds[0])]["p_dependent_given_cue"]["D"]["all"]["p"]
        assert {"D", "D'", "D+D'"} == set(p)
    null, paper = co[("synthetic-null", exp.seeds[0])], co[("synthetic", exp.seeds[0])]
    assert (null["p_dependent_given_cue"]["D+D'"]["all"]["p"] > paper["p_dependent_given_cue"]["D+D'"]["all"]["p"])
    timing = doc["timing"]
    assert timing["total_cpu_s"] > 0 and timing["train_and_predict_cpu_s"] > 0 and timing["load_average"]["samples"]
    moved = doc["fine_tune_moved"]
    assert {(m["arm"], m["seed"]) for m in moved} == {(a, s) for a in ("control", "synthetic", "synthetic-null")
                                                      for s in exp.seeds}
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


def test_outputs_are_checked_before_any_training(tmp_path: Path) -> None:
    """`baseline experiment`'s report folder is replaced only when it holds an earlier report (the
    committed ones have no marker: told by their three files), a submission written by hand is
    refused, a missing parent folder is refused; nothing is made by a refused run."""
    import shutil

    from vlbench.baselines.experiment import plan_jobs
    from vlbench.baselines.experiment_runner import _check_outputs
    from vlbench.errors import UsageError

    exp = get_experiment("mini-odmap", quick=True)
    work, subs, out = tmp_path / "work", tmp_path / "subs", tmp_path / "report"
    jobs = plan_jobs(exp, work, subs)

    def check(out_dir: Path = out, force: bool = False, subs_dir: Path = subs) -> None:
        _check_outputs(out_dir, subs_dir, work, True, plan_jobs(exp, work, subs_dir), force=force, report_only=False)

    committed = Path(__file__).resolve().parents[2] / "baselines" / "results" / "mini-odmap"
    shutil.copytree(committed, out)
    check()  # an earlier report: may be replaced
    (out / "notes.md").write_text("mine")
    with pytest.raises(UsageError, match="did not write"):
        check()
    check(force=True)
    (out / "notes.md").unlink()
    path = jobs[0].outputs[0][1]
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"vlbench": 1, "benchmark": "mini-retrieval", "task": "retrieval",
                                "meta": {"method": "by hand"}, "predictions": {}}))
    with pytest.raises(UsageError, match="not a submission written by a vlbench command"):
        check()
    check(force=True)
    with pytest.raises(UsageError, match="does not exist"):
        check(subs_dir=tmp_path / "no" / "subs")
    assert not (tmp_path / "no").exists()


def test_arms_run_a_subset_from_the_checkpoints_there(quick: Path, data_dir: Path) -> None:
    """`--arms synthetic-null,dose-30`: their starting checkpoints are in the work folder,
    D'-null's finished checkpoint is reused and its predictions equal the full run's; the
    exploratory dose arm trains on D'-null's first pairs plus its counterexamples; the report
    covers those arms only, with the dose-response section marked exploratory."""
    out, subs = quick / "subset-results", quick / "subset-subs"
    argv = ["baseline", "experiment", "mini-odmap", "--quick", "--arms", "synthetic-null,dose-30", "--data-dir",
            str(data_dir), "--work-dir", str(quick / "runs"), "--out", str(out), "--submissions", str(subs),
            "--workers", "1", "--bootstrap", "20", "--quiet"]
    assert main(argv) == 0
    doc = json.loads((out / "results.json").read_text())
    assert [a["name"] for a in doc["experiment"]["arms"]] == ["synthetic-null", "dose-30"]
    assert {r["arm"] for r in doc["runs"]} == {"synthetic-null", "dose-30"} and "specificity" not in doc["preregistered"]
    for benchmark in BENCHMARKS:
        name = "mini-odmap-synthetic-null-seed1.json"
        again, first = json.loads((subs / benchmark / name).read_text()), json.loads((quick / "subs" / benchmark / name).read_text())
        assert again["predictions"] == first["predictions"]
    facts = {(r["arm"], r["seed"]): r for r in doc["cooccurrence"]}
    for seed in (0, 1):
        null, dose = facts[("synthetic-null", seed)], facts[("dose-30", seed)]
        assert null["breaking_pairs"] == 0 and dose["synthetic_pairs"] == null["synthetic_pairs"]
        assert dose["breaking_pairs"] == round(0.3 * dose["synthetic_pairs"]) and dose["removals"] == "breaking:0.3"
    assert {(d["a"], d["b"]) for d in doc["differences"]} == {("dose-30", "synthetic-null")}
    text = (out / "README.md").read_text()
    assert "## Dose-response (exploratory" in text and "(exploratory: not pre-registered)" in text
