"""D''s removal rules (`removals.py`): the co-occurrence-keeping rule of the D'-null arm, the
dose-response's `breaking:F`, and P(dependent | cue) of a set of training pairs."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlbench.baselines.synthetic.build import plan
from vlbench.baselines.synthetic.removals import (
    allowed_removals,
    keeps_cooccurrence,
    p_dependent_given_cue,
    rule_parts,
)
from vlbench.baselines.synthetic.sources import SourceImage
from vlbench.errors import UsageError
from vlbench.tasks.decorrelated.removal import candidate_removals

PAIRS = (("star", "ring"), ("heart", "arrow"))


def box(x: int, w: int = 10) -> tuple[float, float, float, float]:
    return (float(x), 0.0, float(w), 10.0)


@pytest.mark.parametrize(("removed", "keeps"), [
    (("square",), True), (("square", "moon"), True), (("ring", "star"), True),
    (("arrow", "heart", "square"), True), (("ring", "star", "heart", "arrow"), True),
    (("ring",), False), (("star",), False), (("ring", "square"), False), (("star", "heart", "arrow"), False),
])
def test_a_pair_goes_whole_or_not_at_all(removed: tuple[str, ...], keeps: bool) -> None:
    assert keeps_cooccurrence(removed, PAIRS) is keeps


def test_keep_cooccurrence_offers_free_classes_and_whole_pairs() -> None:
    objects = [("star", box(0)), ("ring", box(20)), ("square", box(40)), ("moon", box(60)), ("heart", box(80))]
    every = allowed_removals(objects, 100, 10, "all", PAIRS)
    assert every == candidate_removals(objects, 100, 10)
    assert {r.removed_classes for r in every} == {("star",), ("ring",), ("square",), ("moon",), ("heart",)}
    kept = allowed_removals(objects, 100, 10, "keep-cooccurrence", PAIRS)
    # the heart has no arrow here: removing it alone is not "a cue with its dependent", so it stays
    assert [r.removed_classes for r in kept] == [("moon",), ("square",), ("ring", "star")]
    for r in kept:
        assert keeps_cooccurrence(r.removed_classes, PAIRS)
        assert set(r.present_classes) | set(r.removed_classes) == {c for c, _ in objects}


def test_a_pair_that_cannot_go_whole_is_not_offered() -> None:
    # star and ring cover 70% of the image together (tau3): only the free class may go
    objects = [("star", box(0, 40)), ("ring", box(40, 30)), ("square", box(80))]
    kept = allowed_removals(objects, 100, 10, "keep-cooccurrence", PAIRS)
    assert [r.removed_classes for r in kept] == [("square",)]
    # a pair and nothing else: removing both would leave nothing, removing one breaks the pair
    assert allowed_removals([("star", box(0)), ("ring", box(20))], 100, 10, "keep-cooccurrence", PAIRS) == []
    with pytest.raises(UsageError, match="synthetic removals"):
        allowed_removals(objects, 100, 10, "some", PAIRS)


def test_p_dependent_given_cue_counts_cue_occurrences() -> None:
    sets = [{"star", "ring"}, {"star"}, {"star", "square"}, {"heart", "arrow", "star", "ring"}, {"ring", "moon"}]
    p = p_dependent_given_cue(sets, PAIRS)
    # star in 4 images, 2 with its ring; heart in 1, with its arrow: 3 of 5
    assert p["all"] == {"cue_occurrences": 5, "with_dependent": 3, "p": 0.6}
    # images with two or more classes: {star} drops out
    assert p["two_or_more_classes"] == {"cue_occurrences": 4, "with_dependent": 3, "p": 0.75}
    assert p_dependent_given_cue([{"moon"}], PAIRS)["all"]["p"] is None


def test_the_null_plan_breaks_no_pair_and_the_paper_plan_is_unchanged(data_dir: Path) -> None:
    """On the v3 world's train images: D'-null's pairs keep every (cue, dependent) pair whole, and
    P(dependent | cue) of D + D'-null stays near D's, while D' lowers it; `all` is the plan it was."""
    from vlbench.baselines.synthetic.sources import _mini_sources
    from vlbench.tasks.mini.build import world_config

    pairs = world_config("v3").pairs()
    sources: list[SourceImage] = _mini_sources(data_dir, "v3")[:400]
    original = [{c for c, _ in s.objects} for s in sources for _ in s.captions]
    paper = plan(sources, ratio=0.4, captions="noun-phrase", seed=0)
    assert paper == plan(sources, ratio=0.4, captions="noun-phrase", seed=0, removals="all", pairs=pairs)
    null = plan(sources, ratio=0.4, captions="noun-phrase", seed=0, removals="keep-cooccurrence", pairs=pairs)
    assert len(null) == len(paper) == 800
    assert all(keeps_cooccurrence(p.removal.removed_classes, pairs) for p in null)
    assert sum(not keeps_cooccurrence(p.removal.removed_classes, pairs) for p in paper) > 300
    base = p_dependent_given_cue(original, pairs)["two_or_more_classes"]["p"]
    with_null = p_dependent_given_cue(original + [set(p.removal.present_classes) for p in null], pairs)
    with_paper = p_dependent_given_cue(original + [set(p.removal.present_classes) for p in paper], pairs)
    assert abs(with_null["two_or_more_classes"]["p"] - base) < 0.02
    assert with_paper["two_or_more_classes"]["p"] < base - 0.05
    with pytest.raises(UsageError, match="co-occurring class pairs"):
        plan(sources, ratio=0.4, captions="noun-phrase", seed=0, removals="keep-cooccurrence")


