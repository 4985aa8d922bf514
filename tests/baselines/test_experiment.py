"""The experiment as data (`experiment.py`): its plan of one recipe command per job, the
pre-registered recipe, and the command line's checks of its options. The run itself:
`test_experiment_runner.py`."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from vlbench.baselines.experiment import (
    BENCHMARKS,
    checkpoint_file,
    get_experiment,
    job_argv,
    missing_inits,
    plan_jobs,
)
from vlbench.cli import main
from vlbench.errors import UsageError


def test_jobs_are_one_recipe_command_each(tmp_path: Path) -> None:
    exp = get_experiment("mini-odmap")
    jobs = plan_jobs(exp, tmp_path / "w", tmp_path / "s")
    assert len(jobs) == len(exp.arms) * len(exp.seeds) == 25
    control = next(j for j in jobs if j.arm.name == "control" and j.seed == 2)
    argv = job_argv(control, "mini-decorrelated", tmp_path / "x.json", None)
    assert argv[:3] == ["baseline", "run", "clip-finetune"]
    assert f"pretrained={tmp_path / 'w' / 'biased-seed2' / 'checkpoint.pt'}" in argv and "seed=2" in argv
    synthetic = next(j for j in jobs if j.arm.name == "synthetic" and j.seed == 2)
    steps = {s for s in synthetic.sets if s.startswith("steps=")}
    assert steps == {s for s in control.sets if s.startswith("steps=")}  # arms 2 and 3: the same steps
    unbiased = next(j for j in jobs if j.arm.name == "unbiased")
    assert "mini_train=unbiased" in unbiased.sets
    null = next(j for j in jobs if j.arm.name == "synthetic-null" and j.seed == 2)
    # D'-null: arm 3's command with one setting more (the same checkpoint, seed and everything else)
    assert set(null.sets) - set(synthetic.sets) == {"synthetic_removals=keep-cooccurrence"}
    assert set(synthetic.sets) <= set(null.sets) and null.arm.recipe == synthetic.arm.recipe


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
    # issue 30's D'-null: D' in everything but its removals
    assert exp.arm("synthetic-null").sets == {**exp.arm("synthetic").sets, "synthetic_removals": "keep-cooccurrence"}
    assert exp.arm("synthetic-null").init == "biased" and exp.arm("synthetic-null").recipe == "clip-finetune-synthetic"
    # a learning-rate budget (sum of lr over steps) of about a third of the from-scratch one
    def budget(steps: int, lr: float, warmup: int) -> float:
        return sum(lr * (t + 1) / warmup if t < warmup else
                   lr * 0.5 * (1 + math.cos(math.pi * (t - warmup) / (steps - warmup))) for t in range(steps))
    ratio = budget(600, 5e-4, 30) / budget(900, 1e-3, 50)
    assert 0.30 < ratio < 0.36


@pytest.mark.parametrize(("argv", "message"), [
    (["baseline", "experiment", "nope"], "unknown experiment 'nope'"),
    (["baseline", "experiment", "mini-odmap", "--seeds", "a,b"], "--seeds"),
    (["baseline", "experiment", "mini-odmap", "--seeds", "1,1"], "distinct"),
    (["baseline", "experiment", "mini-odmap", "--workers", "0"], "--workers"),
    (["baseline", "experiment", "mini-odmap", "--bootstrap", "-1"], "--bootstrap"),
    (["baseline", "experiment", "mini-odmap", "--arms", "nope"], "unknown: nope"),
    (["baseline", "experiment", "mini-odmap", "--arms", "control,control"], "--arms"),
    (["baseline", "experiment", "mini-odmap", "--arms", ","], "--arms"),
])
def test_bad_options_are_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_unknown_experiment_in_the_api() -> None:
    with pytest.raises(UsageError):
        get_experiment("mini-odmap-x")


def test_the_record_describes_itself_as_data() -> None:
    """What results.json stores about the experiment (the report gets the record, never this module)."""
    exp = get_experiment("mini-odmap", quick=True, seeds=[3, 1])
    doc = exp.describe()
    assert doc["name"] == "mini-odmap" and doc["seeds"] == [3, 1] and doc["preregistered"] is True
    assert doc["common"] == dict(exp.common) and doc["finetune"] == dict(exp.finetune)
    assert [a["name"] for a in doc["arms"]] == ["biased", "control", "synthetic", "unbiased", "synthetic-null"]
    assert doc["arms"][1] == {"name": "control", "label": "2 control fine-tune", "recipe": "clip-finetune",
                              "init": "biased", "sets": {}}


def test_arms_select_a_subset_in_the_experiment_s_order(tmp_path: Path) -> None:
    exp = get_experiment("mini-odmap", arms=["synthetic-null", "biased"])
    assert [a.name for a in exp.arms] == ["biased", "synthetic-null"]
    jobs = plan_jobs(exp, tmp_path / "w", tmp_path / "s")
    assert {j.arm.name for j in jobs} == {"biased", "synthetic-null"} and len(jobs) == 10
    # with its starting arm in the run, a fine-tune needs no checkpoint yet
    assert missing_inits(exp, tmp_path / "w") == []
    alone = get_experiment("mini-odmap", arms=["synthetic-null"], seeds=[0, 1])
    assert missing_inits(alone, tmp_path / "w") == [checkpoint_file(tmp_path / "w", "biased", s) for s in (0, 1)]
    checkpoint_file(tmp_path / "w", "biased", 0).parent.mkdir(parents=True)
    checkpoint_file(tmp_path / "w", "biased", 0).write_bytes(b"x")
    assert missing_inits(alone, tmp_path / "w") == [checkpoint_file(tmp_path / "w", "biased", 1)]


def test_the_dose_arms_run_only_when_named(tmp_path: Path) -> None:
    """Issue 30's dose-response arms are exploratory: not in the default run (the pre-registered
    five arms and their budget), run with `--arms`; each is D'-null with one setting changed."""
    assert [a.name for a in get_experiment("mini-odmap").arms] == [
        "biased", "control", "synthetic", "unbiased", "synthetic-null"]
    exp = get_experiment("mini-odmap", arms=["dose-30", "synthetic-null", "dose-10"])
    assert [a.name for a in exp.arms] == ["synthetic-null", "dose-10", "dose-30"]
    null = exp.arm("synthetic-null").sets
    for arm, share in (("dose-10", "0.1"), ("dose-30", "0.3")):
        assert exp.arm(arm).exploratory and exp.arm(arm).init == "biased"
        assert exp.arm(arm).sets == {**null, "synthetic_removals": f"breaking:{share}"}
    assert exp.describe()["arms"][1]["exploratory"] is True and "exploratory" not in exp.describe()["arms"][0]
    from vlbench.baselines.config import resolve

    assert resolve({"synthetic_removals": "breaking:0.3"}).synthetic_removals == "breaking:0.3"
    with pytest.raises(UsageError, match="synthetic_removals must be"):
        resolve({"synthetic_removals": "breaking:1.5"})


def test_a_fine_tune_arm_without_its_checkpoints_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["baseline", "experiment", "mini-odmap", "--arms", "synthetic-null", "--work-dir", str(tmp_path / "w"),
            "--data-dir", str(tmp_path / "d"), "--out", str(tmp_path / "r"), "--submissions", str(tmp_path / "s")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "starting checkpoints are missing" in err and "biased-seed0" in err
    assert not (tmp_path / "r").exists() and not (tmp_path / "s").exists()


def test_seeds_help_is_the_record_s(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["baseline", "experiment", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    seeds = ",".join(map(str, get_experiment("mini-odmap").seeds))
    assert f"(default: the experiment's, mini-odmap: {seeds})" in help_text and seeds == "0,1,2,3,4"


def test_the_experiment_modules_import_one_way() -> None:
    """experiment (data) <- analysis <- report <- experiment_runner: no module imports a later one."""
    import ast

    import vlbench.baselines as package

    order = ["experiment", "analysis", "report", "experiment_runner"]
    root = Path(package.__file__).parent
    for i, name in enumerate(order):
        tree = ast.parse((root / f"{name}.py").read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module}
        assert not imported & set(order[i:]), (name, imported)
