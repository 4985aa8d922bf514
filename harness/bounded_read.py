"""Reading an untrusted file's bytes within size caps, in bounded memory whatever it holds.

Only regular files are read (a FIFO or a device is refused before reading). A plain file larger
than its cap is refused from the size the file system reports; one that reports a wrong size
(files in /proc, some network file systems) and a `.json.gz` are read in blocks and counted.
While it is unsure whether the input fits, at most `KEEP_WHILE_COUNTING` bytes are kept: past
that, the rest is only counted, so an oversized file or a compression bomb is refused in bounded
memory (a 2 MB bomb never becomes a GiB). A valid input larger than that is read a second time,
keeping everything this time; its bytes must hash the same both times. Problems with the input are
issues of the submission (`file_too_large`, `decompressed_too_large`, `bad_gzip`); the file
system's errors are UsageErrors.
"""

from __future__ import annotations

import hashlib
import os
import stat
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from vlbench.errors import IssueList, UsageError, shorten

GZIP_MAGIC = b"\x1f\x8b"
# What is kept in memory while a file's size is not yet known to be within its cap.
KEEP_WHILE_COUNTING = 64 << 20
_BLOCK = 1 << 20


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str | os.PathLike[str], what: str = "submission") -> tuple[int, int]:
    """Open a regular file for reading: (descriptor, size reported by the file system).

    Anything else is refused before reading: a FIFO with no writer would block forever, a device
    such as /dev/zero never ends. The check is made on the opened descriptor (no race with a
    rename), which is opened non-blocking so that opening a FIFO cannot hang either.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise UsageError(f"{path} is a folder, not a {what} file; name the file inside it") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError:  # a NUL character: no file system has such a name
        raise UsageError(f"{shorten(str(path))} is not a usable file name (it holds a NUL character)") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UsageError(f"{path} is a folder, not a {what} file; name the file inside it")
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"{path} is {_kind(info.st_mode)}, not a {what} file; save it to a file first")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info.st_size


class _TooLarge(Exception):
    def __init__(self, seen: int) -> None:
        super().__init__(seen)
        self.seen = seen


class _FileTooLarge(_TooLarge):
    """The file itself (not what it inflates to) is past its cap."""


def _gather(pieces: Callable[[], Iterator[bytes]], limit: int, keep: int) -> bytes:
    """All the bytes `pieces()` yields, if at most `limit` (else `_TooLarge`). At most about
    `keep` bytes are held while the total is unknown; past that the rest is only counted, and a
    total within `limit` is then read again by a second call of `pieces`."""
    kept: list[bytes] | None = []
    total = 0
    for piece in pieces():
        total += len(piece)
        if total > limit:
            raise _TooLarge(total)
        if kept is not None:
            if total <= keep:
                kept.append(piece)
            else:
                kept = None  # too much to hold while unsure: count the rest
    if kept is not None:
        return b"".join(kept)
    kept, total = [], 0
    for piece in pieces():
        total += len(piece)
        if total > limit:
            raise _TooLarge(total)
        kept.append(piece)
    return b"".join(kept)


class _RawBlocks:
    """The file's blocks from its start, at most `limit` bytes (else `_TooLarge`), hashed: each
    pass gives the sha256 of the bytes it read; every pass must read the same bytes."""

    def __init__(self, fh: IO[bytes], path: str | os.PathLike[str], limit: int, reported: int) -> None:
        self.fh, self.path, self.limit, self.reported = fh, path, limit, reported
        self.sha256: str | None = None
        self.size = 0

    def __call__(self) -> Iterator[bytes]:
        digest = hashlib.sha256()
        total = 0
        try:
            self.fh.seek(0)
            # one read of the reported size (plus one byte, to notice a file that grew or reports 0)
            want = self.reported + 1 if 0 < self.reported <= KEEP_WHILE_COUNTING else _BLOCK
            while True:
                block = self.fh.read(min(want, self.limit + 1 - total))
                if not block:
                    break
                total += len(block)
                if total > self.limit:
                    raise _FileTooLarge(total)
                digest.update(block)
                yield block
                want = _BLOCK
        except OSError as exc:
            raise UsageError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        sha = digest.hexdigest()
        if self.sha256 is not None and sha != self.sha256:
            raise UsageError(f"{self.path} changed while it was read; read it again when it is complete")
        self.sha256, self.size = sha, total


def _inflated(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """The inflated bytes of gzip data, a MiB at a time: members one after the other and zero
    padding after the last, as gzip itself accepts. zlib.error for corrupt, truncated or trailing
    data."""
    inflater = zlib.decompressobj(wbits=31)
    leftover = b""  # bytes after a member's end too short to tell whether another member starts
    for block in blocks:
        data, leftover = leftover + block, b""
        while data:
            if inflater.eof:
                if len(data) < len(GZIP_MAGIC) and GZIP_MAGIC.startswith(data):
                    leftover = data
                    break
                if not data.startswith(GZIP_MAGIC):
                    if data.strip(b"\x00"):
                        raise zlib.error("trailing garbage after the gzip stream")
                    break
                inflater = zlib.decompressobj(wbits=31)
            out = inflater.decompress(data, _BLOCK)
            if out:
                yield out
            data = inflater.unused_data if inflater.eof else inflater.unconsumed_tail
    while not inflater.eof:  # what zlib holds back once the input has ended
        out = inflater.decompress(b"", _BLOCK)
        if not out:
            break
        yield out
    if leftover:
        raise zlib.error("trailing garbage after the gzip stream")
    if not inflater.eof:
        raise zlib.error("the gzip stream is truncated")


def read_regular_capped(
    path: str | os.PathLike[str], limit: int, what: str = "submission"
) -> tuple[bytes | None, int]:
    """Read a regular file, at most `limit` bytes: (bytes, or None when larger; bytes seen).

    The cap holds while reading, not only against the reported size: files in /proc and some
    network file systems report 0 and then deliver more. Memory stays bounded either way.
    """
    fd, size = open_regular(path, what)
    with os.fdopen(fd, "rb", buffering=0) as fh:
        if size > limit:
            return None, size
        blocks = _RawBlocks(fh, path, limit, size)
        try:
            raw = _gather(blocks, limit, max(size + 1, KEEP_WHILE_COUNTING))
        except _TooLarge as exc:
            return None, exc.seen
    return raw, len(raw)


def _too_large(issues: IssueList, size: int, max_bytes: int) -> None:
    issues.add(
        "file_too_large",
        "",
        f"the file is {size:,} bytes; the limit is {max_bytes:,}"
        if size > max_bytes + 1
        else f"the file holds more than {max_bytes:,} bytes, the limit",
        "submit top-K lists (K >= 10) rather than full rankings, or raise --max-bytes",
    )


def read_bytes_capped(
    path: str | os.PathLike[str],
    issues: IssueList,
    max_bytes: int,
    max_decompressed: int,
    what: str = "submission",
) -> tuple[bytes | None, str, int]:
    """Read a `.json` or gzip file within the caps: (the JSON bytes, or None with the problem in
    `issues`; the sha256 of the file's bytes as stored; their size)."""
    fd, size = open_regular(path, what)
    with os.fdopen(fd, "rb", buffering=0) as fh:
        if size > max_bytes:
            _too_large(issues, size, max_bytes)
            return None, "", size
        blocks = _RawBlocks(fh, path, max_bytes, size)
        try:
            head = fh.read(len(GZIP_MAGIC))
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            if head != GZIP_MAGIC:
                raw = _gather(blocks, max_bytes, max(size + 1, KEEP_WHILE_COUNTING))
                return raw, blocks.sha256 or "", len(raw)
            try:
                data = _gather(lambda: _inflated(blocks()), max_decompressed, KEEP_WHILE_COUNTING)
            except _FileTooLarge:
                raise
            except _TooLarge:
                issues.add(
                    "decompressed_too_large",
                    "",
                    f"the gzip file inflates to more than {max_decompressed:,} bytes",
                    "a submission this large is not plausible; raise --max-decompressed if it is real",
                )
                return None, "", size
        except _FileTooLarge as exc:
            _too_large(issues, exc.seen, max_bytes)
            return None, "", exc.seen
        except zlib.error as exc:
            issues.add("bad_gzip", "", f"the gzip data is corrupt: {exc}", "re-create the .json.gz file")
            return None, "", size
    return data, blocks.sha256 or "", blocks.size


def refuse_past_caps(path: str | os.PathLike[str], max_bytes: int, max_decompressed: int, what: str) -> None:
    """Refuse (a UsageError naming the cap) a file, or what a `.json.gz` inflates to, past its
    cap, counting without keeping: for a file that another reader then reads in full (a
    `--references` file)."""
    fd, size = open_regular(path, what)
    with os.fdopen(fd, "rb", buffering=0) as fh:
        if size > max_bytes:
            raise UsageError(f"{path} is {size:,} bytes, more than the limit of {max_bytes:,} (--max-bytes)")
        blocks = _RawBlocks(fh, path, max_bytes, size)
        try:
            gz = fh.read(len(GZIP_MAGIC)) == GZIP_MAGIC
            total = 0
            for piece in _inflated(blocks()) if gz else blocks():
                total += len(piece)
                if gz and total > max_decompressed:
                    raise UsageError(f"{path} inflates to more than {max_decompressed:,} bytes, the limit "
                                     "(--max-decompressed)")
        except _FileTooLarge:
            raise UsageError(f"{path} holds more than {max_bytes:,} bytes, the limit (--max-bytes)") from None
        except zlib.error as exc:
            raise UsageError(f"{path}: the gzip data is corrupt: {exc}") from None


__all__ = ["GZIP_MAGIC", "KEEP_WHILE_COUNTING", "open_regular", "read_bytes_capped", "read_regular_capped", "refuse_past_caps"]
