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


def test_python_api_example_says_where_it_runs(tmp_path: Path) -> None:
    """From the folder that holds a clone named `vlbench`, an editable install is hidden by that
    folder (Python puts the current folder first on its import path): the README says to run the
    example from the repository root, and that `-P` runs it from such a folder."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = " ".join(readme.split("## Python API", 1)[1].split("\n## ", 1)[0].split())
    assert "Run the example from the repository root" in section and "-P" in section
    (tmp_path / "vlbench").mkdir()  # the clone, as the folder that holds it sees it
    probe = "import vlbench; print(callable(getattr(vlbench, 'score', None)))"
    plain = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    if sys.version_info >= (3, 11):
        safe = subprocess.run([sys.executable, "-P", "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                              timeout=120)
        assert safe.stdout.strip() == "True", safe.stderr
    # what the README explains: hidden with an editable install, found with a regular one
    editable = Path(__import__("vlbench").__file__).resolve().parent == REPO / "harness"
    assert plain.stdout.strip() == ("False" if editable else "True"), plain.stderr


def test_quick_start_commands_name_the_venv() -> None:
    """`vlbench` is on PATH only inside the activated venv: the quick start says which one."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^\$ (.*)$", section, re.M)
    assert commands and all(c.startswith((".venv/bin/", "make ", "python3 ")) for c in commands)


def test_evalai_steps_run_as_written(retrieval_data: Path, tmp_path: Path) -> None:
    """Every `python -m vlbench.evalai ...` command of the README's EvalAI steps runs as written,
    in a challenge folder (with annotations/), on a prepared data folder."""
    import json
    import os

    from vlbench.ground_truth import locate_ground_truth
    from vlbench.registry import registry

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("**EvalAI.**", 1)[1].split("\n\n`import grounding`", 1)[0]
    commands = re.findall(r"`(python -m vlbench\.evalai [^`]+)`", re.sub(r"\s+", " ", section))
    assert {c.split()[3] for c in commands} >= {"pack", "schema", "evaluate"}
    assert "`from vlbench.evalai import evaluate`" in section
    b = registry().benchmark("coco-5k")
    task = registry().task_of(b)
    gt = task.load_ground_truth(b, locate_ground_truth(b, retrieval_data))
    challenge = tmp_path / "challenge"
    (challenge / "annotations").mkdir(parents=True)
    (challenge / "SUBMISSION.json").write_text(json.dumps(
        {"vlbench": 1, "benchmark": "coco-5k", "task": "retrieval", "meta": {"method": "r"},
         "predictions": task.random_predictions(gt, b, seed=1)}))
    env = {**os.environ, "VLBENCH_DATA": str(retrieval_data)}
    for command in commands:
        # the generic form names the step-2 file ANNOTATION
        argv = [sys.executable, *command.replace("ANNOTATION SUBMISSION", "annotations/coco-5k.json SUBMISSION.json")
                .split()[1:]]
        done = subprocess.run(argv, cwd=challenge, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (command, done.stderr)
    assert (challenge / "annotations" / "coco-5k.json").is_file()


def test_switch_in_one_line_blocks_run_as_written() -> None:
    """Every code block of "Switch in one line" runs from the repository root; the plain script
    prints pycocoevalcap's metrics (SPICE left out where its CoreNLP jars are missing, with a
    warning, never a number)."""
    import importlib.util

    import pytest

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Switch in one line", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 4
    for block in blocks:
        before = [line for line in block.splitlines() if line.startswith("# before: ")]
        assert before, block
        # the "before" lines are the import being replaced: the same names from the other package
        for line in before:
            assert "pycocoevalcap" in line or "flickr_eval" in line
    if importlib.util.find_spec("pycocoevalcap") is None:
        pytest.skip("the plain script computes METEOR from pycocoevalcap's data files (captions extra)")
    for block in blocks:
        done = subprocess.run([sys.executable, "-c", block], cwd=REPO, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    plain = subprocess.run([sys.executable, "-c", blocks[2]], cwd=REPO, capture_output=True, text=True, timeout=300)
    printed = dict(line.split(": ") for line in plain.stdout.splitlines()[-8:] if ": " in line)
    assert {"Bleu_1", "Bleu_4", "METEOR", "ROUGE_L", "CIDEr"} <= set(printed)
    if "SPICE" not in printed:
        assert "SpiceLeftOutWarning" in plain.stderr


def test_own_model_example_runs_from_images_to_a_scored_file(mini_world_from_the_cli) -> None:
    """The README's own-model path on mini-decorrelated: `vlbench data mini --benchmark
    mini-decorrelated` (run as shown, by the fixture), the example file, then `vlbench score`."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Your own model, from images to a scored file", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^\$ (\S+(?: \S+)*?)\s{2,}#", section, re.M)
    assert commands == [".venv/bin/vlbench data mini --benchmark mini-decorrelated", ".venv/bin/python my_model.py",
                        ".venv/bin/vlbench score my-submission.json --out my-result.json"]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    world = mini_world_from_the_cli("v3")
    folder = world.parent  # where the command wrote vlbench-mini-v3/
    assert world.name == "vlbench-mini-v3"
    (folder / "my_model.py").write_text(blocks[0])
    done = subprocess.run([sys.executable, "my_model.py"], cwd=folder, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    metric, value, *_ = done.stdout.split()
    assert metric == "ODmAP@1" and f"`ODmAP@1 {value} " in section
    scored = subprocess.run([sys.executable, "-m", "vlbench", *commands[2].split()[1:]], cwd=folder,
                            capture_output=True, text=True, timeout=600)
    assert scored.returncode == 0, scored.stderr
    import json

    record = json.loads((folder / "my-result.json").read_text())
    assert record["benchmark"] == "mini-decorrelated" and round(record["scores"]["ODmAP@1"], 3) == float(value)
    for group in ("partner", "control"):
        shown = f"{100 * record['scores'][f'ODmAP@1/{group}']:.1f}%"
        assert shown in section, group
