"""The paraphrase table's index (`paraphrase_index.py`, `paraphrase_table.py`): the C pass (`_paraphrase_scan.c`) against
the numpy one and Python's own UTF-8 decoder, the matcher against a brute force, the first run's
build in a thread, and the cache."""

from __future__ import annotations

import gzip
import json
import os
import random
import threading

import numpy as np
import pytest
from paraphrase_tables import WORDS, entries_of_every_kind, tokens, write_table

from vlbench.hashing import sha256_file
from vlbench.tasks.captioning.meteor import paraphrase as P
from vlbench.tasks.captioning.meteor import paraphrase_index as PI
from vlbench.tasks.captioning.meteor import paraphrase_table as PT

needs_c = pytest.mark.skipif(PI._paraphrase_scan is None, reason="the C table pass is not built (no C compiler)")


def test_ci_builds_the_c_pass():
    if os.environ.get("CI") and PI._paraphrase_scan is None:
        pytest.fail("CI is set but vlbench.tasks.captioning._paraphrase_scan is not built")


@pytest.mark.parametrize("block", [1 << 21, 7, 64, 1000])
def test_index_matches_brute_force(tmp_path, monkeypatch, scanner, block):
    """Small gzip blocks make lines and entries straddle the blocks that the build decompresses and
    keys (and the key blocks the matcher reads)."""
    monkeypatch.setattr(PT, "_COMPRESSED_BLOCK", block)
    rng = random.Random(5)
    entries = entries_of_every_kind(rng, 400)
    table = tmp_path / "t.gz"
    write_table(table, entries)
    root = tmp_path / "idx"
    root.mkdir()
    built = PI.build_index(table, root)
    loaded = PI.ParaphraseIndex.load(root)
    assert loaded.max_n == built.max_n == 5 and len(loaded) == len(built) == len(entries)
    np.testing.assert_array_equal(built.keys(), loaded.keys())
    for trial in range(30):
        lists = [[rng.choice(WORDS) for _ in range(rng.randint(0, 7))] for _ in range(rng.randint(1, 4))]
        grams = {()} | {tuple(t[i : i + n]) for t in lists for n in range(1, 6) for i in range(len(t) - n + 1)}
        want = [e for e, (_, a, b) in enumerate(entries) if tokens(a) in grams and tokens(b) in grams]
        run = P.ngram_keys(lists, loaded.max_n)
        assert built.keep(run).tolist() == want, trial
        assert loaded.keep(run).tolist() == want, trial
    # the subset file holds the kept triples verbatim, in file order
    keep = np.array([0, 3, len(entries) - 1])
    for index in (built, loaded):
        index.write_subset(keep, tmp_path / "sub.gz")
        text = gzip.decompress((tmp_path / "sub.gz").read_bytes()).decode()
        assert text == "".join(f"{entries[e][0]}\n{entries[e][1]}\n{entries[e][2]}\n" for e in keep)


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
    entries = entries_of_every_kind(random.Random(3), 200)
    write_table(table, entries)
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


def test_scorers_in_one_process_share_a_running_build(tmp_path, monkeypatch):
    """A second `open_index` while the first build runs gets that build, not a second pass over
    the table; once it is over, the index comes from the cache folder."""
    table = tmp_path / "t.gz"
    write_table(table, entries_of_every_kind(random.Random(4), 50))
    gate = threading.Event()
    scan = PT.scan_table

    def held_scan(*args):
        gate.wait(10)
        return scan(*args)

    monkeypatch.setattr(PI, "scan_table", held_scan)
    first = PI.open_index(table, tmp_path / "cache")
    assert isinstance(first, PI.IndexBuild) and first.running()
    assert PI.open_index(table, tmp_path / "cache") is first
    gate.set()
    index = first.wait()
    later = PI.open_index(table, tmp_path / "cache")
    assert isinstance(later, PI.ParaphraseIndex) and later.root == index.root


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
    write_table(table, [("0.5", "a man", "a guy")])

    # the build thread warns; it waits until the test listens, or the warning can come first
    listening = threading.Event()

    def full_disk(index, root):
        listening.wait(60)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(PI, "_save", full_disk)
    build = PI.open_index(table, tmp_path / "cache")
    assert isinstance(build, PI.IndexBuild)
    with pytest.warns(RuntimeWarning, match="could not be saved.*next run builds it again"):
        listening.set()
        index = build.wait()
    assert index.root is None and index.keep(P.ngram_keys([["a", "man"], ["a", "guy"]], 2)).tolist() == [0]
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(".build-")]
    monkeypatch.undo()
    assert isinstance(PI.open_index(table, tmp_path / "cache"), PI.IndexBuild)


def test_ensure_index_is_cached_and_keyed_by_content(tmp_path):
    table = tmp_path / "t.gz"
    write_table(table, [("0.5", "a man", "a guy")])
    one = PI.ensure_index(table, tmp_path / "cache")
    assert PI.ensure_index(table, tmp_path / "cache").root == one.root
    write_table(table, [("0.5", "a man", "a person")])
    assert PI.ensure_index(table, tmp_path / "cache").root != one.root
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(".build-")]


def test_a_touched_table_finds_its_index_by_content(tmp_path):
    """The memo of the table's sha256 is keyed by path, size and mtime: a table touched (or moved)
    is hashed again, and its index found rather than built again."""
    table = tmp_path / "t.gz"
    write_table(table, [("0.5", "a man", "a guy")])
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
    write_table(table, [("0.5", "a man", "a guy")])
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
