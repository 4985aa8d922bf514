"""The C aligner (`meteor/native.py`, `_meteor_align.c`) against the Python aligner of
`meteor/aligner.py` (the oracle, itself equal to the jar): all 23 statistics of every segment, bit for
bit, on the hard cases and fidelity sets of the jar tests, randomised segments (small vocabularies
of synonyms, stems, hash-colliding words and paraphrase entries: ties, repeats, overlapping and
empty paraphrases, empty hypotheses, captions of 70-300 words), and the real caption sets; then
its errors, argument checks and buffer hygiene, and the choice of aligner."""

from __future__ import annotations

import array
import os
import random
import sys

import numpy as np
import pytest
import realdata
from conftest import SETS, generated_set
from meteor_cases import hard_cases
from meteor_index import real_index_cache

from vlbench.tasks.captioning.java import JavaUnavailable, meteor_jar
from vlbench.tasks.captioning.meteor import METEOR_STATS, MeteorProcess, score_line
from vlbench.tasks.captioning.meteor import native as meteor_native
from vlbench.tasks.captioning.meteor.python_meteor import PythonMeteor
from vlbench.tasks.captioning.meteor.resources import java_hash, load_resources

needs_c = pytest.mark.skipif(not meteor_native.built(), reason="the C aligner is not built (no C compiler)")


def _jar():
    try:
        return meteor_jar()
    except JavaUnavailable as exc:  # pycocoevalcap (the captions extra) is not installed
        pytest.skip(str(exc))


def _both(stats_of_lines, lines: list[str], monkeypatch) -> tuple[np.ndarray, np.ndarray]:
    monkeypatch.setenv("VLBENCH_METEOR_ALIGNER", "python")
    py = stats_of_lines(lines)
    monkeypatch.setenv("VLBENCH_METEOR_ALIGNER", "c")
    c = stats_of_lines(lines)
    return py, c


def _assert_bit_equal(py: np.ndarray, c: np.ndarray, lines: list[str]) -> None:
    assert py.shape == c.shape == (len(lines), METEOR_STATS)
    bad = np.flatnonzero(np.any(py.view(np.int64) != c.view(np.int64), axis=1))
    assert bad.size == 0, [(lines[i], py[i].tolist(), c[i].tolist()) for i in bad[:3]]


def _real_table_check(cands: list[str], refs: list[list[str]], monkeypatch) -> np.ndarray:
    _jar()
    lines = [score_line(h, r) for h, r in zip(cands, refs)]
    with MeteorProcess(cache=real_index_cache(), backend="python") as mp:
        mp.start()
        assert mp._python is not None
        py, c = _both(mp._python.stats_of_lines, lines, monkeypatch)
    _assert_bit_equal(py, c, lines)
    return c


@needs_c
def test_hard_cases_and_fidelity_sets_equal_the_python_aligner(monkeypatch):
    cands, refs = hard_cases(random.Random(22))
    c = _real_table_check(cands, refs, monkeypatch)
    for k in range(4):  # every module matched somewhere
        assert c[:, 4 + 4 * k : 8 + 4 * k].sum() > 0, k
    for sc, sr in SETS.values():
        _real_table_check(sc, sr, monkeypatch)
    gc, gr = generated_set(400, seed=22, adversarial_share=0.3)
    _real_table_check(gc, gr, monkeypatch)


@needs_c
@pytest.mark.skipif(not realdata.available(), reason="../shared/realdata is absent")
def test_real_caption_sets_equal_the_python_aligner(monkeypatch):
    for name in realdata.SETS:
        hyps, refs = realdata.pycoco_tokenized(name)
        _real_table_check(hyps, refs, monkeypatch)


