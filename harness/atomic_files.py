"""Writing files so that an interrupted run leaves nothing half-written, and nothing but its own.

A file is written in full to a temporary file beside its target, flushed to disk, then renamed
over the target: a reader sees the old file or the new one, never a part. `atomic_write_many`
publishes several files together (all or none), `staged_folder` a whole folder. Published files
and folders get the permissions `open()` and `mkdir()` would give them under the process umask
(the temporary ones are made private). Paths are checked (`check_output_path`) before any work,
so a refused run writes nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from vlbench.backports import strict_zip
from vlbench.errors import UsageError


def current_umask() -> int:
    """The process umask (read by setting it and putting it back; there is no getter)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def dumps_json(obj: Any, indent: int | None = 2) -> bytes:
    """UTF-8 JSON text (no NaN or Infinity: they are not JSON)."""
    return (json.dumps(obj, indent=indent, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


@contextlib.contextmanager
def _temporary_beside(path: Path) -> Iterator[tuple[IO[bytes], str]]:
    """A new temporary file in `path`'s folder, open for writing: (file, its name). It is flushed
    to disk when the block ends; the caller renames it or removes it."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file 0600; published files get what open() would give (0644 under umask 022)
        os.fchmod(fd, 0o666 & ~current_umask())
        fh = os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    with fh:
        yield fh, tmp
        fh.flush()
        os.fsync(fh.fileno())


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """A binary file to write `path` through: it replaces `path` when the block ends without an
    error; on an error `path` is left as it was and the temporary file is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = None
    try:
        with _temporary_beside(path) as (fh, tmp):
            yield fh
        os.replace(tmp, path)
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` as `path`, atomically (`atomic_file`)."""
    with atomic_file(path) as fh:
        fh.write(data)


def atomic_write_json(path: str | os.PathLike[str], obj: Any, indent: int | None = 2) -> None:
    """Write `obj` as `path` in JSON (`dumps_json`), atomically."""
    atomic_write_bytes(path, dumps_json(obj, indent))


def check_output_path(path: str | os.PathLike[str], what: str = "output") -> Path:
    """Refuse, before any work, an output path that cannot be a file: a folder, or a path under
    a file. Returns it as a Path."""
    path = Path(path)
    if path.is_dir():
        raise UsageError(f"{path} is a folder; name the {what} file to write (e.g. {path / 'result.json'})")
    if str(path) in ("", ".") or path.name in ("", ".", ".."):
        raise UsageError(f"{str(path)!r} is not a file name for the {what}")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"cannot write {path}: {parent} is a file, not a folder")
            break
    return path


def _missing_parents(path: Path) -> list[Path]:
    missing = []
    for parent in path.parents:
        if parent.exists():
            break
        missing.append(parent)
    return missing


def atomic_write_many(files: list[tuple[Path, bytes]]) -> None:
    """Publish several files together: all of them, or none (old versions kept) on any failure.

    Each is first written in full to a temporary file beside its target (most failures, such as
    a full disk, happen here and touch no target); then the temporaries are renamed over their
    targets, and should a later rename fail, the earlier targets are put back as they were.
    Folders made on the way are removed again on failure. OSError becomes a UsageError.
    """
    for path, _ in files:
        check_output_path(path)
    made = sorted({p for path, _ in files for p in _missing_parents(Path(path))}, key=lambda p: len(p.parts))
    temps: list[str] = []
    restore: list[tuple[Path, str | None]] = []  # (target, hard-linked copy of its old version)
    current = files[0][0] if files else None
    try:
        for folder in made:
            current = folder
            folder.mkdir(exist_ok=True)
        for path, data in files:
            current = path
            with _temporary_beside(Path(path)) as (fh, tmp):
                temps.append(tmp)
                fh.write(data)
        for (path, _), tmp in strict_zip(files, temps):
            current = path
            backup = None
            if os.path.lexists(path):
                backup = str(Path(path).with_name(f".{Path(path).name}.{os.urandom(4).hex()}.old"))
                os.link(path, backup)
            restore.append((Path(path), backup))
            os.replace(tmp, path)
    except BaseException as exc:
        for target, backup in reversed(restore):
            with contextlib.suppress(OSError):
                if backup is None:
                    os.unlink(target)
                else:
                    os.replace(backup, target)
        for tmp in temps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()
        if isinstance(exc, OSError):
            raise UsageError(f"cannot write {current}: {exc.strerror or exc}") from exc
        raise
    for _, backup in restore:
        if backup is not None:
            with contextlib.suppress(OSError):
                os.unlink(backup)


def new_folder_beside(target: Path, prefix: str) -> Path:
    """A new empty folder in `target`'s folder named `prefix` + random characters, with the
    permissions `mkdir` would give it (mkdtemp makes it 0700)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=target.parent))
    try:
        os.chmod(folder, 0o777 & ~current_umask())
    except BaseException:
        folder.rmdir()
        raise
    return folder


@contextlib.contextmanager
def staged_folder(target: Path) -> Iterator[Path]:
    """A fresh folder next to `target` that replaces it when the block ends without an error;
    on an error it is removed and `target` is left as it was (never a half-written folder)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = new_folder_beside(target, f".{target.name}.")
    try:
        yield tmp
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


__all__ = [
    "atomic_file",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_many",
    "check_output_path",
    "current_umask",
    "dumps_json",
    "new_folder_beside",
    "staged_folder",
]
