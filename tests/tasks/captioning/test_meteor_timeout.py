"""A Meteor JVM that stays alive but never answers is stopped by the watchdog, with a sentence."""

from __future__ import annotations

import sys

import numpy as np

from vlbench.tasks.captioning.meteor import METEOR_STATS, MeteorUnavailable, _Jvm


def test_a_silent_jvm_is_killed_and_reported(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("VLBENCH_METEOR_TIMEOUT", "1")
    silent = _Jvm([sys.executable, "-c", "import time; time.sleep(120)"], str(tmp_path))
    out = np.zeros((2, METEOR_STATS))
    errors: list[MeteorUnavailable] = []
    silent.run(["SCORE ||| a ||| b", "SCORE ||| c ||| d"], out, errors)
    silent.close()
    assert len(errors) == 1
    assert "no answer within 1 s" in str(errors[0]) and "VLBENCH_METEOR_TIMEOUT" in str(errors[0])
    assert silent.proc.poll() is not None  # the process is gone, not left running
