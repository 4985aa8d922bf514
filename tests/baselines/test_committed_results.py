"""The committed mini-odmap report states what `vlbench score` gives for the committed submissions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlbench.scoring import score_file

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "baselines" / "results" / "mini-odmap" / "results.json"


@pytest.mark.skipif(not RESULTS.is_file(), reason="no committed mini-odmap results")
def test_committed_numbers_equal_vlbench_score_of_committed_submissions() -> None:
    doc = json.loads(RESULTS.read_text())
    assert not doc["quick"]
    assert len(doc["runs"]) == 12
    for run in doc["runs"]:
        for benchmark, facts in run["files"].items():
            path = REPO / "submissions" / benchmark / f"mini-odmap-{run['arm']}-seed{run['seed']}.json"
            result = score_file(path, bootstrap=0).result
            assert result.submission_sha256 == facts["submission_sha256"], path
            for key, value in run["scores"].items():
                if key in result.scores:
                    assert result.scores[key] == value, (path, key)
