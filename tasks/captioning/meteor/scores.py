"""METEOR from the jar's sufficient statistics (Meteor 1.5, task "ranking", -norm English
defaults): the score of a segment and the jar's corpus aggregate. The statistics come from the jar
(`process.py`) or its Python port (`python_meteor.py`)."""

from __future__ import annotations

import numpy as np

METEOR_ALPHA, METEOR_BETA, METEOR_GAMMA, METEOR_DELTA = 0.85, 0.2, 0.6, 0.75
METEOR_WEIGHTS = (1.0, 0.6, 0.8, 0.6)  # exact stem synonym paraphrase
METEOR_STATS = 23
METEOR_COLUMNS = [f"meteor_{i}" for i in range(METEOR_STATS)]


def meteor_perfect(stats: np.ndarray) -> np.ndarray:
    """Segments whose chunks the jar leaves out of the aggregate: every word matched, one chunk."""
    stats = np.asarray(stats, dtype=np.float64)
    t_match = sum(stats[..., 4 + 4 * i] + stats[..., 6 + 4 * i] for i in range(4))
    r_match = sum(stats[..., 5 + 4 * i] + stats[..., 7 + 4 * i] for i in range(4))
    return (t_match == stats[..., 0]) & (r_match == stats[..., 1]) & (stats[..., 20] == 1)


def meteor_from_stats(stats: np.ndarray) -> np.ndarray:
    """Meteor score from (..., 23) statistics: tstLen refLen tstFunc refFunc, 4 stages x
    (tstContent refContent tstFunction refFunction), chunks tstWordMatches refWordMatches."""
    s = np.asarray(stats, dtype=np.float64)
    d = METEOR_DELTA
    t_wl = d * (s[..., 0] - s[..., 2]) + (1 - d) * s[..., 2]
    r_wl = d * (s[..., 1] - s[..., 3]) + (1 - d) * s[..., 3]
    t_wm = np.zeros(s.shape[:-1])
    r_wm = np.zeros(s.shape[:-1])
    for i, w in enumerate(METEOR_WEIGHTS):
        t_wm = t_wm + w * (d * s[..., 4 + 4 * i] + (1 - d) * s[..., 6 + 4 * i])
        r_wm = r_wm + w * (d * s[..., 5 + 4 * i] + (1 - d) * s[..., 7 + 4 * i])
    with np.errstate(invalid="ignore", divide="ignore"):
        p = t_wm / t_wl
        r = r_wm / r_wl
        fmean = 1.0 / (((1 - METEOR_ALPHA) / p) + (METEOR_ALPHA / r))
        frag = np.where(meteor_perfect(s), 0.0, s[..., 20] / ((s[..., 21] + s[..., 22]) / 2))
        score = fmean * (1.0 - METEOR_GAMMA * frag**METEOR_BETA)
    score = np.where(np.isnan(score), 0.0, score)
    return np.maximum(0.0, score)


def meteor_aggregate(stats: np.ndarray) -> np.ndarray:
    """Sum per-segment statistics as the jar does: chunks of perfect segments are not added."""
    s = np.array(stats, dtype=np.float64, copy=True)
    if s.ndim == 1:
        s = s[None, :]
    s[meteor_perfect(s), 20] = 0.0
    return s.sum(axis=0)
