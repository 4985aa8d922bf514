"""One pass over Meteor's paraphrase table (`paraphrase-en.gz`, 272 MB of text in 15.8 million
lines): decompressed piece by piece, written out, and every line keyed the way
`paraphrase.span_keys` keys a phrase, for `paraphrase_index.py`.

The table is line triples (probability, phrase, paraphrase). Per table, the pass gives the byte
offset of each entry's triple, the key of each phrase and paraphrase line (as StringTokenizer
reads it: lines that are not tokens joined by single spaces are re-joined first), the longest
phrase in tokens, and the sha256 of the file. It refuses what Java would read differently:
carriage returns (Java ends a line there too), text that is not UTF-8 (Java would read U+FFFD), a
line count that is not a multiple of 3, a file that is not one complete gzip stream.

ISA-L's inflate (the `isal` package) decompresses when installed, zlib otherwise; the lines are
keyed in C (`_paraphrase_scan.c`) or, without a C compiler, in numpy (`_scan_block_numpy`, which
stays the oracle in the tests).
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from vlbench.tasks.captioning.meteor.paraphrase import bytes_key, span_keys, string_tokens

try:
    from vlbench.tasks.captioning.meteor import _paraphrase_scan  # type: ignore[attr-defined]
except ImportError:  # installed without a C compiler: numpy keys the lines the same
    _paraphrase_scan = None

_COMPRESSED_BLOCK = 1 << 21  # 2 MiB of gzip read at a time: about 9 MiB of table text
# The text is inflated in pieces of at most 4 MiB: glibc's malloc then reuses the pieces' memory
# from one to the next, where each larger piece was fresh memory from the kernel, faulted in page by
# page (measured, the whole table: 0.14-0.5 s less system time, and 0.55-0.63 s instead of
# 0.75-0.90 s for the pass); smaller pieces cost more in per-piece calls than they save.
_TEXT_PIECE = 1 << 22
_PENDING = 8  # pieces decompressed ahead of the keying thread at most: memory stays about 40 MB


@dataclass
class TableScan:
    """The keyed lines of a table so far."""

    starts: list[np.ndarray] = field(default_factory=list)
    keys: list[np.ndarray] = field(default_factory=list)
    lines: int = 0
    offset: int = 0  # bytes of table text scanned
    max_n: int = 0
    sha256: Any = None  # hashlib's sha256 of the compressed file, fed as it is read


def _decompressor() -> Any:
    try:  # ISA-L's inflate: the same bytes as zlib's, about three times as fast
        from isal import isal_zlib
    except ImportError:
        return zlib.decompressobj(wbits=31)
    return isal_zlib.decompressobj(wbits=31)


def _scan_block(scan: TableScan, text: bytes | memoryview) -> None:
    """Key the lines of `text` (complete lines: it ends with a newline)."""
    view = memoryview(text)
    while len(view):
        piece = _scan_lines_c if _paraphrase_scan is not None else _scan_lines_numpy
        consumed, starts, keys, max_tokens = piece(view, scan.lines, scan.offset)
        scan.max_n = max(scan.max_n, max_tokens)
        scan.starts.append(starts + scan.offset)
        scan.keys.append(keys)
        scan.lines += len(starts) + len(keys)
        scan.offset += consumed
        view = view[consumed:]


def _scan_lines_c(view: memoryview, first_line: int, offset: int) -> tuple[int, np.ndarray, np.ndarray, int]:
    """The leading lines of `view` that fit in one round of the C pass: bytes consumed,
    probability line starts, phrase and paraphrase keys, and the most tokens of one of them."""
    # room for the lines of typical length (the table's are 17 bytes on average); what does not
    # fit is read by the next round
    room = len(view) // 12 + 64
    starts = np.empty(room // 3 + 1, dtype=np.int64)
    keys = np.empty(room, dtype=np.uint64)
    suspects = np.empty(64, dtype=np.int64)  # 32 lines (the shipped table has none); more: next round
    consumed, n_starts, n_keys, max_tokens, carriage_return, bad, n_suspects = _paraphrase_scan.scan_lines(
        view, first_line, starts, keys, suspects)
    if consumed == 0:  # there is room for a line: no newline
        raise ValueError("a table block must end with a newline")
    if carriage_return:
        raise ValueError("the paraphrase table has carriage returns")  # Java ends lines there too
    if bad >= 0:  # where this fails Java would read U+FFFD
        raise ValueError(f"the paraphrase table is not UTF-8 (byte {offset + bad})")
    keys = keys[:n_keys]
    # lines that are not tokens joined by single spaces, keyed as StringTokenizer reads them (the
    # shipped table has none)
    raw = bytes(view[:consumed]) if n_suspects else b""
    for pos, start in suspects[: 2 * n_suspects].reshape(-1, 2).tolist():
        toks = string_tokens(raw[start : raw.index(b"\n", start)].decode("utf-8"))
        keys[pos] = bytes_key(" ".join(toks).encode("utf-8"))
        max_tokens = max(max_tokens, len(toks))
    return consumed, starts[:n_starts], keys, max_tokens


def _scan_lines_numpy(view: memoryview, first_line: int, offset: int) -> tuple[int, np.ndarray, np.ndarray, int]:
    """`_scan_lines_c` in numpy, all lines in one round."""
    starts, keys, max_tokens = _scan_block_numpy(bytes(view), first_line, offset)
    return len(view), starts, keys, max_tokens


def _scan_block_numpy(text: bytes, first_line: int, offset: int) -> tuple[np.ndarray, np.ndarray, int]:
    """`_scan_block`'s arrays in numpy: probability line starts, phrase and paraphrase keys, and
    the most tokens of a phrase or paraphrase."""
    if b"\r" in text:
        raise ValueError("the paraphrase table has carriage returns")
    try:
        text.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"the paraphrase table is not UTF-8 (byte {offset + exc.start})") from None
    buf = np.frombuffer(text, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    line_start = np.concatenate([np.zeros(1, dtype=np.int64), nl[:-1] + 1])
    keys = span_keys(buf, line_start, nl)
    space = buf == 32
    spaces = np.add.reduceat(space.view(np.uint8), line_start, dtype=np.int32) if len(nl) else np.zeros(0, np.int32)
    n_tok = np.where(nl > line_start, spaces + 1, 0)
    odd = (buf == 9) | (buf == 12)
    delim = space | odd
    nonempty = nl > line_start
    lead = nonempty & delim[np.minimum(line_start, len(buf) - 1)]
    trail = nonempty & delim[np.maximum(nl - 1, 0)]
    if odd.any() or (delim[:-1] & delim[1:]).any() or lead.any() or trail.any():
        odd[np.flatnonzero(delim[:-1] & delim[1:])] = True
        suspect = set(np.searchsorted(nl, np.flatnonzero(odd)).tolist())
        suspect.update(np.flatnonzero(lead | trail).tolist())
        for ln in sorted(suspect):
            toks = string_tokens(text[line_start[ln] : nl[ln]].decode("utf-8"))
            keys[ln] = bytes_key(" ".join(toks).encode("utf-8"))
            n_tok[ln] = len(toks)
    probability = np.zeros(len(nl), dtype=bool)
    probability[(-first_line) % 3 :: 3] = True
    phrase = ~probability
    max_tokens = int(n_tok[phrase].max()) if phrase.any() else 0
    return line_start[probability], keys[phrase], max_tokens


def scan_table(table_gz: Path, out: BinaryIO) -> TableScan:
    """Decompress `table_gz` into `out` piece by piece and key its lines. A second thread writes
    and keys one piece while the next is decompressed (all three release the GIL)."""
    from concurrent.futures import Future, ThreadPoolExecutor

    inflate = _decompressor()
    scan = TableScan(sha256=hashlib.sha256())
    carry = b""  # the start of a line that the next piece ends
    pending: list[Future] = []

    def write_and_key(data: bytes, pieces: list[bytes | memoryview]) -> None:
        out.write(data)
        for piece in pieces:
            _scan_block(scan, piece)

    def texts(f: BinaryIO) -> Iterator[bytes]:
        """The table's text in pieces of at most `_TEXT_PIECE` bytes."""
        while block := f.read(_COMPRESSED_BLOCK):
            scan.sha256.update(block)  # the cache's key, while the file is read anyway
            while block:
                yield inflate.decompress(block, _TEXT_PIECE)
                block = inflate.unconsumed_tail
        yield inflate.flush()
        if inflate.unused_data or not inflate.eof:
            raise ValueError("the paraphrase table is not one complete gzip stream")
        if carry:
            yield b"\n"  # no final newline: the last line ends the table

    with open(table_gz, "rb") as f, ThreadPoolExecutor(1, thread_name_prefix="vlbench-paraphrase-keys") as keyer:
        try:
            for data in texts(f):
                if data:
                    pieces: list[bytes | memoryview] = []
                    first = data.find(b"\n")
                    if first < 0:
                        carry += data
                    else:
                        last = data.rfind(b"\n")
                        pieces.append(carry + data[: first + 1])  # the line the piece ends
                        if last > first:
                            pieces.append(memoryview(data)[first + 1 : last + 1])  # its own lines
                        carry = data[last + 1 :]
                    if len(pending) > _PENDING:  # a few pieces waiting at most: the memory stays small
                        pending.pop(0).result()
                    pending.append(keyer.submit(write_and_key, data, pieces))
        finally:
            for future in pending:
                future.result()
    if scan.lines % 3:
        raise ValueError(f"the paraphrase table has {scan.lines} lines, not a multiple of 3")
    return scan
