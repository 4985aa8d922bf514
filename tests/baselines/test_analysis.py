"""`analysis.py`: how the experiment's runs are scored and paired."""

from __future__ import annotations

from vlbench.baselines.analysis import _paired_runs
from vlbench.baselines.experiment import get_experiment


def test_runs_fine_tuned_from_one_seed_are_paired() -> None:
    exp = get_experiment("mini-odmap")
    assert _paired_runs(exp, "synthetic", "control") and _paired_runs(exp, "synthetic", "biased")
    assert not _paired_runs(exp, "unbiased", "biased")
