"""The ODmAP paper's result in miniature: four arms, several seeds, one command.

`vlbench baseline experiment mini-odmap [--quick]` trains every arm and seed with the shared recipe
machinery (`run.run_recipe`: the same configuration record, training loop, provenance and
submission writer as `vlbench baseline run`), scores every submission with vlbench, and writes
the table, the paired bootstrap differences and the plot (`baselines/results/mini-odmap/`).

The arms, on the world of mini-decorrelated v3 (pre-registered in tasks/mini/README.md):
1. biased: a small open_clip model (ResNet tower) trained from scratch on the v3 world's train split
   (a cue brings its dependent with probability 0.95);
2. control: arm 1 fine-tuned on train only, same steps and learning-rate schedule as arm 3;
3. synthetic: arm 1 fine-tuned on train + D' (object-removed pairs by the decorrelated task's tau
   rules, exact re-render fill, noun-phrase-removal captions), the paper's mitigation;
4. unbiased: the same model and steps as arm 1, trained on train's unbiased twin;
5. synthetic-null ("D'-null", issue 30): arm 3 in everything (checkpoints, seeds, steps, ratio,
   re-render, caption rule, grouped batches) except that its removals keep each (cue, dependent)
   pair's co-occurrence (free classes only, or a cue with its dependent), so its extra pairs
   break no co-occurrence: is D''s gain specific to the correlation it breaks?
Arms 1 and 4 are the validation (the gates of `preregistration.py`), 2 and 3 the mitigation, 3 and 5
its specificity. The
retrieval benchmark is the same world's test split (`mini-shapes-retrieval`): the models never see
the v2 world's colour captions. (The v2 run's report is kept in `baselines/results/mini-odmap-v2/`.)

An experiment is data (`Experiment`, `Arm`): the arms name a recipe and the settings they change;
each (arm, seed) run is exactly one `vlbench baseline run` command per benchmark (`plan_jobs`,
`job_argv`), recorded in the submission's meta, so any single file can be regenerated on its own.
This module is only that data and its plan: `experiment_runner.py` runs the jobs, `analysis.py`
scores them and `report.py` writes the report, each given the `Experiment` record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vlbench.errors import UsageError

DECORRELATED_BENCHMARK = "mini-decorrelated"
RETRIEVAL_BENCHMARK = "mini-shapes-retrieval"
BENCHMARKS = (DECORRELATED_BENCHMARK, RETRIEVAL_BENCHMARK)
WORLD = "v3"  # the mini world both benchmarks are made from (their records' `mini_world`)


@dataclass(frozen=True)
class Arm:
    name: str
    label: str
    recipe: str
    sets: Mapping[str, Any] = field(default_factory=dict)
    init: str | None = None  # the arm whose final weights (same seed) this arm starts from
    # Run only when named (`--arms`): an analysis declared after the pre-registered run, reported
    # as exploratory, and not part of the experiment's default run or its time budget.
    exploratory: bool = False


@dataclass(frozen=True)
class Experiment:
    name: str
    description: str
    arms: tuple[Arm, ...]
    seeds: tuple[int, ...]
    common: Mapping[str, Any]  # settings of every arm (model, batch, ...)
    finetune: Mapping[str, Any]  # settings of the arms that start from another arm
    plot_x: str = "i2t_R@1"
    plot_y: str = "ODmAP@1/partner"
    # Whether `preregistration.py` (gates, primary, secondary) was committed before this
    # experiment's runs. False: the report applies them after the fact and says so.
    preregistered: bool = False

    def arm(self, name: str) -> Arm:
        return next(a for a in self.arms if a.name == name)

    def describe(self) -> dict[str, Any]:
        """The experiment as data (for results.json and the README)."""
        return {
            "name": self.name, "description": self.description, "seeds": list(self.seeds),
            "preregistered": self.preregistered, "common": dict(self.common), "finetune": dict(self.finetune),
            "arms": [{"name": a.name, "label": a.label, "recipe": a.recipe, "init": a.init, "sets": dict(a.sets),
                      **({"exploratory": True} if a.exploratory else {})} for a in self.arms],
        }


# The pre-registered v3 recipe (tasks/mini/README.md, "The recipe"), for two CPU cores: the
# mini-rn-w16 tower (a recogniser that sees shapes), 900 steps from scratch at lr 1e-3, and
# fine-tunes of 600 steps at lr 5e-4 (about 33% of the from-scratch learning-rate budget).
MINI_COMMON = {
    "model": "mini-rn-w16", "pretrained": "none", "batch_size": 128, "optimizer": "adamw",
    "weight_decay": 0.1, "workers": 0, "cache_images": True, "embed_batch_size": 512, "log_every": 50,
    "checkpoint_every": 250,
}
MINI_SCRATCH = {"steps": 900, "lr": 1e-3, "lr_schedule": "cosine", "warmup_steps": 50}
MINI_FINETUNE = {"steps": 600, "lr": 5e-4, "lr_schedule": "cosine", "warmup_steps": 30}
MINI_SYNTHETIC = {"synthetic_ratio": 0.4, "synthetic_fill": "rerender", "synthetic_captions": "noun-phrase",
                  "group_batches": True}


def _arms(scratch: Mapping[str, Any], synthetic: Mapping[str, Any]) -> tuple[Arm, ...]:
    return (
        Arm("biased", "1 biased", "clip-scratch", dict(scratch)),
        Arm("control", "2 control fine-tune", "clip-finetune", {}, init="biased"),
        Arm("synthetic", "3 + synthetic (D')", "clip-finetune-synthetic", dict(synthetic), init="biased"),
        Arm("unbiased", "4 unbiased reference", "clip-scratch", {**scratch, "mini_train": "unbiased"}),
        Arm("synthetic-null", "5 + synthetic, co-occurrence kept (D'-null)", "clip-finetune-synthetic",
            {**synthetic, "synthetic_removals": "keep-cooccurrence"}, init="biased"),
        # issue 30's dose-response (exploratory): D'-null with 10% and 30% of its pairs replaced by
        # counterexamples (D' itself has about 60%)
        *(Arm(f"dose-{pct}", f"6{chr(ord('a') + i)} + synthetic, {pct}% counterexamples", "clip-finetune-synthetic",
              {**synthetic, "synthetic_removals": f"breaking:{pct / 100:g}"}, init="biased", exploratory=True)
          for i, pct in enumerate(DOSES)),
    )


DOSES = (10, 30)  # percent of D''s pairs that are counterexamples, in the dose-response arms


EXPERIMENTS: dict[str, Experiment] = {
    "mini-odmap": Experiment(
        name="mini-odmap",
        description=("mini-decorrelated v3's validation (biased and unbiased references), the ODmAP paper's "
                     "mitigation (D' vs control fine-tune) and its specificity (D' vs D'-null, whose removals keep "
                     "the co-occurrence), five arms x five seeds, CPU"),
        arms=_arms(MINI_SCRATCH, MINI_SYNTHETIC),
        seeds=(0, 1, 2, 3, 4),
        common=MINI_COMMON,
        finetune=MINI_FINETUNE,
        preregistered=True,
    ),
}

# --quick: the same pipeline at toy size (tests): a tiny model, a few steps, two seeds so that
# pooling over seeds is exercised; numbers mean nothing.
QUICK = {
    "common": {**MINI_COMMON, "model": "tiny-vit-p8", "batch_size": 32, "checkpoint_every": 50},
    "scratch": {"steps": 6, "lr": 1e-3, "lr_schedule": "cosine", "warmup_steps": 0, "max_train_pairs": 400},
    "finetune": {"steps": 4, "lr": 1e-4, "lr_schedule": "cosine", "warmup_steps": 0, "max_train_pairs": 400},
    "synthetic": {**MINI_SYNTHETIC, "synthetic_ratio": 0.05},
    "seeds": (0, 1),
}


def get_experiment(name: str, quick: bool = False, seeds: Sequence[int] | None = None,
                   arms: Sequence[str] | None = None) -> Experiment:
    """The named experiment; `quick` at toy size; `seeds` and `arms` (names) a subset of its runs.
    A subset of arms keeps the experiment's order; an arm that starts from another arm's weights
    may be run without that arm when its checkpoints are already there (`missing_inits`)."""
    if name not in EXPERIMENTS:
        raise UsageError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}")
    exp = EXPERIMENTS[name]
    if quick:
        exp = replace(exp, arms=_arms(QUICK["scratch"], QUICK["synthetic"]), common=QUICK["common"],
                      finetune=QUICK["finetune"], seeds=QUICK["seeds"])
    if seeds is not None:
        if not seeds or len(set(seeds)) != len(seeds) or any(s < 0 for s in seeds):
            raise UsageError("--seeds: distinct non-negative integers, e.g. 0,1,2")
        exp = replace(exp, seeds=tuple(seeds))
    if arms is not None:
        known = [a.name for a in exp.arms]
        unknown = [a for a in arms if a not in known]
        if unknown or not arms or len(set(arms)) != len(arms):
            raise UsageError(f"--arms: distinct names of {exp.name}'s arms ({', '.join(known)})"
                             + (f"; unknown: {', '.join(unknown)}" if unknown else ""))
        return replace(exp, arms=tuple(a for a in exp.arms if a.name in arms))
    return replace(exp, arms=tuple(a for a in exp.arms if not a.exploratory))


def missing_inits(exp: Experiment, work: Path) -> list[Path]:
    """The starting checkpoints that the fine-tune arms need and that neither exist nor are made
    by an arm of this run (a subset of arms run after their starting arm)."""
    names = {a.name for a in exp.arms}
    return [checkpoint_file(work, a.init, s) for a in exp.arms if a.init and a.init not in names
            for s in exp.seeds if not checkpoint_file(work, a.init, s).is_file()]


@dataclass(frozen=True)
class Job:
    arm: Arm
    seed: int
    sets: tuple[str, ...]  # --set key=value strings
    checkpoint_dir: Path
    outputs: tuple[tuple[str, Path], ...]  # (benchmark, submission path)


def submission_name(exp: Experiment, arm: str, seed: int) -> str:
    return f"{exp.name}-{arm}-seed{seed}.json"


def checkpoint_file(work: Path, arm: str, seed: int) -> Path:
    return work / f"{arm}-seed{seed}" / "checkpoint.pt"


def plan_jobs(exp: Experiment, work: Path, submissions: Path) -> list[Job]:
    jobs = []
    for arm in exp.arms:
        for seed in exp.seeds:
            values: dict[str, Any] = {**exp.common, **(exp.finetune if arm.init else {}), **arm.sets, "seed": seed}
            if arm.init:
                values["pretrained"] = str(checkpoint_file(work, arm.init, seed))
            sets = tuple(f"{k}={_text(v)}" for k, v in values.items())
            outputs = tuple((b, submissions / b / submission_name(exp, arm.name, seed)) for b in BENCHMARKS)
            jobs.append(Job(arm, seed, sets, work / f"{arm.name}-seed{seed}", outputs))
    return jobs


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return str(value)


def job_argv(job: Job, benchmark: str, out: Path, data_dir: Path | None) -> list[str]:
    """The `vlbench baseline run` command (without `vlbench`) that makes one submission."""
    argv = ["baseline", "run", job.arm.recipe, "--benchmark", benchmark, "--out", str(out),
            "--device", "cpu", "--checkpoint-dir", str(job.checkpoint_dir)]
    if data_dir is not None:
        argv += ["--data-dir", str(data_dir)]
    return [*argv, "--set", *job.sets]
