"""`vlbench.scoring`: scoring a validated submission into a result record, and writing it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlbench.errors import UsageError
from vlbench.scoring import score_file, score_validated, write_evaluation
from vlbench.submission import ValidationOptions, validate

REPO = Path(__file__).resolve().parents[2]
RANDOM = REPO / "submissions" / "mini-retrieval" / "random.json"


def test_score_file_is_validate_then_score_validated() -> None:
    whole = score_file(RANDOM, ValidationOptions(), bootstrap=0).result
    parts = score_validated(validate(RANDOM), bootstrap=0).result
    assert whole.scores == parts.scores and whole.n == parts.n
    assert whole.submission_sha256 == parts.submission_sha256
    assert whole.ci95 == {} and whole.bootstrap == {}
    assert "input_format" not in whole.extra


def test_the_bootstrap_is_seeded_and_recorded() -> None:
    a = score_file(RANDOM, bootstrap=50, seed=3).result
    b = score_file(RANDOM, bootstrap=50, seed=3).result
    c = score_file(RANDOM, bootstrap=50, seed=4).result
    assert a.ci95 == b.ci95 and a.ci95 != c.ci95
    assert a.bootstrap["resamples"] == 50 and a.bootstrap["seed"] == 3
    assert set(a.ci95) <= set(a.scores)
    for key, (low, high) in a.ci95.items():
        assert low <= a.scores[key] <= high


def test_write_evaluation_writes_the_record_and_its_items_together(tmp_path: Path) -> None:
    evaluation = score_file(RANDOM, bootstrap=0, out=tmp_path / "result.json")
    built = evaluation.result.to_dict()
    assert built["per_item"] == "result.per_item.json"  # the record names its items when it is built
    out = write_evaluation(evaluation, tmp_path / "result.json")
    record = json.loads(out.read_text())
    assert record == json.loads(json.dumps(built)) == json.loads(json.dumps(evaluation.result.to_dict()))
    assert (tmp_path / record["per_item"]).is_file()
    alone = write_evaluation(score_file(RANDOM, bootstrap=0), tmp_path / "alone.json")  # scored for no file
    assert json.loads(alone.read_text())["per_item"] is None
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["alone.json", "result.json", record["per_item"]])
    with pytest.raises(ValueError, match="names the per-item file result.per_item.json, not other.per_item.json"):
        write_evaluation(evaluation, tmp_path / "other.json")  # its per-item name would not match
    assert not (tmp_path / "other.json").exists()


def test_the_record_is_built_once_and_strict_issues_run_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The task's `strict_issues` run once per submission, at validation: refused under --strict,
    the record's warnings otherwise (the record is not changed after `score_validated`)."""
    from vlbench.errors import InvalidSubmission, Issue
    from vlbench.registry import registry

    task = registry().task_of(registry().benchmark("mini-retrieval"))
    calls: list[int] = []

    def tolerated(parsed, ground_truth, benchmark):
        calls.append(1)
        return [Issue("partial", "/predictions", "12 queries are left out; scored as misses")]

    monkeypatch.setattr(task, "strict_issues", tolerated)
    result = score_file(RANDOM, bootstrap=0).result
    assert calls == [1]
    assert result.extra["warnings"][-1] == "12 queries are left out; scored as misses"
    with pytest.raises(InvalidSubmission, match="1 problem"):
        score_file(RANDOM, bootstrap=0, strict=True)
    assert calls == [1, 1]


def test_a_result_cannot_replace_a_folder(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(UsageError):
        write_evaluation(score_file(RANDOM, bootstrap=0), tmp_path / "taken")
    assert [p.name for p in tmp_path.iterdir()] == ["taken"]
