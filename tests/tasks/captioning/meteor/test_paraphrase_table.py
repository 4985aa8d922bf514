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

from vlbench.tasks.captioning.meteor import paraphrase as P
from vlbench.tasks.captioning.meteor import paraphrase_table as PT

needs_c = pytest.mark.skipif(PT._paraphrase_scan is None, reason="the C table pass is not built (no C compiler)")


def _scan(table: Path) -> PT.TableScan:
    with open(os.devnull, "wb") as out:
        return PT.scan_table(table, out)


@needs_c
@pytest.mark.parametrize(("block", "piece"), [(1 << 21, 1 << 22), (13, 1 << 22), (200, 1 << 22), (1 << 21, 61),
                                              (1 << 21, 1000)])
def test_c_pass_equals_numpy_pass(tmp_path, monkeypatch, block, piece):
    """Keys, entry offsets, line count and longest phrase, on tables with every kind of line (odd
    blanks, empty lines, 1-4 byte characters, lines shorter and longer than a word) cut anywhere
    into blocks of gzip and pieces of text; many odd lines in a row overflow the C pass's room for
    them (it goes on in a new round)."""
    monkeypatch.setattr(PT, "_COMPRESSED_BLOCK", block)
    monkeypatch.setattr(PT, "_TEXT_PIECE", piece)
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
    text, tokens joined by single spaces, whose spaces the C pass counts off its bit masks: tokens
    of 1-3 bytes put spaces at every offset."""
    rng = random.Random(n)
    for trial in range(4):
        long = " ".join("abc"[: rng.randint(1, 3)] for _ in range(n))
        short = [("0.1", "a b"[: 3 if n > 1 else 1], "x")] * rng.randint(0, 5)
        entries = [*short, ("0.5", long, "y"), *short] if trial % 2 else [*short, ("0.5", "z", long)]
        table = tmp_path / f"t{trial}.gz"
        write_table(table, entries)
        assert _scan(table).max_n == n, (scanner, long)


@pytest.fixture(scope="session")
def portable_scan(tmp_path_factory):
    """`_paraphrase_scan` built with its portable bit masks (`VLBENCH_SCAN_PORTABLE`: what machines
    without SSE2, such as ARM, run), in a temporary folder."""
    import importlib.machinery
    import importlib.util

    pytest.importorskip("setuptools")
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    source = Path(PT.__file__).with_name("_paraphrase_scan.c")
    if not source.is_file():
        pytest.skip("the C source is not installed (not an editable install)")
    out = tmp_path_factory.mktemp("portable")
    ext = Extension("_paraphrase_scan", sources=[str(source)], define_macros=[("VLBENCH_SCAN_PORTABLE", "1")])
    cmd = build_ext(Distribution({"ext_modules": [ext]}))
    cmd.build_lib, cmd.build_temp = str(out), str(out / "tmp")
    cmd.ensure_finalized()
    cmd.run()
    path = cmd.get_ext_fullpath("_paraphrase_scan")
    loader = importlib.machinery.ExtensionFileLoader("_paraphrase_scan", path)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("_paraphrase_scan", loader))
    loader.exec_module(module)
    return module


@pytest.fixture(params=["native", "portable"])
def scan_module(request):
    """The C pass as built for this machine, and with its portable bit masks."""
    return request.getfixturevalue("portable_scan") if request.param == "portable" else PT._paraphrase_scan


def _c_rounds(scan, text: bytes | memoryview, first_line: int, room: int) -> tuple[int, list[int], list[int], int, list[int]]:
    """`scan.scan_lines` called until it stops, with room for `room` lines a round: (bytes
    consumed, starts, keys, the longest plain phrase, the key positions of the suspect lines)."""
    view = memoryview(text)
    done, starts, keys, longest, suspect = 0, [], [], 0, []
    while True:
        st = np.empty(room, dtype=np.int64)
        ks = np.empty(room, dtype=np.uint64)
        sus = np.empty(2 * room, dtype=np.int64)
        consumed, n_starts, n_keys, max_tokens, _, _, n_sus = scan.scan_lines(view[done:], first_line, st, ks, sus)
        suspect += [len(keys) + int(k) for k in sus[: 2 * n_sus : 2]]
        starts += (st[:n_starts] + done).tolist()
        keys += ks[:n_keys].tolist()
        longest = max(longest, max_tokens)
        first_line += n_starts + n_keys
        done += consumed
        if consumed == 0 or done == len(view):
            return done, starts, keys, longest, suspect


@needs_c
@pytest.mark.parametrize("room", [1, 2, 5, 1000])
def test_c_pass_reads_lines_across_its_64_byte_chunks(scan_module, room):
    """The C pass reads 64 bytes at a time and each line off their newline bits: lines of every
    length around and across the chunks' edges (0-3, 60-70, 125-135 and up to 300 bytes), texts
    starting at every alignment and ending with or without a newline, odd bytes anywhere, and room
    for only a few lines a round (the pass stops inside a chunk and goes on from there). The numpy
    pass is the oracle; the C pass as built here (SSE2 on x86) and with its portable masks."""
    rng = random.Random(room)
    alphabet = ["a", "b", "c", " ", " ", "\t", "é", "\x01", "-"]
    for trial in range(150):
        lines = []
        for _ in range(rng.randint(0, 30)):
            size = rng.choice([rng.randint(0, 3), rng.randint(60, 70), rng.randint(125, 135), rng.randint(0, 300)])
            kind = rng.random()
            if kind < 0.8:  # tokens joined by single spaces, most of the table
                line = " ".join("ab"[: rng.randint(1, 2)] * rng.randint(1, 4) for _ in range(size // 4 + 1))[:size]
                line = line.strip()
                if kind > 0.6:  # but for one space more anywhere (also across the chunks' edges)
                    at = rng.randint(0, len(line))
                    line = line[:at] + " " + line[at:]
            else:
                line = "".join(rng.choices(alphabet, k=size))
            lines.append(line)
        text = "".join(line + "\n" for line in lines).encode()
        cut = text[: rng.randint(0, len(text))] if trial % 3 == 0 else text  # an incomplete last line
        complete = cut[: cut.rfind(b"\n") + 1]
        shift = trial % 8  # where the text starts in its buffer
        buffer = b"\n" * shift + cut
        first_line = rng.randint(0, 5)
        done, starts, keys, longest, suspect = _c_rounds(scan_module, memoryview(buffer)[shift:], first_line, room)
        assert done == len(complete), trial
        want_starts, want_keys, _ = PT._scan_block_numpy(complete, first_line, 0) if complete else ([], [], 0)
        assert starts == list(want_starts), trial
        # suspect lines are keyed again by the caller (as StringTokenizer reads them); the rest must agree
        suspects = set(suspect)
        assert [k for i, k in enumerate(keys) if i not in suspects] == [
            k for i, k in enumerate(list(want_keys)) if i not in suspects], trial
        phrase_lines = [ln for i, ln in enumerate(complete.split(b"\n")[:-1]) if (first_line + i) % 3]
        plain = [ln for i, ln in enumerate(phrase_lines) if i not in suspects]
        assert all(re.fullmatch(rb"([^ \t\f]+( [^ \t\f]+)*)?", ln) for ln in plain), trial
        assert not any(re.fullmatch(rb"([^ \t\f]+( [^ \t\f]+)*)?", ln) for i, ln in enumerate(phrase_lines)
                       if i in suspects), trial
        assert longest == max([len(ln.split(b" ")) if ln else 0 for ln in plain], default=0), trial


@needs_c
def test_c_pass_validates_utf8_as_python_decodes(scan_module):
    """The offset of the first byte that Python's strict UTF-8 decoder refuses, or -1: overlong
    forms, surrogates, code points past U+10FFFF, stray and missing continuation bytes."""
    scan = scan_module
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
