"""BLEU-1..4 (pycocoevalcap's Bleu, "closest" reference length) from per-image sufficient
statistics read off the shared n-gram index (`corpus.py`)."""

from __future__ import annotations

import math

import numpy as np

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
    for k, (g, gr) in enumerate(zip(corpus.grams, corpus.groups, strict=True)):
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

    The float operations follow the reference's order: cumulative product of
    (correct + 1e-15) / (guess + 1e-9), then ** (1/k), then the brevity penalty when
    (testlen + 1e-15) / (reflen + 1e-9) < 1."""
    stats = np.asarray(stats, dtype=np.float64)
    out = np.empty(stats.shape[:-1] + (MAX_N,))
    bleu = np.ones(stats.shape[:-1])
    for k in range(MAX_N):
        bleu = bleu * ((stats[..., k] + BLEU_TINY) / (stats[..., MAX_N + k] + BLEU_SMALL))
        out[..., k] = bleu ** (1.0 / (k + 1))
    ratio = (stats[..., 2 * MAX_N] + BLEU_TINY) / (stats[..., 2 * MAX_N + 1] + BLEU_SMALL)
    with np.errstate(divide="ignore", over="ignore"):
        penalty = np.where(ratio < 1, np.exp(1 - 1 / np.where(ratio < 1, ratio, 1.0)), 1.0)
    return out * penalty[..., None]


def corpus_bleu(stats: np.ndarray) -> list[float]:
    """Corpus BLEU-1..4 from per-image statistics (summed exactly: they are integers)."""
    total = stats.sum(axis=0)
    bleu = 1.0
    out = []
    for k in range(MAX_N):
        bleu *= (float(total[k]) + BLEU_TINY) / (float(total[MAX_N + k]) + BLEU_SMALL)
        out.append(bleu ** (1.0 / (k + 1)))
    ratio = (float(total[2 * MAX_N]) + BLEU_TINY) / (float(total[2 * MAX_N + 1]) + BLEU_SMALL)
    if ratio < 1:
        out = [b * math.exp(1 - 1 / ratio) for b in out]
    return out
