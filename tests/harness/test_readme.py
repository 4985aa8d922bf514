"""The README's Python API example runs as written, from the repository root."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_python_api_example_runs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Python API", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    done = subprocess.run([sys.executable, "-c", blocks[0]], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("RSUM ")
    assert lines[2].split()[0] == "False" and int(lines[2].split()[1]) > 0
    assert any(line.startswith("mini-retrieval retrieval") for line in lines)


def test_quick_start_commands_name_the_venv() -> None:
    """`vlbench` is on PATH only inside the activated venv: the quick start says which one."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^\$ (.*)$", section, re.M)
    assert commands and all(c.startswith((".venv/bin/", "make ", "python3 ")) for c in commands)
