"""METEOR without Java: the Meteor 1.5 jar's 23 statistics for a run's SCORE lines, segment by
segment, equal to the jar's (`PythonMeteor.stats_of_lines`).

A run: the words of every segment (`paraphrase.meteor_tokens`, the jar's normaliser), the
paraphrase table entries that can match among them (`paraphrase_index`: a first run on a machine
builds the index meanwhile, in a thread), then each segment aligned against each of its
references (the C aligner, `native.py`, where it is built; else `aligner.py` in Python, on forked
workers for large runs), keeping the statistics of the first reference with the strictly highest
score.
"""

from __future__ import annotations

import gzip
import multiprocessing
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vlbench.jsonio import gc_paused
from vlbench.tasks.captioning.meteor import native, paraphrase, paraphrase_index
from vlbench.tasks.captioning.meteor.aligner import Aligner, ParaphraseTrie, segment_score
from vlbench.tasks.captioning.meteor.resources import load_resources, read_lines
from vlbench.tasks.captioning.meteor.scores import METEOR_STATS


def read_entries(index: paraphrase_index.ParaphraseIndex, entries: np.ndarray) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The (phrase, paraphrase) words of the given table entries, in table order."""
    if len(entries) == 0:
        return []
    text = index.triples(entries).decode("utf-8")
    # Each triple is three lines, each ending in a newline (the index build checked the table: no
    # carriage returns, a line count that is a multiple of 3, a final newline added).
    lines = text.split("\n")
    if "\t" in text or "\f" in text or "  " in text or "\n " in text or " \n" in text or text.startswith(" "):
        words = [tuple(paraphrase.string_tokens(line)) for line in lines]
    else:  # the shipped table: words joined by single spaces, as StringTokenizer reads them
        words = [tuple(line.split(" ")) if line else () for line in lines]
    return list(zip(words[1::3], words[2::3]))


def load_full_table(table_gz: Path) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Every entry of a paraphrase table (for small tables, e.g. in tests)."""
    with gzip.open(table_gz, "rb") as g:
        lines = read_lines(g.read())
    return [(tuple(paraphrase.string_tokens(lines[k + 1])), tuple(paraphrase.string_tokens(lines[k + 2])))
            for k in range(0, len(lines) - 2, 3)]



