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
    evaluation = score_file(RANDOM, bootstrap=0)
    out = write_evaluation(evaluation, tmp_path / "result.json")
    record = json.loads(out.read_text())
    assert record["per_item"] and (tmp_path / record["per_item"]).is_file()
    assert record["scores"] == evaluation.result.scores
    alone = write_evaluation(evaluation, tmp_path / "alone.json", with_items=False)
    assert json.loads(alone.read_text())["per_item"] is None
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["alone.json", "result.json", record["per_item"]])


def test_a_result_cannot_replace_a_folder(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(UsageError):
        write_evaluation(score_file(RANDOM, bootstrap=0), tmp_path / "taken")
    assert [p.name for p in tmp_path.iterdir()] == ["taken"]
