"""Consensus re-ranking of retrieved captions (Devlin et al. 2015, "Exploring Nearest Neighbor
Approaches for Image Captioning"): among the captions of an image's K nearest train images, pick
the one with the highest mean CIDEr-D to the other captions of that pool.

CIDEr-D here is pycocoevalcap's ("Cider"), with vlbench's constants (`vlbench.tasks.captioning
.metrics`): tf-idf vectors per n-gram order 1..4, min(w_c, w_r) * w_r clipping, the Gaussian
length penalty on bigram counts (sigma 6), averaged over orders and references, times 10.

Document frequencies (our choice, stated because the paper leaves it open): they come from the
**train caption pool**, each train image one document holding its captions, N = number of train
images: exactly the df that `metrics.cider_scores` would use if the train set were the scored set.
vlbench's `cider_scores` counts df over the references of the set it scores; scored on one pool
(each caption against the others) every n-gram shared by two captions is in nearly every row's
references, its idf is 0 and every score collapses to 0. So this module scores with a fixed df,
and a test checks it equals `cider_scores` when given the df that `cider_scores` computes.

Tokens: PTB-tokenized as the scorer does (`ptb.fast_tokenize_many`); the few captions the fast
path cannot prove fall back to lower-cased whitespace splitting (no JVM for a re-ranker).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vlbench.tasks.captioning.cider import CIDER_D_SCALE, CIDER_SIGMA
from vlbench.tasks.captioning.corpus import MAX_N
from vlbench.tasks.captioning.ptb.fast import fast_tokenize_many

Gram = tuple[str, ...]


def tokenize(captions: Sequence[str]) -> list[list[str]]:
    fast = fast_tokenize_many(list(captions))
    return [(t if t is not None else c.lower()).split() for t, c in zip(fast, captions, strict=True)]


def ngram_counts(tokens: Sequence[str]) -> list[dict[Gram, int]]:
    """Per order n = 1..4: n-gram -> count in this caption."""
    out: list[dict[Gram, int]] = []
    for n in range(1, MAX_N + 1):
        counts: dict[Gram, int] = {}
        for i in range(len(tokens) - n + 1):
            g = tuple(tokens[i : i + n])
            counts[g] = counts.get(g, 0) + 1
        out.append(counts)
    return out


@dataclass(frozen=True)
class DocumentFrequency:
    """df(g): in how many documents (images) any reference caption holds n-gram g; N documents."""

    df: dict[Gram, int]
    n_documents: int

    @classmethod
    def of(cls, documents: Sequence[Sequence[Sequence[str]]]) -> DocumentFrequency:
        """`documents`: per image, its tokenized captions."""
        df: dict[Gram, int] = {}
        for captions in documents:
            seen: set[Gram] = set()
            for tokens in captions:
                for counts in ngram_counts(tokens):
                    seen.update(counts)
            for g in seen:
                df[g] = df.get(g, 0) + 1
        return cls(df, len(documents))

    def idf(self, gram: Gram) -> float:
        return float(np.log(float(self.n_documents)) - np.log(max(1.0, float(self.df.get(gram, 0)))))


def cider_d_matrix(token_lists: Sequence[Sequence[str]], df: DocumentFrequency) -> np.ndarray:
    """S[i, j] = CIDEr-D of caption i scored against the single reference caption j (times 10,
    before the average over references), so the CIDEr-D of i against references R is mean_{j in R}."""
    m = len(token_lists)
    per_caption = [ngram_counts(t) for t in token_lists]
    # bigram count as pycocoevalcap's length
    lengths = np.array([max(len(t) - 1, 0) for t in token_lists], dtype=np.float64)
    delta = lengths[:, None] - lengths[None, :]
    penalty = np.exp(-(delta**2) / (2 * CIDER_SIGMA**2))
    total = np.zeros((m, m))
    for n in range(MAX_N):
        vocab: dict[Gram, int] = {}
        for counts in per_caption:
            for g in counts[n]:
                vocab.setdefault(g, len(vocab))
        tf = np.zeros((m, len(vocab)))
        idf = np.zeros(len(vocab))
        for i, counts in enumerate(per_caption):
            for g, c in counts[n].items():
                tf[i, vocab[g]] = c
        for g, k in vocab.items():
            idf[k] = df.idf(g)
        w = tf * idf
        norm = np.sqrt((w * w).sum(axis=1))
        # sum_g min(w_i, w_j) * w_j = sum_g idf^2 min(tf_i, tf_j) tf_j, and for counts
        # min(a, b) = sum_{t >= 1} [a >= t][b >= t]: a few matrix products instead of an m x m x G array
        dots = np.zeros((m, m))
        for t in range(1, int(tf.max(initial=0)) + 1):
            at_least = (tf >= t).astype(np.float64)
            dots += at_least @ (at_least * tf * idf * idf).T
        denom = norm[:, None] * norm[None, :]
        total += np.where(denom != 0, dots / np.where(denom != 0, denom, 1.0), dots)
    return total / MAX_N * penalty * CIDER_D_SCALE


def consensus_index(token_lists: Sequence[Sequence[str]], df: DocumentFrequency) -> int:
    """Index of the caption with the highest mean CIDEr-D to the others (ties: the first)."""
    m = len(token_lists)
    if m == 0:
        raise ValueError("an empty caption pool has no consensus caption")
    if m == 1:
        return 0
    s = cider_d_matrix(token_lists, df)
    np.fill_diagonal(s, 0.0)
    return int(np.argmax(s.sum(axis=1) / (m - 1)))
