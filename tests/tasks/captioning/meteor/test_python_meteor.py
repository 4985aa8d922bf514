"""METEOR in Python (`meteor/python_meteor.py`, its aligner `meteor/aligner.py`) against the Meteor 1.5 jar, statistic by statistic: every
segment of the 5 real caption sets, the fidelity sets of the other tests, and generated hard cases
(repeated words, equal-scoring alignments, synonyms across stems, overlapping and multi-word
paraphrases, empty and one-word hypotheses, numbers, hyphens, non-ASCII words, hash-colliding
words, captions long enough for the beam to prune). The jar comparisons need Java; the checks
without it pin values established with the jar and pycocoevalcap."""

from __future__ import annotations

import random

import numpy as np
import pytest
import realdata
from conftest import HAVE_JAVA, SETS, generated_set, needs_java, refs_of
from meteor_cases import hard_cases
from meteor_index import real_index_cache

from vlbench.tasks.captioning.meteor import MeteorProcess, meteor_aggregate, meteor_from_stats


def _both(cands: list[str], refs: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
    cache = real_index_cache()
    with MeteorProcess(cache=cache, backend="python") as py:
        ours = py.stats(cands, refs)
    with MeteorProcess(cache=cache, backend="jar") as jar:
        theirs = jar.stats(cands, refs)
    return ours, theirs


def _assert_equal(ours: np.ndarray, theirs: np.ndarray, cands: list[str], refs: list[list[str]]) -> None:
    bad = np.flatnonzero(np.any(ours != theirs, axis=1))
    assert bad.size == 0, [(cands[i], refs[i], ours[i].tolist(), theirs[i].tolist()) for i in bad[:3]]
    agg_ours = float(meteor_from_stats(meteor_aggregate(ours)))
    agg_theirs = float(meteor_from_stats(meteor_aggregate(theirs)))
    assert agg_ours == agg_theirs


@needs_java
@pytest.mark.skipif(not realdata.available(), reason="../shared/realdata is absent")
def test_real_caption_sets_equal_the_jar():
    """All 42,657 real captions (8,906 segments), PTB-tokenized as pycocoevalcap does."""
    total = 0
    for name in realdata.SETS:
        hyps, refs = realdata.pycoco_tokenized(name)
        total += len(hyps) + sum(len(r) for r in refs)
        _assert_equal(*_both(hyps, refs), hyps, refs)
    assert total == 42_657


@needs_java
def test_fidelity_sets_equal_the_jar():
    for cands, refs in SETS.values():
        _assert_equal(*_both(cands, refs), cands, refs)
    cands, refs = generated_set(400, seed=22, adversarial_share=0.3)
    cands = [c.replace("\n", " ").replace("\r", " ") for c in cands]
    refs = [[r.replace("\n", " ").replace("\r", " ") for r in rs] for rs in refs]
    _assert_equal(*_both(cands, refs), cands, refs)


@needs_java
def test_generated_hard_cases_equal_the_jar():
    cands, refs = hard_cases(random.Random(22))
    ours, theirs = _both(cands, refs)
    _assert_equal(ours, theirs, cands, refs)
    # every module matched somewhere (columns: exact 4-7, stem 8-11, synonym 12-15, paraphrase 16-19)
    for k in range(4):
        assert theirs[:, 4 + 4 * k : 8 + 4 * k].sum() > 0, k


def test_meteor_is_computed_without_java(monkeypatch):
    """VLBENCH_JAVA=none: METEOR comes from Python, equal to pycocoevalcap's value for the worked
    example (0.4645428314, per image 0.2859817575 and 1.0)."""
    from vlbench.tasks.captioning.scoring import score_captions

    monkeypatch.setenv("VLBENCH_JAVA", "none")
    monkeypatch.setenv("VLBENCH_METEOR_CACHE", str(real_index_cache()))
    cands, refs = SETS["seed004"]
    s = score_captions(cands, refs_of(refs), spice=False)
    assert s.scores["METEOR"] == pytest.approx(0.4645428314, abs=1e-9)
    t = s.items["images"]
    np.testing.assert_allclose(t.values[:, t.columns.index("METEOR@image")], [0.2859817575, 1.0], atol=1e-9)
    assert "METEOR" not in s.extra.get("unavailable", {})


def test_unknown_backend_is_a_clear_error(monkeypatch):
    from vlbench.tasks.captioning.meteor import MeteorUnavailable

    monkeypatch.setenv("VLBENCH_METEOR", "perl")
    with pytest.raises(MeteorUnavailable, match="VLBENCH_METEOR='perl' is not one of python, jar"):
        MeteorProcess()


@pytest.mark.parametrize("odd_lines", [False, True])
def test_read_entries_gives_the_table_words(tmp_path, odd_lines):
    """The kept entries' words as the jar's StringTokenizer reads them, in table order, from the
    index's copy of the table: canonical lines (the fast split), and tables with tabs, form feeds,
    repeated, leading and trailing blanks, empty phrases and paraphrases (the tokenizer's split)."""
    import gzip

    from vlbench.tasks.captioning.meteor import paraphrase_index
    from vlbench.tasks.captioning.meteor.python_meteor import load_full_table, read_entries

    rng = random.Random(9)
    words = ["a", "man", "café", "x-ray", "'s", "ﬁ", "dog"]
    entries = [(f"0.{k}", " ".join(rng.choices(words, k=rng.randint(1, 4))), " ".join(rng.choices(words, k=rng.randint(1, 4))))
               for k in range(300)]
    if odd_lines:
        entries += [("1", "  a   man ", "dog"), ("1", "a\tman", "x-ray\fdog"), ("1", "", "dog"), ("1", "man", ""), ("1", " ", "a")]
        rng.shuffle(entries)
    table = tmp_path / "t.gz"
    with gzip.open(table, "wt", encoding="utf-8", newline="\n") as f:
        f.writelines(f"{p}\n{a}\n{b}\n" for p, a, b in entries)
    index = paraphrase_index.ensure_index(table, tmp_path / "cache")
    everything = load_full_table(table)
    for keep in (np.arange(len(entries)), np.array([0, 5, 17, len(entries) - 1]), np.zeros(0, dtype=np.int64)):
        assert read_entries(index, keep) == [everything[e] for e in keep.tolist()]
    if odd_lines:
        assert ((), ("dog",)) in everything and (("a", "man"), ("x-ray", "dog")) in everything


def _long_phrase_table(path, cands, refs) -> None:
    """A table whose phrases reach 9 words (past the n-gram length a first run keys before its
    index is ready) and whose other entries come from the captions' own words."""
    import gzip

    rng = random.Random(8)
    words = sorted({w for c in cands for w in c.lower().split()})
    entries = [("0.9", "a man rides a brown horse on the beach", "a person is riding an animal near water"),
               ("0.8", "the quick brown fox jumps over the lazy dog", "a fox"),
               ("0.7", "a dog", "the quick brown fox jumps over the lazy dog")]
    entries += [(f"0.{k}", " ".join(rng.choices(words, k=rng.randint(1, 3))), " ".join(rng.choices(words, k=rng.randint(1, 3))))
                for k in range(400)]
    with gzip.open(path, "wt", encoding="utf-8", newline="\n") as f:
        f.writelines(f"{p}\n{a}\n{b}\n" for p, a, b in entries)


@pytest.mark.parametrize("aligner", ["c", "python"])
def test_first_run_equals_a_cached_run(tmp_path, monkeypatch, aligner):
    """The first run on a machine (its index built in a thread while the run prepares, with phrases
    longer than the n-grams keyed before the index is ready) gives the statistics and the kept
    entries of every later run, and with Java, those of the jar reading the same table."""
    from vlbench.tasks.captioning.meteor import native

    if aligner == "c" and not native.built():
        pytest.skip("the C aligner is not built")
    monkeypatch.setenv("VLBENCH_METEOR_ALIGNER", aligner)
    cands, refs = generated_set(150, seed=31, adversarial_share=0.3)
    cands += ["a man rides a brown horse on the beach", "the quick brown fox jumps over the lazy dog"]
    refs += [["a person is riding an animal near water", "x"], ["a dog", "a fox"]]
    table = tmp_path / "para.gz"
    _long_phrase_table(table, cands, refs)
    cache = tmp_path / "cache"
    runs = []
    for _ in range(2):
        with MeteorProcess(table=table, cache=cache, backend="python") as proc:
            runs.append((proc.stats(cands, refs), proc.last_table_entries, proc.index))
    (first, n_first, index), (later, n_later, loaded) = runs
    with MeteorProcess(table=table, cache=tmp_path / "empty", backend="python") as proc:  # a first run
        assert proc.stats([], []).shape == (0, 23)
    with MeteorProcess(table=table, cache=tmp_path / "empty", backend="python") as proc:  # a later one
        assert proc.stats([], []).shape == (0, 23)
    assert index.max_n == 9 and index.root == loaded.root is not None
    np.testing.assert_array_equal(first, later)
    assert n_first == n_later > 3
    assert first[-2:, 16:20].sum() > 0  # the 9-word phrases matched
    if HAVE_JAVA:
        with MeteorProcess(table=table, filtered=False, backend="jar") as jar:
            np.testing.assert_array_equal(first, jar.stats(cands, refs))


def test_a_table_that_cannot_be_indexed_is_a_clear_error(tmp_path):
    import gzip

    from vlbench.tasks.captioning.meteor import MeteorUnavailable

    table = tmp_path / "para.gz"
    table.write_bytes(gzip.compress(b"0.5\na man\na guy\r\n"))
    built = MeteorProcess(table=table, cache=tmp_path / "cache", backend="python")
    with built as proc, pytest.raises(MeteorUnavailable, match="paraphrase index could not be built.*carriage returns"):
        proc.stats(["a man"], [["a guy"]])


def test_a_run_pauses_the_cycle_collector_and_leaves_it_as_it_was(tmp_path, monkeypatch):
    """Python's cycle collector is paused while a run is scored (its passes over the run's words
    found nothing) and is on again afterwards, also after an error; one the caller turned off stays
    off."""
    import gc
    import gzip

    from vlbench.tasks.captioning.meteor import MeteorUnavailable, python_meteor

    seen = []
    tokens = python_meteor.PythonMeteor._tokens

    def spy(self, lines):
        seen.append(gc.isenabled())
        return tokens(self, lines)

    monkeypatch.setattr(python_meteor.PythonMeteor, "_tokens", spy)
    good, bad = tmp_path / "good.gz", tmp_path / "bad.gz"
    good.write_bytes(gzip.compress(b"0.5\na man\na guy\n"))
    bad.write_bytes(gzip.compress(b"0.5\na man\na guy\r\n"))
    assert gc.isenabled()
    with MeteorProcess(table=good, cache=tmp_path / "cache", backend="python") as proc:
        assert proc.stats(["a man"], [["a guy"]]).shape == (1, 23)
    assert seen == [False] and gc.isenabled()
    with MeteorProcess(table=bad, cache=tmp_path / "cache", backend="python") as proc, \
            pytest.raises(MeteorUnavailable):
        proc.stats(["a man"], [["a guy"]])
    assert seen == [False, False] and gc.isenabled()
    gc.disable()
    try:
        with MeteorProcess(table=good, cache=tmp_path / "cache", backend="python") as proc:
            proc.stats(["a man"], [["a guy"]])
        assert not gc.isenabled()
    finally:
        gc.enable()
