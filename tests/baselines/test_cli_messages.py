"""What a new user of `vlbench baseline` meets: the install command without torch, a list that fits
100 columns, a --quick report that says it is a toy run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from vlbench.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_run_without_torch_names_the_install_command(tmp_path: Path) -> None:
    # a fresh interpreter in which torch cannot be imported, as on the core install
    code = ("import sys; sys.modules['torch'] = None; from vlbench.cli import main; "
            f"sys.exit(main(['baseline', 'run', 'clip-zeroshot', '--benchmark', 'mini-retrieval', "
            f"'--out', {str(tmp_path / 'x.json')!r}, '--device', 'cpu']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "needs torch, which is not installed" in done.stderr and "pip install 'vlbench[baselines]'" in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "x.json").exists()


def test_list_fits_100_columns(capsys) -> None:
    assert main(["baseline", "list"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "clip-zeroshot" in out and "flickr30k-1k-decorrelated" in out  # ids whole, not split at hyphens


def test_quick_report_says_it_is_a_toy_run() -> None:
    from vlbench.baselines.analysis import DECORRELATED, NAMED, RETRIEVAL, render_markdown
    from vlbench.baselines.experiment import BENCHMARKS

    exp = SimpleNamespace(name="mini-odmap", arms=[], seeds=[0, 1], preregistered=True)
    floor = {c: 0.1 for c in [*DECORRELATED, *RETRIEVAL, *NAMED]}
    report = {"pooled": [], "runs": [], "differences": [], "preregistered": {"gates": []},
              "chance": {b: {"scores": floor} for b in BENCHMARKS}}
    toy = render_markdown(exp, report, "vlbench baseline experiment mini-odmap --quick", {}, quick=True)
    assert toy.startswith("# mini-odmap: results of a toy run (--quick)")
    assert "A toy run (`--quick`)" in toy.split("\n## ")[0] and "say nothing about the method" in toy
    full = render_markdown(exp, report, "vlbench baseline experiment mini-odmap", {})
    assert "toy" not in full
