"""The tau rules at and around each threshold, on one-row boxes where ratios are exact."""

from __future__ import annotations

import numpy as np
import pytest

from vlbench.tasks.decorrelated.removal import (
    box_mask,
    candidate_removals,
    plan_joint_removal,
    plan_removal,
)


def row(x0: int, width: int, y: int = 0) -> tuple[float, float, float, float]:
    """A box one pixel high: its area is its width, so overlaps are exact integers."""
    return (float(x0), float(y), float(width), 1.0)


@pytest.mark.parametrize(("overlap", "accepted"), [(39, True), (40, False), (41, False)])
def test_tau1_single_class_survival(overlap: int, accepted: bool) -> None:
    # B covers 100 pixels; removing A erases `overlap` of them: ratio overlap / 100 against tau1 = 0.4.
    objects = [("a", row(0, overlap)), ("b", row(0, 100))]
    r = plan_removal(objects, 200, 100, "a")
    assert (r is not None) is accepted
    if r is not None:
        assert r.removed_classes == ("a",) and r.present_classes == ("b",)


@pytest.mark.parametrize(("overlap", "joins"), [(79, False), (80, False), (81, True)])
def test_tau2_covered_class_is_removed_too(overlap: int, joins: bool) -> None:
    # A = columns 0..99; B = 100 columns overlapping A by `overlap`; C elsewhere stays.
    objects = [("a", row(0, 100)), ("b", row(100 - overlap, 100)), ("c", row(0, 10, y=50))]
    r = plan_removal(objects, 300, 100, "a")
    if joins:
        assert r is not None
        assert r.removed_classes == ("a", "b") and r.present_classes == ("c",)
        assert set(r.removed_boxes) == {row(0, 100), row(100 - overlap, 100)}
    else:
        # Not covered enough to go, too covered to stay (ratio >= tau1): the removal is not used.
        assert r is None


@pytest.mark.parametrize(("rows", "accepted"), [(69, True), (70, False), (71, False)])
def test_tau3_size_limit(rows: int, accepted: bool) -> None:
    # 100 x 100 image; A covers `rows` full rows: area fraction rows / 100 against tau3 = 0.7.
    objects = [("a", (0.0, 0.0, 100.0, float(rows))), ("b", (0.0, 90.0, 10.0, 10.0))]
    r = plan_removal(objects, 100, 100, "a")
    assert (r is not None) is accepted
    if r is not None:
        assert r.removed_area_fraction == pytest.approx(rows / 100)


@pytest.mark.parametrize(("b_last_row", "accepted"), [(68, True), (69, False)])
def test_tau3_counts_the_union_of_removed_classes(b_last_row: int, accepted: bool) -> None:
    # A = rows 0..64 (0.65 of the image on its own); B = rows 30..b_last_row has 35 rows inside A
    # (ratio > tau2) so it joins, and the union is rows 0..b_last_row.
    objects = [
        ("a", (0.0, 0.0, 100.0, 65.0)),
        ("b", (0.0, 30.0, 100.0, float(b_last_row - 29))),
        ("c", (0.0, 90.0, 10.0, 10.0)),
    ]
    r = plan_removal(objects, 100, 100, "a")
    assert (r is not None) is accepted
    if r is not None:
        assert r.removed_classes == ("a", "b")
        assert r.removed_area_fraction == pytest.approx((b_last_row + 1) / 100)


@pytest.mark.parametrize(("c_first", "accepted"), [(60, False), (62, True)])
def test_survival_is_checked_against_the_whole_erased_region(c_first: int, accepted: bool) -> None:
    # A = columns 0..59; B = 15..64 is 90% inside A and joins, erasing 60..64 as well. C (10 px)
    # is untouched by A itself; under the erased region it loses 5 (0.5) or 3 (0.3) pixels.
    objects = [("a", row(0, 60)), ("b", row(15, 50)), ("c", row(c_first, 10))]
    r = plan_removal(objects, 200, 10, "a")
    assert (r is not None) is accepted
    if r is not None:
        assert r.removed_classes == ("a", "b") and r.present_classes == ("c",)


