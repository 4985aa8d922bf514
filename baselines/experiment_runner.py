"""Running an experiment (`experiment.py` holds what it is): every job of its plan, in worker
processes, then the report (`report.write_report`), given the `Experiment` record.

The run's time is recorded as wall time and as CPU time (this process and its workers), with the
machine's load average sampled every minute: on a shared machine the wall time says as much about
the other processes as about the experiment, and the CPU time and load say how much."""

from __future__ import annotations

import contextlib
import os
import resource
import shlex
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from vlbench.errors import UsageError

from .experiment import WORLD, Job, get_experiment, job_argv, missing_inits, plan_jobs


def _run_job(job: Job, exp_name: str, data_dir: Path | None, threads: int, command: str,
             force: bool = False) -> dict[str, Any]:
    """One arm and seed: train once (the first benchmark's run), predict for every benchmark."""
    import torch

    from .run import run_recipe

    torch.set_num_threads(threads)
    info: dict[str, Any] = {"arm": job.arm.name, "seed": job.seed, "files": {}}
    started, cpu_started = time.perf_counter(), time.process_time()
    for benchmark, out in job.outputs:
        out.parent.mkdir(exist_ok=True)
        argv = job_argv(job, benchmark, out, data_dir)
        result = run_recipe(job.arm.recipe, benchmark, out, sets=list(job.sets), device="cpu",
                            data_dir=data_dir, checkpoint_dir=job.checkpoint_dir, argv=argv, progress=False,
                            meta_extra={"experiment": {"name": exp_name, "arm": job.arm.name, "arm_label": job.arm.label,
                                                       "seed": job.seed, "init": job.arm.init, "command": command}},
                            method=f"{exp_name} arm {job.arm.label} (seed {job.seed})", force=force)
        info["files"][benchmark] = str(out)
        if result.train and result.train.get("resumed_from_step", 0) == 0:
            info["train"] = result.train
    info["wall_time_s"] = round(time.perf_counter() - started, 2)
    info["cpu_time_s"] = round(time.process_time() - cpu_started, 2)
    return info


def run_jobs(jobs: Sequence[Job], exp_name: str, data_dir: Path | None, workers: int, command: str,
             progress: bool, force: bool = False) -> list[dict[str, Any]]:
    """Arms without `init` first (in parallel), then the fine-tunes that start from them.

    Several one-thread processes use two cores better than one two-thread process at these
    matrix sizes (measured: baselines/README.md)."""
    phases = [[j for j in jobs if j.arm.init is None], [j for j in jobs if j.arm.init is not None]]
    done: list[dict[str, Any]] = []
    total = len(jobs)
    for phase in phases:
        if not phase:
            continue
        if workers <= 1:
            results = (_run_job(j, exp_name, data_dir, 1, command, force) for j in phase)
            for r in results:
                done.append(_report(r, len(done) + 1, total, progress))
            continue
        import multiprocessing

        # spawn: torch and fork do not mix (OpenMP pools, thread state)
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(_run_job, j, exp_name, data_dir, 1, command, force) for j in phase]
            for f in futures:
                done.append(_report(f.result(), len(done) + 1, total, progress))
    return done


def _report(info: dict[str, Any], i: int, total: int, progress: bool) -> dict[str, Any]:
    if progress:
        train = info.get("train") or {}
        rate = f", {train['pairs_per_s']:.0f} pairs/s" if train.get("pairs_per_s") else ""
        cpu = f" ({info['cpu_time_s']:.0f} s CPU)" if "cpu_time_s" in info else ""
        load = ", load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()) if hasattr(os, "getloadavg") else ""
        print(f"[{i}/{total}] {info['arm']} seed {info['seed']}: {info['wall_time_s']:.0f} s{cpu}{rate}{load}",
              file=sys.stderr, flush=True)
    return info


def _check_outputs(out_dir: Path, subs: Path, work: Path, work_named: bool, jobs: Sequence[Job], *,
                   force: bool, report_only: bool) -> None:
    """Refuse, before any work, what the output rule forbids (`vlbench.output_rule`): a report
    folder holding anything but an earlier report, a missing parent folder, a submission file
    vlbench did not write. Makes the work and submissions folders (a named one only inside an
    existing folder; the default work folder, in the data folder, is vlbench's own), and removes
    them again, when just made, if a check fails."""
    from vlbench.output_rule import (
        WRITTEN_SUBMISSION,
        check_file_target,
        check_folder_target,
        check_folder_to_fill,
    )

    from .report import REPORT_FOLDER

    made: list[Path] = []
    try:
        for folder, option in ((work, "--work-dir"), (subs, "--submissions")):
            if folder == work and not work_named:
                missing = [p for p in (folder, *folder.parents) if not p.exists()]
                folder.mkdir(parents=True, exist_ok=True)
                made += missing
            elif not check_folder_to_fill(folder, option).exists():
                folder.mkdir()
                made.append(folder)
        check_folder_target(out_dir, REPORT_FOLDER, force=force)
        if not report_only:
            for job in jobs:
                for _, path in job.outputs:
                    if path.parent.is_dir():
                        check_file_target(path, WRITTEN_SUBMISSION, force=force, option="--submissions:")
    except BaseException:
        for folder in sorted(made, key=lambda p: -len(p.parts)):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


