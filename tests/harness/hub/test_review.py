"""A pull request's verdict from its files, and what "the same team" means."""

from __future__ import annotations

from vlbench.hub.layout import ENTRY, OUTSIDE, REFUSED, Place
from vlbench.hub.markers import CLOSE, DRAFT, READY
from vlbench.hub.markers import REFUSED as REFUSED_VERDICT
from vlbench.hub.review import FileReview, Review, same_team
from vlbench.results import ResultRecord


def ok_file(path: str) -> FileReview:
    result = ResultRecord(benchmark="mini-retrieval", task="retrieval", benchmark_version="1.0", harness_version="x",
                          submission_sha256="", ground_truth_sha256="", meta={"method": "m"}, scores={"RSUM": 1.0},
                          main_score="RSUM", ci95={}, n={}, bootstrap={}, elapsed_s=0.0, created_utc="", extra={})
    return FileReview(path, "added", Place(ENTRY, "mini-retrieval"), result=result)


def review(*files: FileReview, draft: bool = False, problems: tuple[str, ...] = ()) -> Review:
    return Review(1, "alice", "h" * 40, "b" * 40, "m" * 40, draft, list(files), list(problems))


def test_verdicts() -> None:
    good = ok_file("submissions/mini-retrieval/a.json")
    assert review(good).verdict == READY and review(good, draft=True).verdict == DRAFT
    assert review(good).entries == ("submissions/mini-retrieval/a.json",)
    assert review().verdict == REFUSED_VERDICT  # no file
    assert review(good, problems=("conflicts",)).verdict == REFUSED_VERDICT
    bad = FileReview("submissions/mini-retrieval/b.json", "added", Place(ENTRY, "mini-retrieval"))
    bad.refuse("schema.type", "wrong")
    assert review(good, bad).verdict == REFUSED_VERDICT and review(good, bad).entries == (good.path,)
    elsewhere = FileReview("submissions/x.py", "added", Place(REFUSED, reason="r"))
    elsewhere.refuse("not_a_submission_path", "r")
    outside = FileReview("README.md", "modified", Place(OUTSIDE, reason="o"))
    outside.refuse("outside_submissions", "o")
    assert review(good, elsewhere).verdict == REFUSED_VERDICT
    assert review(good, bad, outside, draft=True).verdict == CLOSE  # never mergeable, whatever else


def test_same_team() -> None:
    assert same_team("Team A", " team   a ") and same_team(None, None) and same_team(None, "  ")
    assert not same_team("Team A", "Team B") and not same_team("Team A", None)
