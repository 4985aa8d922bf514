"""`vlbench.commands.submissions`: validate and score, one submission or several."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from vlbench.cli import build_parser
from vlbench.commands.submissions import cmd_score, cmd_validate
from vlbench.errors import UsageError
from vlbench.scoring import score_file


def _args(*argv: str):
    return build_parser().parse_args(list(argv))


def test_validate_names_the_benchmark(capsys, submissions, retrieval_data: Path) -> None:
    good, _ = submissions
    assert cmd_validate(_args("validate", str(good), "--data-dir", str(retrieval_data), "--json")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == {"source": str(good), "valid": True, "benchmark": "coco-5k", "error_count": 0, "errors": []}


def test_score_json_is_the_record_score_file_makes(capsys, submissions, retrieval_data: Path) -> None:
    good, _ = submissions
    assert cmd_score(_args("score", str(good), "--data-dir", str(retrieval_data), "--bootstrap", "0", "--json")) == 0
    printed = json.loads(capsys.readouterr().out)
    record = score_file(good, data_dir=retrieval_data, bootstrap=0).result.to_dict()
    assert printed["scores"] == record["scores"] and printed["submission_sha256"] == record["submission_sha256"]


def test_several_submissions_write_one_record_each(capsys, submissions, retrieval_data: Path, tmp_path: Path) -> None:
    good, rand = submissions
    out = tmp_path / "records"
    code = cmd_score(_args("score", str(good), str(rand), "--data-dir", str(retrieval_data), "--bootstrap", "0",
                           "--out-dir", str(out)))
    assert code == 0
    assert sorted(p.name for p in out.iterdir() if not p.name.endswith(".per_item.json")) == [
        f"{tmp_path.name}-good.json", f"{tmp_path.name}-random.json"]
    assert "2 scored, 0 invalid" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "message"), [
    (["--subset"], "--subset needs --references"),
    (["--out", "x.json", "--verbose"], "--verbose is for several submissions"),
])
def test_option_mistakes_are_usage_errors(submissions, argv: list[str], message: str) -> None:
    good, _ = submissions
    with pytest.raises(UsageError, match=message):
        cmd_score(_args("score", str(good), *argv))


def test_out_may_not_overwrite_the_submission(submissions) -> None:
    good, _ = submissions
    with pytest.raises(UsageError, match="would overwrite the submission"):
        cmd_score(_args("score", str(good), "--out", str(good)))


def test_scoring_imports_only_what_the_command_needs(submissions, retrieval_data: Path) -> None:
    """Start-up is most of a `vlbench score` process: no other task type, command or recipe code."""
    good, _ = submissions
    code = ("import sys\nfrom vlbench.cli import main\n"
            f"assert main(['score', {str(good)!r}, '--data-dir', {str(retrieval_data)!r}, '--bootstrap', '0']) == 0\n"
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('vlbench.'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split("\n")[-2].split()
    assert [m for m in loaded if m.endswith(".task")] == ["vlbench.tasks.retrieval.task"]
    assert [m for m in loaded if m.startswith("vlbench.commands.")] == ["vlbench.commands.output",
                                                                       "vlbench.commands.submissions"]
    assert "vlbench.tasks.retrieval.task" in loaded and "vlbench.baselines.cli" in loaded
    assert not [m for m in loaded if m.startswith(("vlbench.baselines.recipe", "vlbench.leaderboard"))]
