"""What a new user of `vlbench baseline` meets: the install command without torch, a list that fits
100 columns (the --quick report's toy-run warning: `test_report.py`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
