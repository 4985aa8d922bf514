"""The byte-table popcount (numpy < 2.0, as on EvalAI's Python 3.9 workers) counts as
np.bitwise_count and as Python's int.bit_count would."""

from __future__ import annotations

import numpy as np

from vlbench.tasks.captioning.rouge import popcount_by_bytes


def test_popcount_by_bytes_counts_every_bit() -> None:
    rng = np.random.default_rng(0)
    words = rng.integers(0, 2**64, size=(300, 3), dtype=np.uint64, endpoint=False)
    words[0] = [0, np.uint64(2**64 - 1), np.uint64(2**63)]
    expected = np.array([[bin(int(x)).count("1") for x in row] for row in words])
    got = popcount_by_bytes(words)
    assert got.shape == words.shape and (got == expected).all()
    if hasattr(np, "bitwise_count"):
        assert (np.bitwise_count(words) == got).all()
    assert popcount_by_bytes(np.zeros((0, 2), dtype=np.uint64)).shape == (0, 2)