def test_at_least_two_classes_and_one_kept() -> None:
    assert plan_removal([("a", row(0, 10)), ("a", row(20, 10))], 100, 10, "a") is None
    # B fully inside A joins the removal; nothing is left present.
    assert plan_removal([("a", row(0, 50)), ("b", row(10, 10))], 100, 10, "a") is None
    assert plan_removal([("a", row(0, 50)), ("b", row(60, 10))], 100, 10, "c") is None


def test_same_class_boxes_are_a_union_overlaps_count_once() -> None:
    # Two overlapping B boxes: union 60 px; A covers 23 of them (0.383 < tau1) although it covers
    # 23 of the first box's 40 (0.575).
    objects = [("a", row(0, 23)), ("b", row(0, 40)), ("b", row(20, 40))]
    assert plan_removal(objects, 100, 10, "a") is not None


def test_candidate_removals_merge_identical_removed_sets() -> None:
    # A and B cover each other (each > tau2 of the other): starting from either removes {a, b}.
    objects = [("a", row(0, 100)), ("b", row(5, 95)), ("c", row(0, 10, y=5))]
    found = candidate_removals(objects, 200, 10)
    assert [r.removed_classes for r in found] == [("a", "b"), ("c",)]
    assert [r.target_class for r in found] == ["a", "c"]


def test_box_mask_covers_every_touched_pixel() -> None:
    m = box_mask([(1.5, 0.2, 2.0, 0.5)], 6, 2)
    assert np.argwhere(m).tolist() == [[0, 1], [0, 2], [0, 3]]
    assert box_mask([(-5.0, -5.0, 7.0, 6.0)], 4, 4).sum() == 2  # clipped: columns 0-1, row 0


def test_a_joint_removal_erases_both_targets_under_the_same_rules() -> None:
    # A (cols 0-29) and B (cols 40-59) removed together; C (cols 100-149) stays; D (cols 35-37,
    # inside neither box) stays too.
    objects = [("a", row(0, 30)), ("b", row(40, 20)), ("c", row(100, 50)), ("d", row(35, 3))]
    r = plan_joint_removal(objects, 200, 10, ("a", "b"))
    assert r is not None
    assert r.removed_classes == ("a", "b") and r.present_classes == ("c", "d") and r.target_class == "a"
    assert set(r.removed_boxes) == {row(0, 30), row(40, 20)}
    assert r.removed_area_fraction == 50 / 2000
    # tau2 is read against the union of the targets: E lies across both boxes (20 of its 22
    # pixels, 0.91 > tau2) though neither box alone covers 80% of it.
    spanning = [("a", row(0, 30)), ("b", row(32, 30)), ("e", row(20, 22)), ("c", row(100, 10))]
    joint = plan_joint_removal(spanning, 200, 10, ("a", "b"))
    assert joint is not None and joint.removed_classes == ("a", "b", "e")
    assert plan_removal(spanning, 200, 10, "a") is None  # alone, A erases 10/22 of E: neither goes nor stays
    # the rules still reject: nothing left, a target that is not there, tau3 on the union
    assert plan_joint_removal([("a", row(0, 10)), ("b", row(20, 10))], 100, 10, ("a", "b")) is None
    assert plan_joint_removal(objects, 200, 10, ("a", "x")) is None
    assert plan_joint_removal(objects, 200, 10, ()) is None
    big = [("a", (0.0, 0.0, 60.0, 10.0)), ("b", (60.0, 0.0, 20.0, 10.0)), ("c", (90.0, 0.0, 10.0, 10.0))]
    assert plan_removal(big, 100, 10, "a") is not None  # 0.6 < tau3
    assert plan_joint_removal(big, 100, 10, ("a", "b")) is None  # 0.8 >= tau3


def test_one_target_joint_removal_is_plan_removal() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        objects = [(str(rng.integers(0, 4)), (float(rng.integers(0, 60)), float(rng.integers(0, 60)),
                                               float(rng.integers(1, 40)), float(rng.integers(1, 40))))
                   for _ in range(rng.integers(2, 6))]
        for cls in {c for c, _ in objects}:
            assert plan_joint_removal(objects, 100, 100, (cls,)) == plan_removal(objects, 100, 100, cls)
