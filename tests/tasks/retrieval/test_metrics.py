"""R@K against an independent brute-force computation from a similarity matrix."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vlbench.tasks.retrieval.metrics import (
    expected_hit_at_k,
    hits_at_k,
    image_to_text_hits,
    rsum,
    text_to_image_hits,
)


def brute_force_recalls(sim: np.ndarray, caption_image: np.ndarray, k: int) -> tuple[float, float]:
    """VSE++-style ranks: i2t uses the best rank among an image's captions; t2i the rank of its image."""
    n_images, n_captions = sim.shape
    i2t_hits = 0
    for i in range(n_images):
        order = sorted(range(n_captions), key=lambda c: (-sim[i, c], c))
        best = min(order.index(c) for c in range(n_captions) if caption_image[c] == i)
        i2t_hits += best < k
    t2i_hits = 0
    for c in range(n_captions):
        order = sorted(range(n_images), key=lambda i: (-sim[i, c], i))
        t2i_hits += order.index(caption_image[c]) < k
    return i2t_hits / n_images, t2i_hits / n_captions


def ranked(sim: np.ndarray, k: int) -> np.ndarray:
    # Stable sort on -sim with index tie-break, as the brute force does.
    return np.argsort(-sim, axis=1, kind="stable")[:, :k]


@settings(max_examples=60, deadline=None)
@given(
    n_images=st.integers(2, 14),
    per_image=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
    discrete=st.booleans(),
)
def test_recall_matches_brute_force(n_images: int, per_image: int, seed: int, discrete: bool) -> None:
    rng = np.random.default_rng(seed)
    caption_image = np.repeat(np.arange(n_images), per_image)
    rng.shuffle(caption_image)
    n_captions = caption_image.size
    # Discrete similarities create ties; the ranking and the brute force break them the same way.
    sim = rng.integers(0, 4, (n_images, n_captions)).astype(float) if discrete else rng.normal(size=(n_images, n_captions))
    ks = (1, 5, 10)
    width = max(ks)
    i2t_rank = ranked(sim, min(width, n_captions))
    t2i_rank = ranked(sim.T, min(width, n_images))
    i2t = image_to_text_hits(i2t_rank, caption_image, ks).mean(axis=0)
    t2i = text_to_image_hits(t2i_rank, caption_image, ks).mean(axis=0)
    for j, k in enumerate(ks):
        expected_i2t, expected_t2i = brute_force_recalls(sim, caption_image, k)
        assert i2t[j] == expected_i2t
        assert t2i[j] == expected_t2i


def test_hits_at_k_by_hand() -> None:
    relevant = np.array(
        [
            [True, False, False, False, False, False, False, False, False, False],
            [False, False, True, False, False, False, False, False, False, False],
            [False] * 9 + [True],
            [False] * 10,
        ]
    )
    assert hits_at_k(relevant).tolist() == [[1, 1, 1], [0, 1, 1], [0, 0, 1], [0, 0, 0]]


def test_rsum_is_percent_points() -> None:
    assert rsum([0.5, 0.75, 0.875, 0.25, 0.5, 0.625]) == 350.0


def test_expected_hit_is_the_mean_over_every_ordered_top_k() -> None:
    """Chance rows: every ordered draw of k of n items (r correct), enumerated."""
    from itertools import permutations

    for n, r, k in [(6, 1, 1), (6, 2, 3), (7, 5, 3), (5, 1, 5)]:
        correct = np.array([True] * r + [False] * (n - r))
        draws = np.array([correct[list(p)] for p in permutations(range(n), k)])
        direct = hits_at_k(draws, (k,)).mean()
        assert abs(float(expected_hit_at_k(np.array([r]), np.array([n]), k)[0]) - direct) < 1e-12
