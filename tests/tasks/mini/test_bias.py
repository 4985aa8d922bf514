"""The built-in shortcut: train co-occurrence as configured, val/test balanced, no 'alone' cue."""

from __future__ import annotations

import math
from collections import Counter
from functools import cache

from vlbench.tasks.mini.build import MiniConfig, iter_scenes
from vlbench.tasks.mini.sampling import effective_partner_prob
from vlbench.tasks.mini.world import CLASSES, partner_of


@cache
def default_world() -> tuple:
    """Train and test of the default configuration, enlarged for tight statistics."""
    return tuple(iter_scenes(MiniConfig(n_train=1200, n_val=0, n_test=1200)))


def partner_rate(scenes) -> tuple[float, int]:
    """P(partner present | paired class present) over images with two or more objects."""
    hits = total = 0
    for s in scenes:
        if len(s.objects) < 2:
            continue
        present = set(s.present_classes())
        for c in present:
            p = partner_of(c)
            if p is not None:
                total += 1
                hits += p in present
    return hits / total, total


def other_class_rate(scenes) -> tuple[float, int]:
    """P(a given unpaired class present | paired class present), images with two or more objects."""
    hits = total = 0
    unpaired = [d for d in CLASSES if partner_of(d) is None]
    for s in scenes:
        if len(s.objects) < 2:
            continue
        present = set(s.present_classes())
        for c in present:
            if partner_of(c) is not None:
                for d in unpaired:
                    total += 1
                    hits += d in present
    return hits / total, total


def chi2_uniform(counts: Counter, k: int) -> float:
    n = sum(counts.values())
    return sum((counts.get(c, 0) - n / k) ** 2 / (n / k) for c in CLASSES)


def test_effective_probability_inverts_the_symmetric_rate() -> None:
    for p in (0.0, 0.5, 0.9, 1.0):
        q = effective_partner_prob(p)
        assert math.isclose(2 * q / (1 + q), p)


def test_train_is_biased_and_test_balanced_as_configured() -> None:
    assert (MiniConfig().train_partner_prob, MiniConfig().eval_partner_prob) == (0.9, None)
    scenes = default_world()
    train = [s for s in scenes if s.split == "train"]
    test = [s for s in scenes if s.split == "test"]
    rate_train, n_train = partner_rate(train)
    rate_test, n_test = partner_rate(test)
    other_test, _ = other_class_rate(test)
    # Binomial standard errors at these sizes are about 0.01-0.015; 4 sigma bounds.
    assert n_train > 300 and n_test > 300
    assert abs(rate_train - 0.9) < 4 * math.sqrt(0.9 * 0.1 / n_train) + 0.01
    # Balanced: in test a partner is no likelier than any other given class.
    assert other_test < 0.2
    assert abs(rate_test - other_test) < 4 * math.sqrt(other_test * (1 - other_test) / n_test) + 0.01
    # The train shortcut is strong by comparison.
    assert rate_train > 4 * rate_test
    # An explicit evaluation rate is still honoured (configurable).
    biased_eval = MiniConfig(n_train=0, n_val=0, n_test=800, eval_partner_prob=0.5)
    rate_biased, n_biased = partner_rate(list(iter_scenes(biased_eval)))
    assert abs(rate_biased - 0.5) < 4 * math.sqrt(0.25 / n_biased) + 0.01
    # Another configuration moves the train rate with it.
    other = MiniConfig(n_train=800, n_val=0, n_test=0, train_partner_prob=0.6)
    rate_other, n_other = partner_rate(list(iter_scenes(other)))
    assert abs(rate_other - 0.6) < 4 * math.sqrt(0.24 / n_other) + 0.01


def test_single_object_images_are_uniform_over_classes_in_every_split() -> None:
    for split in ("train", "test"):
        singles = Counter(
            s.objects[0].cls for s in default_world() if s.split == split and len(s.objects) == 1
        )
        assert set(singles) == set(CLASSES)
        # chi-square with 9 degrees of freedom: 27.9 is the 0.001 critical value.
        assert chi2_uniform(singles, len(CLASSES)) < 27.9


def test_object_count_is_drawn_first_and_alike_across_splits() -> None:
    counts = {sp: Counter() for sp in ("train", "test")}
    for s in default_world():
        counts[s.split][len(s.objects)] += 1
    for sp in counts:
        assert set(counts[sp]) == {1, 2, 3, 4}
        for n in (1, 2, 3, 4):
            assert abs(counts[sp][n] / 1200 - 0.25) < 0.06