class LoadSampler:
    """The 1-, 5- and 15-minute load averages every `every` seconds while the run lasts (the
    machine's, not only this run's: the share of the cores other processes took)."""

    def __init__(self, every: float = 60.0) -> None:
        self.every, self.samples = every, []  # type: ignore[var-annotated]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._t0 = time.perf_counter()

    def _sample(self) -> None:
        if hasattr(os, "getloadavg"):
            self.samples.append([round(time.perf_counter() - self._t0, 1), *(round(v, 2) for v in os.getloadavg())])

    def _run(self) -> None:
        self._sample()
        while not self._stop.wait(self.every):
            self._sample()

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def summary(self) -> dict[str, Any]:
        ones = [s[1] for s in self.samples]
        return {"every_s": self.every, "samples": self.samples,
                "mean_1min": round(sum(ones) / len(ones), 2) if ones else None, "max_1min": max(ones, default=None)}


def cpu_seconds() -> dict[str, float]:
    """User + system CPU seconds of this process and of its finished children (the workers)."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    own, kids = me.ru_utime + me.ru_stime, children.ru_utime + children.ru_stime
    return {"self_s": round(own, 1), "workers_s": round(kids, 1), "total_s": round(own + kids, 1)}


def run_experiment(
    name: str,
    *,
    quick: bool = False,
    out: str | os.PathLike | None = None,
    submissions: str | os.PathLike | None = None,
    work_dir: str | os.PathLike | None = None,
    data_dir: str | os.PathLike | None = None,
    seeds: Sequence[int] | None = None,
    arms: Sequence[str] | None = None,
    workers: int | None = None,
    bootstrap: int = 1000,
    progress: bool = True,
    argv: list[str] | None = None,
    report_only: bool = False,
    force: bool = False,
) -> Path:
    """Train, predict, score and report; returns the results folder. `report_only`: score the
    submissions already written and rewrite the report, without training. `arms`: a subset of the
    experiment's arms (the report covers those). Every output follows the output rule, checked
    before any training (`_check_outputs`); `force` as `--force`."""
    from vlbench.ground_truth import default_data_dir

    from .data import mini_unbiased_train, mini_world
    from .report import write_report

    exp = get_experiment(name, quick, seeds, arms)
    if bootstrap < 0:
        raise UsageError("--bootstrap must not be negative")
    data = Path(data_dir) if data_dir else None
    base = data or default_data_dir()
    work = Path(work_dir) if work_dir else base / "runs" / (f"{exp.name}-quick" if quick else exp.name)
    out_dir = Path(out) if out else (work / "results" if quick else Path("baselines") / "results" / exp.name)
    # a quick run's submissions beside its report, not in it: the report folder holds the report only
    subs = Path(submissions) if submissions else (work / "submissions" if quick else Path("submissions"))
    jobs = plan_jobs(exp, work, subs)
    missing = [] if report_only else missing_inits(exp, work)
    if missing:  # before any folder is made
        raise UsageError(f"--arms: {len(missing)} starting checkpoints are missing, e.g. {missing[0]}; "
                         "run the arms they come from too")
    _check_outputs(out_dir, subs, work, bool(work_dir), jobs, force=force, report_only=report_only)
    # two one-thread workers on two cores (the pre-registered recipe); more where there are more cores
    workers = workers or min(4, max(1, (os.cpu_count() or 1)), len(exp.seeds) * 2)
    command = shlex.join(["vlbench", *(sys.argv[1:] if argv is None else argv)])
    started, cpu_start = time.perf_counter(), cpu_seconds()
    if report_only:
        missing = [str(p) for j in jobs for _, p in j.outputs if not p.is_file()]
        if missing:
            raise UsageError(f"--report-only: {len(missing)} submissions are missing, e.g. {missing[0]}; run the experiment")
        runs = [{"arm": j.arm.name, "seed": j.seed, "files": {b: str(p) for b, p in j.outputs}} for j in jobs]
        timing: dict[str, Any] = {"report_only": True}
    else:
        with LoadSampler() as load:
            # the world and the twin once, before the workers start (they would race to write them)
            mini_unbiased_train(mini_world(base, progress=progress, world=WORLD), progress=progress, name=WORLD)
            runs = run_jobs(jobs, exp.name, data, workers, command, progress, force)
        train_s = time.perf_counter() - started
        used = cpu_seconds()
        timing = {"train_and_predict_s": round(train_s, 1), "workers": workers,
                  "train_and_predict_cpu_s": round(used["total_s"] - cpu_start["total_s"], 1),
                  "load_average": load.summary()}

    def total_cpu() -> dict[str, Any]:
        return {} if report_only else {"total_cpu_s": round(cpu_seconds()["total_s"] - cpu_start["total_s"], 1)}

    write_report(exp, jobs, runs, out_dir, data_dir=data, bootstrap=bootstrap, command=command, quick=quick,
                 timing=timing, started=started, finish_timing=total_cpu, force=force)
    if progress:
        print(f"wrote {out_dir} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return out_dir
