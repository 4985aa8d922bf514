"""ODmAP@k arithmetic and the two correctness rules, on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from vlbench.backports import strict_zip
from vlbench.tasks.decorrelated.metrics import (
    average_precision_at_k,
    count_relevant,
    expected_average_precision_at_k,
    pack_classes,
    pack_csr,
    relevance,
)


def _rel(*bits: int) -> np.ndarray:
    return np.array([bits], dtype=bool)


@pytest.mark.parametrize(
    ("bits", "r", "expected"),
    [
        # R >= k: the normaliser is k.
        ((1, 1, 0, 0, 1, 0, 0, 0, 0, 1), 100, {1: 1.0, 5: (1 + 1 + 3 / 5) / 5, 10: (1 + 1 + 3 / 5 + 4 / 10) / 10}),
        # R < k: the normaliser is R (2), so a list with both correct captions early scores high.
        ((1, 0, 1, 0, 0, 0, 0, 0, 0, 0), 2, {1: 1.0, 5: (1 + 2 / 3) / 2, 10: (1 + 2 / 3) / 2}),
        # R = 1, the only correct caption at rank 2.
        ((0, 1, 0, 0, 0, 0, 0, 0, 0, 0), 1, {1: 0.0, 5: 0.5, 10: 0.5}),
        # R = 3 < 5 <= 10, hit at rank 10 only.
        ((0, 0, 0, 0, 0, 0, 0, 0, 0, 1), 3, {1: 0.0, 5: 0.0, 10: (1 / 10) / 3}),
        # R = 5 = k: a perfect top 5.
        ((1, 1, 1, 1, 1, 0, 0, 0, 0, 0), 5, {1: 1.0, 5: 1.0, 10: 1.0}),
        # No hit.
        ((0,) * 10, 50, {1: 0.0, 5: 0.0, 10: 0.0}),
    ],
)
def test_ap_at_k_hand_computed(bits: tuple[int, ...], r: int, expected: dict[int, float]) -> None:
    for k, value in expected.items():
        got = average_precision_at_k(_rel(*bits), np.array([r]), k)
        assert got[0] == pytest.approx(value, abs=1e-12), k


def test_ap_is_zero_when_no_caption_can_be_correct() -> None:
    assert average_precision_at_k(_rel(*(0,) * 10), np.array([0]), 10)[0] == 0.0


def test_ap_rows_are_independent() -> None:
    rel = np.array([[1, 0, 0, 0, 0], [0, 0, 0, 0, 1]], dtype=bool)
    got = average_precision_at_k(rel, np.array([1, 10]), 5)
    assert got.tolist() == pytest.approx([1.0, (1 / 5) / 5])


# Classes: 0 person, 1 dog, 2 frisbee, 3 car.  Query: dog removed, person and frisbee present.
REMOVED = pack_classes([[1]], 4)
PRESENT = pack_classes([[0, 2]], 4)


@pytest.mark.parametrize(
    ("mentions", "correct"),
    [
        ([0, 2], True),  # rule 1 holds, rule 2 holds
        ([0, 1], False),  # rule 1 fails (present and removed both mentioned), rule 2 holds
        ([1], False),  # rule 1 fails, rule 2 fails
        ([3], False),  # rule 1 holds, rule 2 fails (only an absent, unremoved class)
        ([], False),  # rule 1 holds, rule 2 fails (no class at all)
        ([2, 3], True),  # an extra absent class does not matter
    ],
)
def test_relevance_rules(mentions: list[int], correct: bool) -> None:
    caption = pack_classes([mentions], 4)[None, :, :]  # (Q=1, K=1, B)
    assert bool(relevance(caption, REMOVED, PRESENT)[0, 0]) is correct


def test_count_relevant_matches_brute_force() -> None:
    rng = np.random.default_rng(3)
    n_classes = 20  # three bytes per mask: masks crossing a byte boundary
    captions = [sorted(set(rng.integers(0, n_classes, rng.integers(0, 4)).tolist())) for _ in range(400)]
    removed = [sorted(set(rng.integers(0, n_classes, 2).tolist())) for _ in range(30)]
    present = [sorted(set(rng.integers(0, n_classes, 3).tolist()) - set(r)) or [19] for r in removed]
    got = count_relevant(pack_classes(captions, n_classes), pack_classes(removed, n_classes), pack_classes(present, n_classes))
    brute = [
        sum(1 for c in captions if not set(c) & set(r) and set(c) & set(p))
        for r, p in strict_zip(removed, present)
    ]
    assert got.tolist() == brute


def test_pack_csr_equals_pack_classes() -> None:
    sets = [[0, 9], [], [3], [1, 2, 8]]
    indptr = np.array([0, 2, 2, 3, 6])
    flat = np.array([0, 9, 3, 1, 2, 8])
    assert np.array_equal(pack_csr(indptr, flat, 10), pack_classes(sets, 10))


@pytest.mark.parametrize(("n", "r", "k"), [(6, 2, 3), (7, 1, 1), (7, 3, 5), (5, 5, 3), (6, 0, 2), (8, 4, 1)])
def test_expected_ap_is_the_mean_over_every_ordered_top_k(n: int, r: int, k: int) -> None:
    """Chance rows: every ordered draw of k of n captions (r correct), enumerated."""
    from itertools import permutations

    correct = np.array([True] * r + [False] * (n - r))
    draws = np.array([correct[list(p)] for p in permutations(range(n), k)])
    direct = average_precision_at_k(draws, np.full(len(draws), r), k).mean()
    assert expected_average_precision_at_k(np.array([r]), n, k)[0] == pytest.approx(direct, rel=1e-12, abs=1e-15)
