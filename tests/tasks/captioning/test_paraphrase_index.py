"""The paraphrase table's index (`paraphrase_index.py`): the C pass (`_paraphrase_scan.c`) against
the numpy one and Python's own UTF-8 decoder, the matcher against a brute force, the first run's
build in a thread, and the cache."""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import zlib
from pathlib import Path

import numpy as np
import pytest

from vlbench.hashing import sha256_file
from vlbench.tasks.captioning import paraphrase as P
from vlbench.tasks.captioning import paraphrase_index as PI

needs_c = pytest.mark.skipif(PI._paraphrase_scan is None, reason="the C table pass is not built (no C compiler)")


@pytest.fixture(params=["c", "numpy"])
def scanner(request, monkeypatch):
    """Each test runs with the C pass and with numpy's."""
    if request.param == "c" and PI._paraphrase_scan is None:
        pytest.skip("the C table pass is not built (no C compiler)")
    if request.param == "numpy":
        monkeypatch.setattr(PI, "_paraphrase_scan", None)
    return request.param


def test_ci_builds_the_c_pass():
    if os.environ.get("CI") and PI._paraphrase_scan is None:
        pytest.fail("CI is set but vlbench.tasks.captioning._paraphrase_scan is not built")


def _write_table(path: Path, entries: list[tuple[str, str, str]]) -> None:
    with gzip.open(path, "wt", encoding="utf-8", newline="\n") as f:
        for prob, a, b in entries:
            f.write(f"{prob}\n{a}\n{b}\n")


WORDS = ["a", "man", "dog", "café", "x-ray", "'s", "ﬁ", "red", "bus", "𝔘nicode", "ж", "extraordinarily-long-word"]


def _entries(rng: random.Random, n: int, odd: bool = True) -> list[tuple[str, str, str]]:
    out = []
    for k in range(n):
        a = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))
        b = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))
        out.append((f"0.{k}", a, b))
    if odd:  # lines not in canonical form, and empty phrases: the jar tokenizes them with StringTokenizer
        out += [("1", "  a   man ", "dog"), ("1", "a\tman", "red\fbus"), ("1", "", "dog"), ("1", "man", ""),
                ("1", " ", "a"), ("1", "dog ", " dog"), ("1", "\ta", "a\f"), ("1", "x\x0by", "café  ж")]
        rng.shuffle(out)
    return out


def _tokens(line: str) -> tuple[str, ...]:
    return tuple(P.string_tokens(line))


@pytest.mark.parametrize("block", [1 << 21, 7, 64, 1000])
def test_index_matches_brute_force(tmp_path, monkeypatch, scanner, block):
    """Small gzip blocks make lines and entries straddle the blocks that the build decompresses and
    keys (and the key blocks the matcher reads)."""
    monkeypatch.setattr(PI, "_COMPRESSED_BLOCK", block)
    rng = random.Random(5)
    entries = _entries(rng, 400)
    table = tmp_path / "t.gz"
    _write_table(table, entries)
    root = tmp_path / "idx"
    root.mkdir()
    built = PI.build_index(table, root)
    loaded = PI.ParaphraseIndex.load(root)
    assert loaded.max_n == built.max_n == 5 and len(loaded) == len(built) == len(entries)
    np.testing.assert_array_equal(built.keys(), loaded.keys())
    for trial in range(30):
        lists = [[rng.choice(WORDS) for _ in range(rng.randint(0, 7))] for _ in range(rng.randint(1, 4))]
        grams = {()} | {tuple(t[i : i + n]) for t in lists for n in range(1, 6) for i in range(len(t) - n + 1)}
        want = [e for e, (_, a, b) in enumerate(entries) if _tokens(a) in grams and _tokens(b) in grams]
        run = P.ngram_keys(lists, loaded.max_n)
        assert built.keep(run).tolist() == want, trial
        assert loaded.keep(run).tolist() == want, trial
    # the subset file holds the kept triples verbatim, in file order
    keep = np.array([0, 3, len(entries) - 1])
    for index in (built, loaded):
        index.write_subset(keep, tmp_path / "sub.gz")
        text = gzip.decompress((tmp_path / "sub.gz").read_bytes()).decode()
        assert text == "".join(f"{entries[e][0]}\n{entries[e][1]}\n{entries[e][2]}\n" for e in keep)


