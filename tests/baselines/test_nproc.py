"""`vlbench baseline run ... --nproc 2` end to end on CPU: torchrun, two gloo processes, one valid
submission. Run as a separate process whose every wait is bounded: a launch that cannot meet
(hostname, firewall) fails the test instead of hanging the suite."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.baselines.conftest import TINY
from tests.baselines.test_train import loopback_env
from vlbench.baselines.cli import _torchrun_argv
from vlbench.submission import validate

LAUNCH_TIMEOUT_S = 300


def test_torchrun_argv_drops_only_nproc() -> None:
    argv = ["baseline", "run", "clip-finetune", "--nproc", "4", "--benchmark", "b", "--nproc=2", "--set", "x=1"]
    assert _torchrun_argv(argv) == ["baseline", "run", "clip-finetune", "--benchmark", "b", "--set", "x=1"]


def test_nproc_2_on_cpu_writes_one_valid_submission(tmp_path: Path, data_dir: Path) -> None:
    out = tmp_path / "two.json"
    argv = [sys.executable, "-m", "vlbench", "baseline", "run", "clip-finetune", "--benchmark", "mini-retrieval",
            "--out", str(out), "--data-dir", str(data_dir), "--device", "cpu", "--quiet", "--nproc", "2",
            "--checkpoint-dir", str(tmp_path / "ckpt"), "--set", *TINY, "steps=2", "log_every=1"]
    # torchrun's wait for a worker to stop after a failure (its SIGTERM -> SIGKILL grace), in seconds
    env = {**os.environ, **loopback_env(), "OMP_NUM_THREADS": "1", "TORCH_ELASTIC_SHUTDOWN_TIMEOUT": "10"}
    env.pop("WORLD_SIZE", None)
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # its own process group: torchrun and workers end together
    try:
        stdout, stderr = proc.communicate(timeout=LAUNCH_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        pytest.fail(f"--nproc 2 did not finish within {LAUNCH_TIMEOUT_S} s; killed")
    assert proc.returncode == 0, stderr[-3000:]
    assert f"wrote {out}" in stdout  # rank 0 writes; the other rank only trains
    validate(out, data_dir=data_dir)
    recipe = json.loads(out.read_text())["meta"]["extra"]["recipe"]
    assert recipe["processes"] == 2 and recipe["train"]["steps"] == 2
    assert "--nproc" not in recipe["command"]  # what each process ran, under torchrun
    log = [json.loads(line) for line in (tmp_path / "ckpt" / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == [1, 2]  # one log, written by rank 0 only
