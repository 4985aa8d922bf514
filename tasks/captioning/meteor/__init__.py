"""METEOR as pycocoevalcap computes it (the Meteor 1.5 jar, `-l en -norm`), by default in Python.

The entry point: `segment_statistics(hypotheses, references)` gives, for each segment (one
hypothesis and its references, already PTB-tokenized as pycocoevalcap sends them), the jar's 23
statistics, shape (n, 23), equal to the jar's segment by segment. The scores come from them
(`scores.py`): per segment `meteor_from_stats(stats)`, for the corpus
`meteor_from_stats(meteor_aggregate(stats))` (not the mean of the segments' scores: the jar sums
the statistics, leaving out the chunks of perfect segments).

    from vlbench.tasks.captioning.meteor import meteor_aggregate, meteor_from_stats, segment_statistics
    stats = segment_statistics(["a dog runs"], [["a dog is running", "the dog runs"]])
    corpus = float(meteor_from_stats(meteor_aggregate(stats)))

`MeteorProcess` is the same as an object to start early and reuse (`start()`, `stats(...)`,
`close()`): its first run on a machine builds the paraphrase index while the words are prepared.

Inside (each module imports only those listed before it, never this package):
- `scores.py`: the score and the corpus aggregate from the 23 statistics;
- `paraphrase.py`: the jar's normaliser (`-norm`) and the n-gram keys of a run's words;
- `paraphrase_table.py`: the one pass over the 272 MB table (C: `_paraphrase_scan.c`);
- `paraphrase_index.py`: the index built from that pass, and the entries a run keeps;
- `resources.py`: the jar's word data (function words, synsets, stemmer) and Java's string hash;
- `aligner.py`: matchers, beam search and statistics of one pair, in Python (the oracle);
- `native.py`: the same aligner in C (`_meteor_align.c`) and the choice between the two;
- `python_meteor.py`: a run without Java (`PythonMeteor`);
- `process.py`: `MeteorProcess`, the Python run or the jar itself (`VLBENCH_METEOR=jar`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlbench.tasks.captioning.meteor.process import MeteorProcess, MeteorUnavailable, score_line
from vlbench.tasks.captioning.meteor.scores import (
    METEOR_COLUMNS,
    METEOR_STATS,
    meteor_aggregate,
    meteor_from_stats,
    meteor_perfect,
)

__all__ = [
    "METEOR_COLUMNS",
    "METEOR_STATS",
    "MeteorProcess",
    "MeteorUnavailable",
    "meteor_aggregate",
    "meteor_from_stats",
    "meteor_perfect",
    "score_line",
    "segment_statistics",
]


def segment_statistics(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
                       backend: str | None = None) -> np.ndarray:
    """The Meteor 1.5 jar's 23 statistics of each segment (hypothesis `i` against `references[i]`),
    shape (n, 23). `backend`: "python" (default, no Java) or "jar" (default: `VLBENCH_METEOR`).
    Raises `MeteorUnavailable` when the jar's data files (or, for "jar", Java) are missing."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} reference lists")
    with MeteorProcess(backend=backend) as process:
        return process.stats(hypotheses, references)