def _scan(table: Path) -> PI._Scan:
    with open(os.devnull, "wb") as out:
        return PI.scan_table(table, out)


@needs_c
@pytest.mark.parametrize("block", [1 << 21, 13, 200])
def test_c_pass_equals_numpy_pass(tmp_path, monkeypatch, block):
    """Keys, entry offsets, line count and longest phrase, on tables with every kind of line (odd
    blanks, empty lines, 1-4 byte characters, lines shorter and longer than a word) cut anywhere
    into blocks; many odd lines in a row overflow the C pass's room for them (it goes on in a new
    round)."""
    monkeypatch.setattr(PI, "_COMPRESSED_BLOCK", block)
    rng = random.Random(block)
    alphabet = ["a", "b", " ", " ", "\t", "\f", "é", "ж", "€", "𝔘", "\x0b", "\x01", "-", "'"]
    entries = _entries(rng, 300)
    entries += [("p", "".join(rng.choices(alphabet, k=rng.randint(0, 30))), "".join(rng.choices(alphabet, k=rng.randint(0, 30))))
                for _ in range(300)]
    entries += [("1", " a", "b ")] * 100  # 200 odd lines in a row
    rng.shuffle(entries)
    table = tmp_path / "t.gz"
    _write_table(table, entries)
    c = _scan(table)
    monkeypatch.setattr(PI, "_paraphrase_scan", None)
    py = _scan(table)
    assert (c.lines, c.offset, c.max_n) == (py.lines, py.offset, py.max_n) == (3 * len(entries), c.offset, c.max_n)
    np.testing.assert_array_equal(np.concatenate(c.keys), np.concatenate(py.keys))
    np.testing.assert_array_equal(np.concatenate(c.starts), np.concatenate(py.starts))
    # and the keys are those of the lines as StringTokenizer reads them
    want = [P.bytes_key(" ".join(_tokens(x)).encode()) for _, a, b in entries for x in (a, b)]
    assert np.concatenate(c.keys).tolist() == want


@needs_c
def test_c_pass_validates_utf8_as_python_decodes():
    """The offset of the first byte that Python's strict UTF-8 decoder refuses, or -1: overlong
    forms, surrogates, code points past U+10FFFF, stray and missing continuation bytes."""
    scan = PI._paraphrase_scan
    pieces = [b"a", b" ", b"\xc2\x80", b"\xdf\xbf", b"\xe0\xa0\x80", b"\xed\x9f\xbf", b"\xee\x80\x80", b"\xef\xbf\xbf",
              b"\xf0\x90\x80\x80", b"\xf4\x8f\xbf\xbf", b"\xc0\xaf", b"\xc1\xbf", b"\xe0\x80\xaf", b"\xed\xa0\x80",
              b"\xf0\x80\x80\x80", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff", b"\x80", b"\xbf", b"\xc3",
              b"\xe2\x82", b"\xf0\x9f\x98", b"\n"]
    rng = random.Random(0)
    for trial in range(3000):
        text = b"".join(rng.choices(pieces, weights=[20, 5] + [1] * (len(pieces) - 2), k=rng.randint(0, 40))) + b"\n"
        starts = np.empty(len(text) + 1, dtype=np.int64)
        keys = np.empty(len(text) + 1, dtype=np.uint64)
        suspects = np.empty(2 * len(text) + 2, dtype=np.int64)
        consumed, *_, bad, _ = scan.scan_lines(text, trial, starts, keys, suspects)
        assert consumed == len(text)
        try:
            text.decode("utf-8")
            want = -1
        except UnicodeDecodeError as exc:
            want = exc.start
        assert bad == want, (trial, text)


@pytest.mark.parametrize(("content", "message"), [
    (b"0.5\na man\na guy\r\n", "carriage returns"),
    (b"0.5\na \xc3\x28man\na guy\n", "not UTF-8 (byte 6)"),
    (b"0.5\na man\na guy\n0.1\n", "not a multiple of 3"),
])
def test_malformed_tables_are_refused(tmp_path, scanner, content, message):
    table = tmp_path / "t.gz"
    table.write_bytes(gzip.compress(content))
    with pytest.raises(ValueError, match=re.escape(message)):
        _scan(table)


