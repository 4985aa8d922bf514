"""One pass over the paraphrase table (`paraphrase_table.py`): the C pass (`_paraphrase_scan.c`)
against the numpy one and Python's own UTF-8 decoder, on generated tables cut anywhere into blocks
and on the shipped table; what the pass refuses."""

from __future__ import annotations

import gzip
import os
import random
import re
import zlib
from pathlib import Path

import numpy as np
import pytest
from paraphrase_tables import entries_of_every_kind, tokens, write_table

from vlbench.tasks.captioning import paraphrase as P
from vlbench.tasks.captioning import paraphrase_table as PT

needs_c = pytest.mark.skipif(PT._paraphrase_scan is None, reason="the C table pass is not built (no C compiler)")


def _scan(table: Path) -> PT.TableScan:
    with open(os.devnull, "wb") as out:
        return PT.scan_table(table, out)


@needs_c
@pytest.mark.parametrize("block", [1 << 21, 13, 200])
def test_c_pass_equals_numpy_pass(tmp_path, monkeypatch, block):
    """Keys, entry offsets, line count and longest phrase, on tables with every kind of line (odd
    blanks, empty lines, 1-4 byte characters, lines shorter and longer than a word) cut anywhere
    into blocks; many odd lines in a row overflow the C pass's room for them (it goes on in a new
    round)."""
    monkeypatch.setattr(PT, "_COMPRESSED_BLOCK", block)
    rng = random.Random(block)
    alphabet = ["a", "b", " ", " ", "\t", "\f", "é", "ж", "€", "𝔘", "\x0b", "\x01", "-", "'"]
    entries = entries_of_every_kind(rng, 300)
    entries += [("p", "".join(rng.choices(alphabet, k=rng.randint(0, 30))), "".join(rng.choices(alphabet, k=rng.randint(0, 30))))
                for _ in range(300)]
    entries += [("1", " a", "b ")] * 100  # 200 odd lines in a row
    rng.shuffle(entries)
    table = tmp_path / "t.gz"
    write_table(table, entries)
    c = _scan(table)
    monkeypatch.setattr(PT, "_paraphrase_scan", None)
    py = _scan(table)
    assert (c.lines, c.offset, c.max_n) == (py.lines, py.offset, py.max_n) == (3 * len(entries), c.offset, c.max_n)
    np.testing.assert_array_equal(np.concatenate(c.keys), np.concatenate(py.keys))
    np.testing.assert_array_equal(np.concatenate(c.starts), np.concatenate(py.starts))
    # and the keys are those of the lines as StringTokenizer reads them
    want = [P.bytes_key(" ".join(tokens(x)).encode()) for _, a, b in entries for x in (a, b)]
    assert np.concatenate(c.keys).tolist() == want


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 16, 17, 40])
def test_longest_phrase_counts_the_tokens_of_plain_lines(tmp_path, scanner, n):
    """The longest phrase in tokens (a run keys its n-grams up to it) where that phrase is plain
    text, tokens joined by single spaces, whose spaces the C pass counts a word at a time: tokens of
    1-3 bytes put 0-4 spaces in a word, at every offset."""
    rng = random.Random(n)
    for trial in range(4):
        long = " ".join("abc"[: rng.randint(1, 3)] for _ in range(n))
        short = [("0.1", "a b"[: 3 if n > 1 else 1], "x")] * rng.randint(0, 5)
        entries = [*short, ("0.5", long, "y"), *short] if trial % 2 else [*short, ("0.5", "z", long)]
        table = tmp_path / f"t{trial}.gz"
        write_table(table, entries)
        assert _scan(table).max_n == n, (scanner, long)


@needs_c
def test_c_pass_validates_utf8_as_python_decodes():
    """The offset of the first byte that Python's strict UTF-8 decoder refuses, or -1: overlong
    forms, surrogates, code points past U+10FFFF, stray and missing continuation bytes."""
    scan = PT._paraphrase_scan
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


@needs_c
def test_c_and_numpy_index_the_real_table_alike(monkeypatch):
    """The shipped 5.27-million-entry table: the same keys, offsets and longest phrase either way."""
    from vlbench.tasks.captioning.java import JavaUnavailable, meteor_jar

    try:
        table = meteor_jar().parent / "data" / "paraphrase-en.gz"
    except JavaUnavailable as exc:
        pytest.skip(str(exc))
    c = _scan(table)
    monkeypatch.setattr(PT, "_paraphrase_scan", None)
    py = _scan(table)
    assert (c.lines, c.offset, c.max_n) == (py.lines, py.offset, py.max_n) == (3 * 5_274_084, 272_201_058, 7)
    np.testing.assert_array_equal(np.concatenate(c.keys), np.concatenate(py.keys))
    np.testing.assert_array_equal(np.concatenate(c.starts), np.concatenate(py.starts))