@pytest.mark.parametrize("rule", ["breaking", "breaking:0", "breaking:1", "breaking:-0.1", "breaking:x", "keep:0.1", "none"])
def test_a_rule_that_is_none_of_the_three_is_refused(rule: str) -> None:
    with pytest.raises(UsageError, match="synthetic removals"):
        rule_parts(rule)


def test_breaking_is_d_null_with_a_share_of_counterexamples() -> None:
    assert rule_parts("breaking:0.3") == [("keep-cooccurrence", 0.7), ("breaking", 0.3)]
    assert rule_parts("keep-cooccurrence") == [("keep-cooccurrence", 1.0)] and rule_parts("all") == [("all", 1.0)]
    objects = [("star", box(0)), ("ring", box(20)), ("square", box(40)), ("moon", box(60))]
    breaking = allowed_removals(objects, 100, 10, "breaking", PAIRS)
    assert breaking and all(not keeps_cooccurrence(r.removed_classes, PAIRS) for r in breaking)
    kept = allowed_removals(objects, 100, 10, "keep-cooccurrence", PAIRS)
    every = candidate_removals(objects, 100, 10)
    assert {r.removed_classes for r in breaking} == {r.removed_classes for r in every} - {r.removed_classes for r in kept}


@pytest.mark.parametrize("share", [0.1, 0.3])
def test_a_dose_plan_is_d_null_s_first_pairs_then_counterexamples(data_dir: Path, share: float) -> None:
    """`breaking:F` on the v3 world's train images: exactly round(F |D'|) pairs break a pair, the
    others are D'-null's first pairs (same files and captions), and every file name is distinct."""
    from vlbench.baselines.synthetic.sources import _mini_sources
    from vlbench.tasks.mini.build import world_config

    pairs = world_config("v3").pairs()
    sources: list[SourceImage] = _mini_sources(data_dir, "v3")[:400]
    null = plan(sources, ratio=0.4, captions="noun-phrase", seed=0, removals="keep-cooccurrence", pairs=pairs)
    dose = plan(sources, ratio=0.4, captions="noun-phrase", seed=0, removals=f"breaking:{share}", pairs=pairs)
    n_breaking = round(share * 800)
    assert len(dose) == 800 and len({p.file_name for p in dose}) == 800
    assert dose[: 800 - n_breaking] == null[: 800 - n_breaking]
    assert all(not keeps_cooccurrence(p.removal.removed_classes, pairs) for p in dose[800 - n_breaking:])
    assert dose == plan(sources, ratio=0.4, captions="noun-phrase", seed=0, removals=f"breaking:{share}", pairs=pairs)
    with pytest.raises(UsageError, match="co-occurring class pairs"):
        plan(sources, ratio=0.4, captions="noun-phrase", seed=0, removals=f"breaking:{share}")