class PythonMeteor:
    """The jar's statistics for (hypothesis, references) pairs, in Python."""

    def __init__(self, jar: Path, table: Path | None,
                 index: paraphrase_index.ParaphraseIndex | paraphrase_index.IndexBuild | None,
                 entries: Sequence[tuple[tuple[str, ...], tuple[str, ...]]] | None = None) -> None:
        self.jar = str(jar)
        self.res = load_resources(self.jar)
        self.table = table
        self.index = index
        self.entries = entries  # a fixed table (tests); else filtered from `index` per run
        self.last_table_entries: int | None = None
        self._build: paraphrase_index.IndexBuild | None = None  # a first run's index build, once waited for
        self.workers = max(1, min(2, os.cpu_count() or 1))  # as the jar path's JVMs

    def _tokens(self, lines: Sequence[str]) -> list[list[list[str]]]:
        nbp = self.res.nbp
        plain = paraphrase.PLAIN_PART.fullmatch
        memo: dict[str, list[str]] = {}  # only for the normaliser's parts: the others are cheaper to redo
        out = []
        for line in lines:
            seg = []
            for part in paraphrase.score_parts(line):
                if plain(part) and "DOTMULTI" not in part:  # `meteor_tokens`'s fast path, inlined
                    seg.append(part.lower().split())
                    continue
                toks = memo.get(part)
                if toks is None:
                    toks = memo[part] = paraphrase.meteor_tokens(part, nbp)
                seg.append(toks)
            out.append(seg)
        return out

    def _ngram_keys(self, token_lists: list[list[str]]) -> list[np.ndarray]:
        """The run's n-gram keys by length, up to the index's longest phrase; on the first run on
        a machine, whose index is still being built, up to the likely longest one (`_table_entries`
        keys any longer ones once the index says how long its phrases are)."""
        index = self.index
        if isinstance(index, paraphrase_index.IndexBuild):
            return paraphrase.ngram_key_groups(token_lists, paraphrase_index.LIKELY_MAX_N)
        assert index is not None
        return paraphrase.ngram_key_groups(token_lists, index.max_n)

    def _table_entries(self, token_lists: list[list[str]], groups: list[np.ndarray]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        """The table entries that can match among these words (waits for a first run's index)."""
        index = self.index
        if isinstance(index, paraphrase_index.IndexBuild):
            self._build = index
            index = self.index = index.result()
            if index.max_n >= len(groups):
                groups = paraphrase.ngram_key_groups(token_lists, index.max_n)
        assert index is not None
        return read_entries(index, index.keep(np.concatenate(groups[: index.max_n + 1])))

    def stats_of_lines(self, lines: Sequence[str]) -> np.ndarray:
        """Statistics for SCORE lines (`process.score_line`): the last part is the hypothesis.
        Everything that does not need the paraphrase table comes first: a first run's index is
        built meanwhile."""
        # a run makes millions of small lists and strings (its words) that reference counting
        # frees; the cycle collector's passes over them found nothing and took about 0.1 s of a
        # 5,000-image run (perf)
        with gc_paused():
            return self._stats_of_lines(lines)

    def _stats_of_lines(self, lines: Sequence[str]) -> np.ndarray:
        segments = self._tokens(lines)
        for n, seg in enumerate(segments):
            if not seg:
                raise ValueError(f"statement {n} has no hypothesis")
        in_c = native.use_native()
        from_index = self.entries is None and self.index is not None
        flat = [toks for seg in segments for toks in seg] if from_index else []
        groups = self._ngram_keys(flat) if from_index else []
        run = native.run_arguments(self.res, segments) if in_c else None
        if self.entries is not None:
            entries = self.entries
        elif self.index is not None:
            entries = self._table_entries(flat, groups)
        else:
            entries = []
        self.last_table_entries = len(entries)
        if run is not None:  # the same algorithm in C: no workers needed
            return native.native_stats(run.with_table(entries))
        aligner = Aligner(self.res, ParaphraseTrie(entries) if entries else None)
        k = self.workers if len(segments) >= PARALLEL_MIN_SEGMENTS else 1
        if k > 1 and "fork" in multiprocessing.get_all_start_methods():
            if self._build is not None:  # no fork while its thread writes the index files
                self._build.wait()
            return _parallel_stats(aligner, segments, k)
        return _segment_stats(aligner, segments)


# Below this many segments one process is faster than starting workers.
PARALLEL_MIN_SEGMENTS = 1000
_WORK: tuple[Aligner, list[list[list[str]]]] | None = None  # what forked workers inherit


def _segment_stats(aligner: Aligner, segments: Sequence[Sequence[Sequence[str]]]) -> np.ndarray:
    """The jar's statistics of each segment: of its first reference with the strictly highest
    score."""
    out = np.zeros((len(segments), METEOR_STATS), dtype=np.float64)
    for n, seg in enumerate(segments):
        hyp, refs = seg[-1], seg[:-1]
        best: list[float] | None = None
        best_score = -1.0
        for ref in refs:
            st = aligner.stats(hyp, ref)
            sc = segment_score(st)
            if sc > best_score:
                best, best_score = st, sc
        if best is not None:
            out[n] = best
    return out


def _work_slice(bounds: tuple[int, int]) -> np.ndarray:
    assert _WORK is not None
    aligner, segments = _WORK
    return _segment_stats(aligner, segments[bounds[0] : bounds[1]])


def _parallel_stats(aligner: Aligner, segments: list[list[list[str]]], k: int) -> np.ndarray:
    """Segments are independent: `k` forked processes take contiguous slices (the aligner and
    its data are inherited, not pickled)."""
    global _WORK
    n = len(segments)
    bounds = [(n * i // k, n * (i + 1) // k) for i in range(k)]
    _WORK = (aligner, segments)
    try:
        with multiprocessing.get_context("fork").Pool(k) as pool:
            parts = pool.map(_work_slice, bounds)
    finally:
        _WORK = None
    return np.concatenate(parts, axis=0)