# Words that meet every matcher: synonyms across stems, irregular forms, suffix rules, function
# words; "aё"/"bв" have the same Java hash code (31*97+1105 == 31*98+1074), an exact match to the jar.
POOL = [
    "a", "the", "of", "on", "in", "and", "is", "to", "man", "men", "woman", "person", "people", "child",
    "children", "kid", "dog", "dogs", "puppy", "car", "cars", "automobile", "auto", "mouse", "mice", "box",
    "boxes", "lady", "ladies", "ride", "riding", "rides", "rode", "sitting", "sits", "seated", "big", "large",
    "huge", "small", "little", "street", "road", "photo", "picture", "image", "bus", "buses", "sky", "skies",
    "two", "2", "glass", "grass", "aё", "bв",
]


def _table(rng: random.Random, words: list[str], n: int, empty_paraphrases: bool) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Entries over `words` (plus words no caption has): overlapping phrases (prefixes of each
    other), repeated entries, empty phrases, and empty paraphrases when asked."""
    vocab = [*words, "zebra", "unicorn"]
    out: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for _ in range(n):
        phrase = tuple(rng.choice(vocab) for _ in range(rng.choice((0, 1, 1, 2, 2, 3))))
        k = rng.choice((0, 1, 1, 2, 3)) if empty_paraphrases else rng.choice((1, 1, 2, 3))
        para = tuple(rng.choice(vocab) for _ in range(k))
        out.append((phrase, para))
        if phrase and rng.random() < 0.3:  # a longer phrase starting with this one
            out.append(((*phrase, rng.choice(vocab)), para[::-1] or para))
        if rng.random() < 0.1:
            out.append(out[rng.randrange(len(out))])
    return out


def _segments(rng: random.Random, n: int, long_share: float) -> tuple[list[str], list[list[str]]]:
    cands: list[str] = []
    refs: list[list[str]] = []
    for _ in range(n):
        if rng.random() < long_share:  # the beam prunes, bitsets span several 64-bit words
            words = rng.sample(POOL, 40)
            lo, hi = 70, 300
        else:  # few words: repeats and equal-scoring alignments
            words = rng.sample(POOL, rng.randint(3, 10))
            lo, hi = 0, 14

        def cap(words: list[str] = words, lo: int = lo, hi: int = hi) -> str:
            return " ".join(rng.choice(words) for _ in range(rng.randint(lo, hi)))

        cands.append(cap())
        refs.append([cap() for _ in range(rng.randint(1, 5))])
    return cands, refs


@needs_c
def test_random_segments_equal_the_python_aligner(monkeypatch):
    rng = random.Random(2222)
    jar = _jar()
    assert java_hash("aё") == java_hash("bв")
    long_seen = 0
    for round_ in range(6):
        cands, refs = _segments(rng, 150, long_share=0.03 if round_ < 2 else 0.0)
        entries = _table(rng, POOL, 60, empty_paraphrases=False)
        meteor = PythonMeteor(jar, None, None, entries=entries)
        lines = [score_line(h, r) for h, r in zip(cands, refs)]
        py, c = _both(meteor.stats_of_lines, lines, monkeypatch)
        _assert_bit_equal(py, c, lines)
        assert c[:, 16:20].sum() > 0  # paraphrase matches
        long_seen += int((c[:, 1] >= 70).sum())
    assert long_seen > 0


@needs_c
def test_empty_paraphrases_equal_the_python_aligner_or_fail_alike(monkeypatch):
    """An empty paraphrase matches at every position of the other line; on the hypothesis side
    that is a match of no reference words, which the jar would loop on if the alignment keeps it:
    both aligners raise the same RuntimeError there, segment by segment."""
    rng = random.Random(7)
    jar = _jar()
    equal = failed = 0
    for _ in range(4):
        cands, refs = _segments(rng, 60, long_share=0.0)
        meteor = PythonMeteor(jar, None, None, entries=_table(rng, POOL, 40, empty_paraphrases=True))
        for h, r in zip(cands, refs):
            lines = [score_line(h, r)]
            outcome = []
            for aligner in ("python", "c"):
                monkeypatch.setenv("VLBENCH_METEOR_ALIGNER", aligner)
                try:
                    outcome.append(meteor.stats_of_lines(lines))
                except RuntimeError as exc:
                    outcome.append(str(exc))
            if isinstance(outcome[0], str):
                assert outcome[0] == outcome[1]
                failed += 1
            else:
                _assert_bit_equal(outcome[0], outcome[1], lines)
                equal += 1
    assert equal > 100 and failed > 5


@needs_c
def test_a_match_of_no_reference_words_is_the_same_runtime_error(monkeypatch):
    meteor = PythonMeteor(_jar(), None, None, entries=[(("dog",), ())])
    for aligner in ("python", "c"):
        monkeypatch.setenv("VLBENCH_METEOR_ALIGNER", aligner)
        with pytest.raises(RuntimeError, match="a paraphrase match of no reference words"):
            meteor.stats_of_lines([score_line("dog", ["cat"])])


def test_the_c_aligner_is_built_where_ci_runs():
    """CI builds the extension (a C compiler is there): a broken build must not pass unnoticed as
    the slower Python fallback."""
    if not meteor_native.built():
        if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
            pytest.fail("CI is set but vlbench.tasks.captioning._meteor_align is not built")
        pytest.skip("the C aligner is not built (no C compiler)")
    assert meteor_native.use_native()


def test_the_aligner_is_chosen_by_its_variable(monkeypatch):
    monkeypatch.setenv("VLBENCH_METEOR_ALIGNER", "python")
    assert not meteor_native.use_native()
    monkeypatch.setenv("VLBENCH_METEOR_ALIGNER", "fortran")
    with pytest.raises(ValueError, match="VLBENCH_METEOR_ALIGNER='fortran' is not one of c, python"):
        meteor_native.use_native()
    monkeypatch.setattr(meteor_native, "_meteor_align", None)
    monkeypatch.delenv("VLBENCH_METEOR_ALIGNER")
    assert not meteor_native.use_native()  # not built: the Python aligner
    monkeypatch.setenv("VLBENCH_METEOR_ALIGNER", "c")
    with pytest.raises(RuntimeError, match="the C aligner .* is not built"):
        meteor_native.use_native()


@needs_c
def test_python_aligner_when_forced(monkeypatch):
    def refuse(*args: object) -> None:
        raise AssertionError("the C aligner ran")

    meteor = PythonMeteor(_jar(), None, None, entries=[])
    monkeypatch.setattr(meteor_native, "native_stats", refuse)
    monkeypatch.setenv("VLBENCH_METEOR_ALIGNER", "python")
    out = meteor.stats_of_lines([score_line("a dog", ["a dog"])])
    assert out[0, 21] == out[0, 22] == 2.0
    monkeypatch.delenv("VLBENCH_METEOR_ALIGNER")
    with pytest.raises(AssertionError, match="the C aligner ran"):
        meteor.stats_of_lines([score_line("a dog", ["a dog"])])


# The raw entry point: one segment, reference "x y", hypothesis "y", two words, no table.
def _args(**change: object) -> list[object]:
    words = [np.array([1, 2], np.int32), np.array([1, 2], np.int32), np.zeros(2, np.uint8),
             np.zeros(3, np.int64), np.zeros(0, np.int64)]
    table = [np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(1, np.int64), np.zeros(0, np.int32)]
    segments = [np.array([0, 2, 3], np.int64), np.array([0, 1, 1], np.int32), np.array([0, 2], np.int64)]
    params = (0.85, 0.2, 0.6, 0.75, 1.0, 0.6, 0.8, 0.6)
    out = np.zeros(METEOR_STATS)
    groups = {"words": words, "table": table, "segments": segments}
    for key, value in change.items():
        if key == "out":
            continue
        group, k = key.rsplit("_", 1)
        groups[group][int(k)] = value  # type: ignore[index]
    return [tuple(words), tuple(table), tuple(segments), params, change.get("out", out)]


@needs_c
def test_the_entry_point_checks_its_arrays():
    from vlbench.tasks.captioning.meteor import _meteor_align as ext  # type: ignore[attr-defined]

    args = _args()
    ext.segment_stats(*args)
    assert args[-1][:2].tolist() == [1.0, 2.0] and args[-1][21] == args[-1][22] == 1.0
    bad = {
        "must be a contiguous int32 array": _args(words_0=np.array([1, 2], np.int64)),
        "one item per word": _args(words_1=np.array([1], np.int32)),
        "synset offsets end past": _args(words_3=np.array([0, 1, 1], np.int64)),
        "not strictly ascending": _args(words_3=np.array([0, 2, 2], np.int64), words_4=np.array([5, 5], np.int64)),
        "token id 7": _args(segments_1=np.array([0, 7, 1], np.int32)),
        "token offsets must not decrease": _args(segments_0=np.array([0, 2, 1], np.int64)),
        "segment 0 has no hypothesis": _args(segments_2=np.array([0, 0], np.int64)),
        "segment offsets end past": _args(segments_2=np.array([0, 3], np.int64)),
        "phrase offsets must start at 0": _args(table_0=np.array([1], np.int64)),
        "out must hold 23": _args(out=np.zeros(22)),
    }
    for message, a in bad.items():
        with pytest.raises(ValueError, match=message):
            ext.segment_stats(*a)
    with pytest.raises(BufferError):
        ext.segment_stats(*_args(out=b"\0" * 8 * METEOR_STATS))  # read-only
    with pytest.raises(TypeError):
        ext.segment_stats(1, 2, 3, 4, 5)


@needs_c
def test_no_buffer_or_reference_is_kept_after_errors():
    """Every buffer taken is released on every path (an array.array with an export cannot grow),
    and no reference leaks (reference counts unchanged after many failing calls)."""
    from vlbench.tasks.captioning.meteor import _meteor_align as ext  # type: ignore[attr-defined]

    hashes = array.array("i", [1, 2])
    out = np.zeros(METEOR_STATS)
    good = _args(words_0=hashes, out=out)
    bad_tokens = _args(words_0=hashes, segments_1=np.array([0, 9, 1], np.int32), out=out)
    bad_out = _args(words_0=hashes, out=array.array("d", [0.0] * 5))
    before = sys.getrefcount(hashes), sys.getrefcount(out)
    for _ in range(200):
        ext.segment_stats(*good)
        with pytest.raises(ValueError):
            ext.segment_stats(*bad_tokens)
        with pytest.raises(ValueError):
            ext.segment_stats(*bad_out)
    assert (sys.getrefcount(hashes), sys.getrefcount(out)) == before
    hashes.append(3)  # raises BufferError if an export was left behind
    bad_out[-1].append(0.0)  # type: ignore[union-attr]


@needs_c
def test_segments_split_over_threads_give_the_same_statistics(monkeypatch):
    """Contiguous slices of the segments on several threads (the extension aligns without the
    GIL): the same statistics as one call, bit for bit, for any number of slices; a failing slice
    raises the single call's error."""
    rng = random.Random(31)
    res = load_resources(str(_jar()))
    cands, refs = _segments(rng, 300, long_share=0.05)
    meteor = PythonMeteor(_jar(), None, None)
    segments = meteor._tokens([score_line(h, r) for h, r in zip(cands, refs)])
    arguments = meteor_native.native_arguments(res, _table(rng, POOL, 60, empty_paraphrases=False), segments)
    one = meteor_native.native_stats(arguments, threads=1)
    monkeypatch.setattr(meteor_native, "SEGMENTS_PER_THREAD", 1)
    for threads in (2, 3, 7, 299, 300):
        _assert_bit_equal(one, meteor_native.native_stats(arguments, threads=threads), [""] * len(cands))
    # the last segment fails: an empty paraphrase of a hypothesis word
    segments.append([["cat"], ["dog"]])
    failing = meteor_native.native_arguments(res, [(("dog",), ())], segments)
    for threads in (1, 2, 3):
        with pytest.raises(RuntimeError, match="a paraphrase match of no reference words"):
            meteor_native.native_stats(failing, threads=threads)
