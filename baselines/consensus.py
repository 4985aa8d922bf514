"""Consensus re-ranking of retrieved captions (Devlin et al. 2015, "Exploring Nearest Neighbor
Approaches for Image Captioning"): among the captions of an image's K nearest train images, pick
the one with the highest mean CIDEr-D to the other captions of that pool.

The scores are vlbench's own CIDEr-D (`vlbench.tasks.captioning.cider.cider_scores`,
pycocoevalcap's "Cider"): each pool caption is a candidate whose references are the rest of the
pool, and CIDEr-D's mean over references is the mean the paper ranks by.

Document frequencies (our choice, stated because the paper leaves it open): they come from the
**train caption pool**, each train image one document holding its captions, N = number of train
images (`cider.DocumentFrequency`): exactly the df that `cider_scores` would count if the train set
were the scored set. `cider_scores` by default counts df over the references of the set it
scores; scored on one pool (each caption against the others) every n-gram shared by two captions
is in nearly every row's references, its idf is 0 and every score collapses to 0. So the pool is
scored with the train set's df.

Tokens: PTB-tokenized as the scorer does (`ptb.fast.fast_tokenize_many`); the few captions the
fast path cannot prove fall back to lower-cased whitespace splitting (no lexer for a re-ranker).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlbench.tasks.captioning.cider import DocumentFrequency, cider_scores
from vlbench.tasks.captioning.corpus import Corpus
from vlbench.tasks.captioning.ptb.fast import fast_tokenize_many

__all__ = ["DocumentFrequency", "consensus_index", "consensus_scores", "tokenize"]


def tokenize(captions: Sequence[str]) -> list[str]:
    """The captions PTB-tokenized (tokens joined by single spaces)."""
    fast = fast_tokenize_many(list(captions))
    return [t if t is not None else " ".join(c.lower().split()) for t, c in zip(fast, captions, strict=True)]


def consensus_scores(captions: Sequence[str], df: DocumentFrequency) -> np.ndarray:
    """Each tokenized caption's CIDEr-D against the other captions of the pool, with `df`."""
    refs = [[*captions[:i], *captions[i + 1 :]] for i in range(len(captions))]
    cider_d, _ = cider_scores(Corpus.build(captions, refs, ngram_positions=True), df)
    return cider_d


def consensus_index(captions: Sequence[str], df: DocumentFrequency) -> int:
    """Index of the caption with the highest mean CIDEr-D to the others (ties: the first)."""
    m = len(captions)
    if m == 0:
        raise ValueError("an empty caption pool has no consensus caption")
    if m == 1:
        return 0
    return int(np.argmax(consensus_scores(captions, df)))