def test_tables_that_are_not_one_gzip_stream_are_refused(tmp_path, scanner):
    one = gzip.compress(b"0.5\na man\na guy\n")
    for name, data in [("two", one + one), ("junk", one + b"junk"), ("cut", one[:-9])]:
        table = tmp_path / f"{name}.gz"
        table.write_bytes(data)
        with pytest.raises((ValueError, zlib.error, EOFError, OSError)):
            _scan(table)


def test_a_table_without_a_final_newline_ends_with_its_last_line(tmp_path, scanner):
    table = tmp_path / "t.gz"
    table.write_bytes(gzip.compress(b"0.5\na man\na guy"))
    root = tmp_path / "idx"
    root.mkdir()
    index = PI.build_index(table, root)
    assert len(index) == 1 and index.triples(np.array([0])) == b"0.5\na man\na guy\n"


@needs_c
def test_matchers_agree_on_random_keys():
    """The C matcher (keys in blocks split anywhere, entries straddling them) against numpy's and a
    brute force: keys drawn from a small range so that phrases, paraphrases and run keys collide."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        n = int(rng.integers(0, 3000))
        keys = rng.integers(0, 5000, size=(n, 2), dtype=np.uint64) << np.uint64(rng.integers(0, 24))
        run = rng.choice(keys.reshape(-1), size=min(2 * n, 500)) if n else np.zeros(0, dtype=np.uint64)
        run = np.concatenate([run, rng.integers(0, 1 << 40, size=2000, dtype=np.uint64)])
        want = np.flatnonzero(np.isin(keys[:, 0], run) & np.isin(keys[:, 1], run))
        cuts = np.sort(rng.integers(0, 2 * n + 1, size=int(rng.integers(0, 6))))
        blocks = np.split(keys.reshape(-1), cuts)
        got = np.frombuffer(PI._paraphrase_scan.matching_entries(blocks, run), dtype=np.int64)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(PI.keep_numpy(keys, run), want)
    with pytest.raises(ValueError, match="two keys per entry"):
        PI._paraphrase_scan.matching_entries([np.zeros(3, dtype=np.uint64)], np.zeros(1, dtype=np.uint64))


# ----------------------------------------------------------------------------- first run, cache
def test_first_run_builds_in_a_thread(tmp_path, scanner):
    table = tmp_path / "t.gz"
    entries = _entries(random.Random(3), 200)
    _write_table(table, entries)
    cache = tmp_path / "cache"
    build = PI.open_index(table, cache)
    assert isinstance(build, PI.IndexBuild)
    first = build.result()  # usable as soon as the table is keyed
    index = build.wait()  # then written and renamed into place
    assert first is index and index.root is not None and index.root.parent == cache
    key = PI.index_key(sha256_file(table), table.stat().st_size)
    assert index.root.name == f"index-v{PI.FORMAT}-{key}"
    assert sorted(p.name for p in index.root.iterdir()) == ["keys.npy", "meta.json", "starts.npy", "table.txt"]
    again = PI.open_index(table, cache)  # the next run loads it
    assert isinstance(again, PI.ParaphraseIndex) and again.root == index.root
    np.testing.assert_array_equal(again.keys(), index.keys())
    assert again.triples(np.arange(len(entries))) == index.triples(np.arange(len(entries)))
    assert not [p for p in cache.iterdir() if p.name.startswith(".build-")]


def test_a_build_that_fails_is_reported_by_result(tmp_path, scanner):
    table = tmp_path / "t.gz"
    table.write_bytes(gzip.compress(b"0.5\na man\na guy\r\n"))
    build = PI.open_index(table, tmp_path / "cache")
    assert isinstance(build, PI.IndexBuild)
    with pytest.raises(PI.IndexBuildError, match="carriage returns"):
        build.result()
    with pytest.raises(PI.IndexBuildError):
        build.wait()
    assert list((tmp_path / "cache").iterdir()) == []  # its temporary folder is gone
    with pytest.raises(ValueError, match="carriage returns"):
        PI.ensure_index(table, tmp_path / "cache")


def test_an_index_that_cannot_be_saved_still_serves_the_run(tmp_path, monkeypatch):
    table = tmp_path / "t.gz"
    _write_table(table, [("0.5", "a man", "a guy")])

    def full_disk(index, root):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(PI, "_save", full_disk)
    build = PI.open_index(table, tmp_path / "cache")
    assert isinstance(build, PI.IndexBuild)
    with pytest.warns(RuntimeWarning, match="could not be saved.*next run builds it again"):
        index = build.wait()
    assert index.root is None and index.keep(P.ngram_keys([["a", "man"], ["a", "guy"]], 2)).tolist() == [0]
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(".build-")]
    monkeypatch.undo()
    assert isinstance(PI.open_index(table, tmp_path / "cache"), PI.IndexBuild)


def test_ensure_index_is_cached_and_keyed_by_content(tmp_path):
    table = tmp_path / "t.gz"
    _write_table(table, [("0.5", "a man", "a guy")])
    one = PI.ensure_index(table, tmp_path / "cache")
    assert PI.ensure_index(table, tmp_path / "cache").root == one.root
    _write_table(table, [("0.5", "a man", "a person")])
    assert PI.ensure_index(table, tmp_path / "cache").root != one.root
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(".build-")]


def test_a_touched_table_finds_its_index_by_content(tmp_path):
    """The memo of the table's sha256 is keyed by path, size and mtime: a table touched (or moved)
    is hashed again, and its index found rather than built again."""
    table = tmp_path / "t.gz"
    _write_table(table, [("0.5", "a man", "a guy")])
    root = PI.ensure_index(table, tmp_path / "cache").root
    os.utime(table, ns=(1, 1))
    found = PI.open_index(table, tmp_path / "cache")
    assert isinstance(found, PI.ParaphraseIndex) and found.root == root


@pytest.mark.parametrize(("fmt", "folder"), [(1, "index-{key}"), (2, "index-v2-{key}"), (3, "index-v3-{key}")])
def test_an_earlier_format_index_of_the_table_is_replaced(tmp_path, fmt, folder):
    """Formats 1 (polynomial hashes), 2 (no Bloom filter) and 3 (sorted phrases and a Bloom filter)
    are superseded: the same table's old folder goes once the new index exists; a folder vlbench
    did not write (other files inside) stays."""
    table = tmp_path / "t.gz"
    _write_table(table, [("0.5", "a man", "a guy")])
    cache = tmp_path / "cache"
    key = PI.index_key(sha256_file(table), table.stat().st_size)
    old = cache / folder.format(key=key)
    old.mkdir(parents=True)
    (old / "meta.json").write_text(json.dumps({"format": fmt}))
    (old / "table.txt").write_text("0.5\na man\na guy\n")
    (old / "bloom.npy").write_bytes(b"")
    PI.ensure_index(table, cache)
    assert not old.exists() and (cache / f"index-v{PI.FORMAT}-{key}" / "meta.json").is_file()
    other = tmp_path / "cache2"
    kept = other / folder.format(key=key)
    kept.mkdir(parents=True)
    (kept / "meta.json").write_text(json.dumps({"format": fmt}))
    (kept / "notes.txt").write_text("mine")
    PI.ensure_index(table, other)
    assert (kept / "notes.txt").read_text() == "mine"
    wrong = tmp_path / "cache3"
    other_format = wrong / folder.format(key=key)  # a folder of that name holding another format
    other_format.mkdir(parents=True)
    (other_format / "meta.json").write_text(json.dumps({"format": fmt + 7}))
    PI.ensure_index(table, wrong)
    assert other_format.exists()


@needs_c
def test_c_and_numpy_index_the_real_table_alike(monkeypatch):
    """The shipped 5.27-million-entry table: the same keys, offsets and longest phrase either way."""
    from vlbench.tasks.captioning.java import JavaUnavailable, meteor_jar

    try:
        table = meteor_jar().parent / "data" / "paraphrase-en.gz"
    except JavaUnavailable as exc:
        pytest.skip(str(exc))
    c = _scan(table)
    monkeypatch.setattr(PI, "_paraphrase_scan", None)
    py = _scan(table)
    assert (c.lines, c.offset, c.max_n) == (py.lines, py.offset, py.max_n) == (3 * 5_274_084, 272_201_058, 7)
    np.testing.assert_array_equal(np.concatenate(c.keys), np.concatenate(py.keys))
    np.testing.assert_array_equal(np.concatenate(c.starts), np.concatenate(py.starts))
