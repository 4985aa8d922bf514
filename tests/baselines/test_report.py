"""`report.py`: what the experiment's README says about the run it reports."""

from __future__ import annotations

from types import SimpleNamespace

from vlbench.baselines.analysis import DECORRELATED, NAMED, RETRIEVAL
from vlbench.baselines.experiment import BENCHMARKS
from vlbench.baselines.report import render_markdown


def test_quick_report_says_it_is_a_toy_run() -> None:
    exp = SimpleNamespace(name="mini-odmap", arms=[], seeds=[0, 1], preregistered=True)
    floor = {c: 0.1 for c in [*DECORRELATED, *RETRIEVAL, *NAMED]}
    report = {"pooled": [], "runs": [], "differences": [], "preregistered": {"gates": []},
              "chance": {b: {"scores": floor} for b in BENCHMARKS}}
    toy = render_markdown(exp, report, "vlbench baseline experiment mini-odmap --quick", {}, quick=True)
    assert toy.startswith("# mini-odmap: results of a toy run (--quick)")
    assert "A toy run (`--quick`)" in toy.split("\n## ")[0] and "say nothing about the method" in toy
    full = render_markdown(exp, report, "vlbench baseline experiment mini-odmap", {})
    assert "toy" not in full
