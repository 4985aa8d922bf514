"""The scoring core and `vlbench baseline list` never import torch: it is an optional extra."""

from __future__ import annotations

import subprocess
import sys


def test_core_and_baseline_list_do_not_import_torch() -> None:
    code = (
        "import sys, io, contextlib\n"
        "import vlbench, vlbench.baselines\n"
        "from vlbench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    assert main(['baseline', 'list']) == 0\n"
        "assert 'clip-finetune-synthetic' in out.getvalue()\n"
        "heavy = sorted(m for m in ('torch', 'open_clip', 'diffusers', 'transformers') if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
