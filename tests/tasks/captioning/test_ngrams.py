"""The vectorised n-gram index against plain Python counting, on all of its id schemes (n-grams
packed into int64 for small vocabularies, ranked for large ones, and a plain argsort when even
(rank, position) does not fit the key width), with default and sparse caption labels."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest

from vlbench.backports import strict_zip
from vlbench.tasks.captioning.corpus import index_ngram_ids


def _signatures(pairs) -> Counter:
    """For each n-gram (or id): its sorted (caption, count) list; the multiset of those lists.
    Equal multisets mean the same counts per caption under a one-to-one relabelling."""
    by_key: dict = defaultdict(list)
    for (cap, key), count in pairs:
        by_key[key].append((cap, count))
    return Counter(tuple(sorted(v)) for v in by_key.values())


@pytest.mark.parametrize("key_bits", [63, 30])
@pytest.mark.parametrize("vocab", [50, 2**20])
def test_index_matches_counting(vocab, key_bits):
    rng = np.random.default_rng(0)
    captions = [[int(w) for w in rng.integers(0, vocab, size=rng.integers(0, 12))] for _ in range(400)]
    captions += [[3, 3, 3, 3, 3], [], [7], [1, 2, 1, 2, 1, 2]]
    tok = np.array([w for c in captions for w in c], dtype=np.int64)
    lengths = np.array([len(c) for c in captions], dtype=np.int64)
    for labels in (None, np.arange(len(captions), dtype=np.int64) * 3 + 1):
        label = list(range(len(captions))) if labels is None else labels.tolist()
        index = index_ngram_ids(tok, lengths, vocab, labels=labels, key_bits=key_bits)
        for n, g in enumerate(index, start=1):
            want = Counter(
                (label[c], tuple(t[i : i + n])) for c, t in enumerate(captions) for i in range(len(t) - n + 1)
            )
            got = strict_zip(strict_zip(g.cap.tolist(), g.gram.tolist()), g.count.tolist())
            assert _signatures(got) == _signatures(want.items())
            assert g.n_grams == len({k for _, k in want})
            # sorted by (gram, caption), dense ids
            order = np.lexsort((g.cap, g.gram))
            assert (order == np.arange(len(order))).all()
            assert set(g.gram.tolist()) == set(range(g.n_grams))
