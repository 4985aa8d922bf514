"""METEOR's per-segment work (matchers, beam search, statistics, best reference) in C: the
arrays the `_meteor_align` extension reads, built from a run's tokens, and the choice between it
and the Python aligner of `aligner.py` (equal to the last bit; the tests compare them).

`VLBENCH_METEOR_ALIGNER`: unset (the extension when it is built, else Python), `python` (the
Python aligner, e.g. for cross-checks) or `c` (the extension, an error when it is not built).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain

import numpy as np

from vlbench.tasks.captioning.meteor.resources import MeteorResources, java_hashes
from vlbench.tasks.captioning.meteor.scores import (
    METEOR_ALPHA,
    METEOR_BETA,
    METEOR_DELTA,
    METEOR_GAMMA,
    METEOR_STATS,
    METEOR_WEIGHTS,
)

try:
    from vlbench.tasks.captioning.meteor import _meteor_align  # type: ignore[attr-defined]
except ImportError:  # installed without a C compiler
    _meteor_align = None

ALIGNERS = ("c", "python")
Entry = tuple[tuple[str, ...], tuple[str, ...]]


def built() -> bool:
    return _meteor_align is not None


def use_native() -> bool:
    """Whether `PythonMeteor` aligns in C (VLBENCH_METEOR_ALIGNER, see the module's docstring)."""
    value = os.environ.get("VLBENCH_METEOR_ALIGNER", "").strip().lower()
    if value and value not in ALIGNERS:
        raise ValueError(f"VLBENCH_METEOR_ALIGNER={value!r} is not one of {', '.join(ALIGNERS)}")
    if value == "c" and not built():
        raise RuntimeError("VLBENCH_METEOR_ALIGNER=c, but the C aligner (vlbench.tasks.captioning.meteor._meteor_align) "
                           "is not built: reinstall vlbench with a C compiler present")
    return value != "python" and built()


def _offsets(lengths: Sequence[int]) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.asarray(lengths, dtype=np.int64), out=out[1:])
    return out


def _word_arrays(res: MeteorResources, words: Sequence[str]) -> tuple[np.ndarray, ...]:
    """What the jar compares of each run word: hash code, stem's hash code, function-word flag,
    synset ids (CSR, ascending)."""
    fw = res.function_words
    hashes = java_hashes(words)
    stems = java_hashes(res.stems(words))
    function = np.fromiter((w.lower() in fw for w in words), dtype=np.uint8, count=len(words))
    synsets = [sorted(res.synonym_sets(w)) for w in words]
    lengths = np.fromiter((len(s) for s in synsets), dtype=np.int64, count=len(words))
    syn_ids = np.fromiter((k for s in synsets for k in s), dtype=np.int64, count=int(lengths.sum()))
    # Only a synset of two or more run words can make a synonym match (the matcher pairs different
    # words): the others are dropped, and the kept ids renumbered densely (order kept), so the C
    # side intersects short lists.
    _, dense, counts = np.unique(syn_ids, return_inverse=True, return_counts=True)
    dense = dense.reshape(-1)
    shared = counts[dense] >= 2
    owner = np.repeat(np.arange(len(words)), lengths)
    syn_off = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner[shared], minlength=len(words)), out=syn_off[1:])
    return hashes, stems, function, syn_off, dense[shared].astype(np.int64)


def _table_arrays(entries: Sequence[Entry], ids: dict[str, int]) -> tuple[np.ndarray, ...]:
    """Phrases and paraphrases as word ids, in table order; a word no run token has gets -1
    (the jar compares paraphrase words as strings, so it can never match)."""
    get = ids.get
    phrases = [w for phrase, _ in entries for w in phrase]
    paras = [w for _, para in entries for w in para]
    return (
        _offsets([len(p) for p, _ in entries]),
        np.fromiter((get(w, -1) for w in phrases), dtype=np.int32, count=len(phrases)),
        _offsets([len(p) for _, p in entries]),
        np.fromiter((get(w, -1) for w in paras), dtype=np.int32, count=len(paras)),
    )


@dataclass
class RunArguments:
    """The extension's arguments that depend on the run's words only (not on the paraphrase
    table): computed while a first run's table index is still being built."""

    ids: dict[str, int]  # the run's words, in first-seen order
    words: tuple[np.ndarray, ...]
    segments: tuple[np.ndarray, ...]

    def with_table(self, entries: Sequence[Entry]) -> tuple:
        """The extension's arguments but `out` (words, table, segments, params)."""
        return (self.words, _table_arrays(entries, self.ids), self.segments,
                (METEOR_ALPHA, METEOR_BETA, METEOR_GAMMA, METEOR_DELTA, *METEOR_WEIGHTS))


def run_arguments(res: MeteorResources, segments: Sequence[Sequence[Sequence[str]]]) -> RunArguments:
    sequences = [toks for seg in segments for toks in seg]
    token_offsets = _offsets([len(t) for t in sequences])
    ids = dict.fromkeys(chain.from_iterable(sequences), 0)  # the run's words, in first-seen order
    for i, w in enumerate(ids):
        ids[w] = i
    token_ids = np.fromiter(map(ids.__getitem__, chain.from_iterable(sequences)), dtype=np.int32,
                            count=int(token_offsets[-1]))
    return RunArguments(ids, _word_arrays(res, list(ids)),
                        (token_offsets, token_ids, _offsets([len(seg) for seg in segments])))


def native_arguments(res: MeteorResources, entries: Sequence[Entry],
                     segments: Sequence[Sequence[Sequence[str]]]) -> tuple:
    """The extension's arguments but `out` (words, table, segments, params): see `_meteor_align.c`."""
    return run_arguments(res, segments).with_table(entries)


# Below this many segments per thread, one call is faster than splitting the run.
SEGMENTS_PER_THREAD = 1000


def native_stats(arguments: tuple, threads: int | None = None) -> np.ndarray:
    """Runs the extension on `native_arguments`: (segments, 23) statistics. Segments are
    independent and the extension aligns without the GIL, so contiguous slices of them run on
    `threads` threads (default: one per available core, at most 8)."""
    if _meteor_align is None:
        raise RuntimeError("the C aligner (vlbench.tasks.captioning.meteor._meteor_align) is not built")
    words, table, (token_offsets, token_ids, segment_offsets), params = arguments
    n = len(segment_offsets) - 1
    out = np.zeros((n, METEOR_STATS), dtype=np.float64)
    k = max(1, min(threads or _available_cores(), 8, n // SEGMENTS_PER_THREAD))
    if k == 1:
        _meteor_align.segment_stats(*arguments, out.reshape(-1))
        return out
    bounds = [n * i // k for i in range(k + 1)]

    def part(lo: int, hi: int) -> None:
        seq_lo, seq_hi = int(segment_offsets[lo]), int(segment_offsets[hi])
        tok_lo, tok_hi = int(token_offsets[seq_lo]), int(token_offsets[seq_hi])
        segments = (token_offsets[seq_lo : seq_hi + 1] - tok_lo, token_ids[tok_lo:tok_hi],
                    segment_offsets[lo : hi + 1] - seq_lo)
        _meteor_align.segment_stats(words, table, segments, params, out[lo:hi].reshape(-1))

    with ThreadPoolExecutor(max_workers=k) as pool:
        for done in [pool.submit(part, lo, hi) for lo, hi in zip(bounds, bounds[1:])]:
            done.result()  # in segment order: the first failing slice's error is raised
    return out


def _available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
