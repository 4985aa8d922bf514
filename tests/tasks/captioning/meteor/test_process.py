"""`MeteorProcess` (`meteor/process.py`): METEOR as vlbench computes it by default (in Python,
`meteor/python_meteor.py`) and the Python aggregation against pycocoevalcap's Meteor (1e-6), the
entry point `segment_statistics`, the 'unavailable' path of the jar backend, and the jar path's
watchdog. (Segment by segment equality of the Python statistics with the jar:
`test_python_meteor.py`.)"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from conftest import SETS, refs_of
from meteor_index import real_index_cache

from vlbench.tasks.captioning.meteor import (
    METEOR_COLUMNS,
    METEOR_STATS,
    MeteorProcess,
    MeteorUnavailable,
    meteor_aggregate,
    meteor_from_stats,
    score_line,
    segment_statistics,
)
from vlbench.tasks.captioning.meteor.process import _Jvm
from vlbench.tasks.captioning.scoring import score_captions


@pytest.fixture(scope="module")
def both(pyco_tokenized):
    """One pycocoevalcap Meteor JVM and one of ours for all sets."""
    from pycocoevalcap.meteor.meteor import Meteor

    ref = Meteor()
    theirs = {name: ref.compute_score(gts, res) for name, (gts, res) in pyco_tokenized.items()}
    del ref
    with MeteorProcess(cache=real_index_cache()) as proc:
        ours = {
            name: score_captions(cands, refs_of(refs), spice=False, meteor_process=proc)
            for name, (cands, refs) in SETS.items()
        }
        assert proc.index is not None and proc.warning is None  # the filtered table was used
    return theirs, ours


def _meteor_stats(scored):
    t = scored.items["images"]
    return t.values[:, [t.columns.index(c) for c in METEOR_COLUMNS]]


@pytest.mark.parametrize("name", sorted(SETS))
def test_meteor_matches_pycocoevalcap(name, both):
    theirs, ours = both
    score, per_image = theirs[name]
    scored = ours[name]
    t = scored.items["images"]
    np.testing.assert_allclose(t.values[:, t.columns.index("METEOR@image")], per_image, rtol=0, atol=1e-6)
    assert scored.scores["METEOR"] == pytest.approx(score, abs=1e-6)
    # the stored columns (chunks of perfect segments already left out) sum to the jar's aggregate
    assert float(meteor_from_stats(_meteor_stats(scored).sum(axis=0))) == pytest.approx(score, abs=1e-6)


def test_corpus_meteor_is_not_the_mean(both):
    theirs, ours = both
    score, per_image = theirs["seed004"]
    assert score == pytest.approx(0.4645428314, abs=1e-9)
    np.testing.assert_allclose(per_image, [0.2859817575, 1.0], atol=1e-9)
    assert abs(np.mean(per_image) - score) > 0.1


def test_score_line_sanitises_the_hypothesis_only():
    # as pycocoevalcap: '|||' removed, then str.replace("  ", " ") on non-overlapping pairs
    assert score_line("a ||| b   c", ["x ||| y", "z"]) == "SCORE ||| x ||| y ||| z ||| a b  c"


def test_meteor_bootstrap_columns(both):
    from vlbench.tasks.captioning import TASK

    s = both[1]["edge"]
    t = s.items["images"]
    means = {"images": {c: np.array([t.values[:, j].mean()]) for j, c in enumerate(t.columns)}}
    assert float(TASK.metrics_from_means(None, means)["METEOR"][0]) == pytest.approx(s.scores["METEOR"], abs=1e-12)


def test_missing_java_reports_meteor_unavailable_on_the_jar_backend(monkeypatch, tmp_path):
    monkeypatch.setenv("VLBENCH_METEOR", "jar")
    monkeypatch.setenv("VLBENCH_JAVA", str(tmp_path / "no-java"))
    cands, refs = SETS["seed004"]
    s = score_captions(cands, refs_of(refs))
    assert s.scores["METEOR"] is None
    assert "java" in s.extra["unavailable"]["METEOR"]
    assert s.scores["CIDEr-D"] == pytest.approx(1.3966887781, abs=1e-10)
    assert "meteor_0" not in s.items["images"].columns


def test_segment_statistics_is_the_entry_point(monkeypatch):
    """`meteor.segment_statistics` gives the jar's statistics (values established with the jar and
    pycocoevalcap on the worked example: corpus 0.4645428314, per image 0.2859817575 and 1.0),
    the same as a `MeteorProcess`'s; no Java needed."""
    monkeypatch.setenv("VLBENCH_METEOR_CACHE", str(real_index_cache()))
    cands, refs = SETS["seed004"]
    stats = segment_statistics(cands, refs)
    assert stats.shape == (2, METEOR_STATS)
    np.testing.assert_allclose(meteor_from_stats(stats), [0.2859817575, 1.0], atol=1e-9)
    assert float(meteor_from_stats(meteor_aggregate(stats))) == pytest.approx(0.4645428314, abs=1e-9)
    with MeteorProcess(backend="python") as proc:
        np.testing.assert_array_equal(proc.stats(cands, refs), stats)
    with pytest.raises(ValueError, match="2 hypotheses but 1 reference lists"):
        segment_statistics(cands, refs[:1])


def test_a_silent_jvm_is_killed_and_reported(monkeypatch, tmp_path) -> None:
    """A Meteor JVM that stays alive but never answers is stopped by the watchdog, with a sentence."""
    monkeypatch.setenv("VLBENCH_METEOR_TIMEOUT", "1")
    silent = _Jvm([sys.executable, "-c", "import time; time.sleep(120)"], str(tmp_path))
    out = np.zeros((2, METEOR_STATS))
    errors: list[MeteorUnavailable] = []
    silent.run(["SCORE ||| a ||| b", "SCORE ||| c ||| d"], out, errors)
    silent.close()
    assert len(errors) == 1
    assert "no answer within 1 s" in str(errors[0]) and "VLBENCH_METEOR_TIMEOUT" in str(errors[0])
    assert silent.proc.poll() is not None  # the process is gone, not left running
