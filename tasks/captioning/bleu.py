"""BLEU-1..4 (pycocoevalcap's Bleu, "closest" reference length) from per-image sufficient
statistics read off the shared n-gram index (`corpus.py`)."""

from __future__ import annotations

import math

import numpy as np

from vlbench.backports import strict_zip
from vlbench.tasks.captioning.corpus import MAX_N, Corpus, first_of_runs

BLEU_SMALL = 1e-9
BLEU_TINY = 1e-15

BLEU_COLUMNS = (
    [f"bleu_correct_{k}" for k in range(1, MAX_N + 1)]
    + [f"bleu_guess_{k}" for k in range(1, MAX_N + 1)]
    + ["bleu_testlen", "bleu_reflen"]
)


def bleu_stats(corpus: Corpus) -> np.ndarray:
    """Per-image sufficient statistics, shape (n_images, 10): correct[1..4], guess[1..4], testlen,
    reflen (the 'closest' reference length, ties to the shorter)."""
    n = corpus.n_images
    stats = np.zeros((n, 2 * MAX_N + 2), dtype=np.float64)
    testlen = corpus.cand_len
    for k, (g, gr) in enumerate(strict_zip(corpus.grams, corpus.groups)):
        if len(gr.shared):
            # a candidate n-gram's clip: its count, at most the maximum count over the
            # references (the shared entries of one candidate entry are contiguous)
            first = np.flatnonzero(first_of_runs(gr.cand_of))
            head = gr.cand_of[first]
            clip = np.minimum(g.count[head], np.maximum.reduceat(g.count[gr.shared], first))
            stats[:, k] = np.bincount(gr.image[head], weights=clip, minlength=n)
        stats[:, MAX_N + k] = np.maximum(0, testlen - k)
    stats[:, 2 * MAX_N] = testlen
    stats[:, 2 * MAX_N + 1] = closest_ref_len(corpus)
    return stats


def closest_ref_len(corpus: Corpus) -> np.ndarray:
    """min((|l - testlen|, l)) over the image's reference lengths l."""
    n = corpus.n_images
    diff = np.abs(corpus.ref_len - corpus.cand_len[corpus.ref_image])
    # lexicographic (diff, len) minimum per image via one composite key
    big = int(corpus.ref_len.max(initial=0)) + 1
    key = diff * big + corpus.ref_len
    best = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, corpus.ref_image, key)
    return np.where(best == np.iinfo(np.int64).max, 0, best % big).astype(np.float64)


def bleu_from_stats(stats: np.ndarray) -> np.ndarray:
    """BLEU-1..4 from (..., 10) statistics (per image, or summed over a corpus): shape (..., 4).
    The one formula for both: `corpus_bleu` gives it the summed statistics.

    pycocoevalcap's float operations in its order: cumulative product of
    (correct + 1e-15) / (guess + 1e-9), then ** (1/k), then times the brevity penalty
    exp(1 - 1/ratio) when ratio = (testlen + 1e-15) / (reflen + 1e-9) < 1. Sums, products and
    quotients are IEEE operations, the same in numpy; the powers and the exponential go through
    Python's float `**` and `math.exp` (the C library's, as in pycocoevalcap), because numpy's
    vectorised ones can differ from them in the last bit (they do on AVX-512 machines). So every
    value is pycocoevalcap's to the bit."""
    stats = np.asarray(stats, dtype=np.float64)
    shape = stats.shape[:-1]
    out = np.empty((*shape, MAX_N))
    bleu = np.ones(shape)
    for k in range(MAX_N):
        bleu = bleu * ((stats[..., k] + BLEU_TINY) / (stats[..., MAX_N + k] + BLEU_SMALL))
        exponent = 1.0 / (k + 1)
        out[..., k] = np.reshape([b**exponent for b in bleu.ravel().tolist()], shape)
    ratio = ((stats[..., 2 * MAX_N] + BLEU_TINY) / (stats[..., 2 * MAX_N + 1] + BLEU_SMALL)).ravel()
    penalty = np.ones(ratio.shape)
    short = np.flatnonzero(ratio < 1)
    penalty[short] = [math.exp(1 - 1 / r) for r in ratio[short].tolist()]
    return out * penalty.reshape(shape)[..., None]


def corpus_bleu(stats: np.ndarray) -> list[float]:
    """Corpus BLEU-1..4 from per-image statistics (summed exactly: they are integers)."""
    return bleu_from_stats(np.asarray(stats, dtype=np.float64).sum(axis=0)).tolist()
