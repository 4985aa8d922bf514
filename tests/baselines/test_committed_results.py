"""The committed mini-odmap reports state what `vlbench score` gives for the committed submissions.

v3 (`baselines/results/mini-odmap/`, the full run, five arms with issue 30's D'-null, and its two
exploratory dose arms): every
submission is scored again, and the top-caption measures (named@k, partner@1, present@1, the
absent-dependent measures) and each D' run's P(dependent | cue) are computed again from the files. v2 (`baselines/results/mini-odmap-v2/`): its mini-decorrelated results are retired (v2.0's
ground truth is no longer shipped), so its numbers are checked against the retired score records,
and its mini-retrieval submissions, still current, are scored again.
"""

from __future__ import annotations

import json
from pathlib import Path

from vlbench.leaderboard.cache import CachedScore
from vlbench.scoring import score_file

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "baselines" / "results" / "mini-odmap" / "results.json"
RESULTS_V2 = REPO / "baselines" / "results" / "mini-odmap-v2" / "results.json"
RETIRED_V2 = REPO / "submissions" / "retired" / "mini-decorrelated@2.0"


def _name(run: dict) -> str:
    return f"mini-odmap-{run['arm']}-seed{run['seed']}.json"


def test_committed_numbers_equal_vlbench_score_of_committed_submissions() -> None:
    from vlbench.baselines.analysis import MENTIONS, named_from_means, removed_mentions
    from vlbench.baselines.experiment import get_experiment

    doc = json.loads(RESULTS.read_text())
    # the five pre-registered arms and issue 30's exploratory dose arms (run with --arms)
    exp = get_experiment("mini-odmap", arms=["biased", "control", "synthetic", "unbiased", "synthetic-null",
                                             "dose-10", "dose-30"])
    assert not doc["quick"]
    assert [a["name"] for a in doc["experiment"]["arms"]] == [a.name for a in exp.arms]
    assert len(doc["runs"]) == len(exp.arms) * len(exp.seeds)
    assert {(r["arm"], r["seed"]) for r in doc["runs"]} == {(a.name, s) for a in exp.arms for s in exp.seeds}
    cooccurrence = {(r["arm"], r["seed"]): r for r in doc["cooccurrence"]}
    d_arms = ("synthetic", "synthetic-null", "dose-10", "dose-30")
    assert set(cooccurrence) == {(a, s) for a in d_arms for s in exp.seeds}
    for run in doc["runs"]:
        for benchmark, facts in run["files"].items():
            path = REPO / "submissions" / benchmark / _name(run)
            evaluation = score_file(path, bootstrap=0)
            result = evaluation.result
            assert result.submission_sha256 == facts["submission_sha256"], path
            for key, value in run["scores"].items():
                if key in result.scores:
                    assert result.scores[key] == value, (path, key)
            if benchmark != "mini-decorrelated":
                continue
            items = removed_mentions(evaluation)
            point = named_from_means({k: t.column_means() for k, t in items.items()})
            for key in MENTIONS:
                assert float(point[key][0]) == run["scores"][key], (path, key)
            train = json.loads(path.read_text())["meta"]["extra"]["recipe"].get("train") or {}
            if (run["arm"], run["seed"]) in cooccurrence:
                facts_of_run = cooccurrence[(run["arm"], run["seed"])]
                assert train["synthetic"]["p_dependent_given_cue"] == facts_of_run["p_dependent_given_cue"]
                assert train["synthetic"]["breaking_pairs"] == facts_of_run["breaking_pairs"]
                assert (facts_of_run["breaking_pairs"] == 0) is (run["arm"] == "synthetic-null")
                share = {"dose-10": 0.1, "dose-30": 0.3}.get(run["arm"])
                if share is not None:  # exactly that share of counterexamples
                    assert facts_of_run["breaking_pairs"] == round(share * facts_of_run["synthetic_pairs"])


def test_v2_numbers_equal_the_retired_records_and_current_scores() -> None:
    doc = json.loads(RESULTS_V2.read_text())
    assert not doc["quick"]
    assert len(doc["runs"]) == 12
    checked = 0
    for run in doc["runs"]:
        for benchmark, facts in run["files"].items():
            if benchmark == "mini-decorrelated":
                result = CachedScore.from_json((RETIRED_V2 / _name(run)).read_bytes()).result
                assert result is not None and result.benchmark_version == facts["benchmark_version"] == "2.0"
            else:
                result = score_file(REPO / "submissions" / benchmark / _name(run), bootstrap=0).result
            assert result.submission_sha256 == facts["submission_sha256"], (benchmark, run["arm"], run["seed"])
            for key, value in run["scores"].items():
                if key in result.scores:
                    assert result.scores[key] == value, (benchmark, key)
                    checked += 1
    assert checked == 12 * 12  # six ODmAP and six recall columns per run
