"""`pip install .` adds one importable name, `vlbench`, and the installed copy scores.

The package is built and installed by pip into a temporary folder (`--target`), offline
(`--no-index --no-build-isolation --no-deps`: the build backend and the dependencies are the
test environment's own), from a copy of the sources so that no build output lands in the
checkout. The installed copy is then imported by a Python started without `site` (no editable
install, no checkout on the path) whose only extra paths are the target and the environment's
site-packages for the dependencies.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "setup.py", "README.md", "harness", "tasks", "baselines", "compat")

pytestmark = pytest.mark.install


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("install")
    src = work / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=ignore)
        else:
            shutil.copy2(REPO / name, src / name)
    target = work / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index",
         "--no-deps", "--no-build-isolation", "--no-cache-dir", "--target", str(target), str(src)],
        check=True, cwd=work, timeout=300,
    )
    return target


def test_one_top_level_name(installed: Path) -> None:
    names = {p.name for p in installed.iterdir()} - {"bin"}
    assert {n for n in names if not n.endswith(".dist-info")} == {"vlbench"}, names
    assert {"tasks", "baselines", "compat", "schemas"} <= {p.name for p in (installed / "vlbench").iterdir()}
    shipped = installed / "vlbench" / "tasks" / "mini" / "data"
    assert any(shipped.iterdir()), "the mini ground truth must ship in the package"


def test_installed_copy_imports_alone_and_scores(installed: Path, tmp_path: Path) -> None:
    deps = sysconfig.get_paths()["purelib"]
    submission = REPO / "submissions" / "mini-retrieval" / "random.json"
    code = f"""
import importlib.util, json, sys
sys.path[:0] = [{str(installed)!r}, {deps!r}]
import vlbench
assert vlbench.__file__.startswith({str(installed)!r}), vlbench.__file__
record = vlbench.score({str(submission)!r}, bootstrap=20)
hidden = [n for n in ("harness", "tasks", "baselines", "compat") if importlib.util.find_spec(n) is not None]
# the drop-ins, from the installed copy too
from vlbench.compat.mdetr import FlickrEvaluator
from vlbench.compat.pycocoevalcap.bleu.bleu import Bleu
from vlbench.compat.pycocoevalcap.eval import COCOEvalCap
bleu, _ = Bleu(4).compute_score({{1: ["a dog runs"], 2: ["a cat sits"]}}, {{1: ["a dog runs"], 2: ["a cat"]}}, verbose=0)
print(json.dumps({{"rsum": record.scores["RSUM"], "visible": hidden,
                  "task_file": sys.modules["vlbench.tasks"].__file__,
                  "compat_file": sys.modules["vlbench.compat.pycocoevalcap.eval"].__file__,
                  "bleu1": bleu[0]}}))
"""
    # -S: no site (no .pth, so no editable install); -I would also drop the cwd, done by cwd=
    done = subprocess.run([sys.executable, "-S", "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["visible"] == []
    assert out["task_file"].startswith(str(installed))
    assert out["compat_file"].startswith(str(installed))
    assert 0.5 < out["bleu1"] < 1
    # the same numbers as the checkout's own code
    import vlbench

    assert out["rsum"] == vlbench.score(submission, bootstrap=0).scores["RSUM"]
