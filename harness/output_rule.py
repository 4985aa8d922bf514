"""The one rule for every path a user names for vlbench to write (`--out`, `--out-dir`, ...).

vlbench replaces a file only if vlbench wrote it, told by its content (`FileKind`: a result
record's leading fields, a per-item file's tables, a submission's stamp in `meta.extra`, an EvalAI
bundle's key). Anything else there (someone's file, a symbolic link, a named pipe) is refused with
one sentence and exit code 2, unless the user passes `--force` (`force=True` in Python); with
`--force`, a link is replaced itself, never written through. A missing parent folder is refused
with a sentence naming it, as `cp` and `curl` refuse it: vlbench makes no folder above the one the
user named. Every check happens before any work, so a refused run writes nothing.

Folders follow the same rule (`check_folder_to_fill`, `FolderKind`, `replace_folder`): a folder
vlbench fills (`score --out-dir`) may hold anything else, and each file it writes there is checked
as above; a folder vlbench writes as a whole (`data mini --out`) is replaced only when it is empty
or holds nothing but what vlbench wrote there, as its marker file (`FOLDER_MARKER`) lists. With
`--force`, vlbench writes its files into someone's folder, replacing those of the same names and
deleting nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlbench.atomic_files import atomic_write_json, new_folder_beside
from vlbench.errors import UsageError

# How much of a file is read to tell who wrote it: the leading fields of every JSON object file
# vlbench writes lie within it, whatever the file's size.
HEAD_BYTES = 1 << 20
# The largest file read whole to tell who wrote it (a per-item file has no leading stamp).
WHOLE_BYTES = 64 << 20
FOLDER_MARKER = ".vlbench-folder.json"


@dataclass(frozen=True)
class FileKind:
    """A kind of file vlbench writes: `name` for messages ("a result record"), `recognizes` tells
    from a file's content whether vlbench wrote it."""

    name: str
    recognizes: Callable[[Path], bool]


def _read_head(path: Path, limit: int) -> tuple[bytes, bool] | None:
    """(the first `limit` bytes, whether that is the whole file); None when unreadable."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(limit + 1)
    except OSError:
        return None
    return head[:limit], len(head) <= limit


def leading_fields(path: Path, limit: int = HEAD_BYTES) -> dict[str, Any] | None:
    """The fields of a JSON object file that lie wholly within its first `limit` bytes, in order;
    None when the file does not start as a JSON object. Reads at most `limit` bytes."""
    read = _read_head(path, limit)
    if read is None:
        return None
    text = read[0].decode("utf-8", errors="replace").lstrip("\ufeff")
    decoder = json.JSONDecoder()
    fields: dict[str, Any] = {}

    def skip(i: int) -> int:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        return i

    i = skip(0)
    if not text.startswith("{", i):
        return None
    i = skip(i + 1)
    while i < len(text) and text[i] != "}":
        try:
            key, i = decoder.raw_decode(text, i)
            i = skip(i)
            if not text.startswith(":", i):
                return fields if i >= len(text) else None
            value, i = decoder.raw_decode(text, skip(i + 1))
        except (ValueError, RecursionError):
            return fields  # the head ends inside this field (or the file is not JSON past here)
        if not isinstance(key, str):
            return None
        fields[key] = value
        i = skip(i)
        if text.startswith(",", i):
            i = skip(i + 1)
    return fields


def _whole_json(path: Path) -> Any:
    read = _read_head(path, WHOLE_BYTES)
    if read is None or not read[1]:
        return None
    try:
        return json.loads(read[0])
    except (ValueError, RecursionError):
        return None


# The keys of `meta.extra` by which a submission says which vlbench command wrote it.
SUBMISSION_STAMPS = frozenset({"recipe", "imported_from", "written_by"})
_RECORD_FIELDS = ("benchmark", "task", "benchmark_version", "harness_version", "submission_sha256",
                  "ground_truth_sha256")


def _is_result_record(path: Path) -> bool:
    fields = leading_fields(path) or {}
    return all(isinstance(fields.get(k), str) for k in _RECORD_FIELDS)


def _is_per_item(path: Path) -> bool:
    """A per-item file: named by the result record beside it, or (read whole) tables of items."""
    stem = path.name.removesuffix(".per_item.json")
    for record in {path.with_name(stem + ".json"), path.with_name(stem)} if stem != path.name else ():
        fields = leading_fields(record) or {} if record.is_file() else {}
        if all(isinstance(fields.get(k), str) for k in _RECORD_FIELDS) and fields.get("per_item") == path.name:
            return True
    doc = _whole_json(path)
    return isinstance(doc, dict) and bool(doc) and all(
        isinstance(t, dict) and {"ids", "columns", "values"} <= set(t) for t in doc.values())


def _is_written_submission(path: Path) -> bool:
    """A submission a vlbench command wrote: an envelope whose `meta.extra` carries the stamp of a
    baseline recipe (`recipe`), an importer (`imported_from`) or another command (`written_by`),
    not one written by hand."""
    fields = leading_fields(path) or {}
    meta = fields.get("meta")
    extra = meta.get("extra") if isinstance(meta, dict) else None
    return fields.get("vlbench") == 1 and isinstance(extra, dict) and bool(SUBMISSION_STAMPS & set(extra))


def _is_evalai_bundle(path: Path) -> bool:
    fields = leading_fields(path) or {}
    return fields.get("vlbench_evalai") == 1 and isinstance(fields.get("benchmark"), str)


RESULT_RECORD = FileKind("a result record", _is_result_record)
PER_ITEM = FileKind("a per-item file", _is_per_item)
WRITTEN_SUBMISSION = FileKind("a submission written by a vlbench command", _is_written_submission)
EVALAI_BUNDLE = FileKind("an EvalAI annotation file", _is_evalai_bundle)


def never(name: str) -> FileKind:
    """A kind of file with no room for a mark of who wrote it (a COCO results list): an existing
    one is replaced only with --force."""
    return FileKind(name, lambda path: False)


def _what_is_there(path: Path) -> str | None:
    """How to call what is at `path` when it is not a regular file; None for a regular file."""
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    return "not a regular file"


def missing_parent(path: Path) -> str | None:
    """The sentence refusing `path` when the folder it goes in is missing or is not a folder."""
    parent = path.parent
    if parent.is_dir():
        return None
    if parent.exists():
        return f"cannot write {path}: {parent} is not a folder"
    return f"cannot write {path}: the folder {parent} does not exist; create it first"


def target_problem(path: str | os.PathLike[str], kind: FileKind, *, force: bool = False, option: str = "--out",
                   force_hint: str = "--force", instead: str = "name another file") -> str | None:
    """Why vlbench must not write `path` (one sentence), or None when it may. `option` names where
    the path comes from ("--out"; "" for none), `instead` what else the user can do."""
    path = Path(path)
    named = f"{option} {path}".strip()
    if str(path) in ("", ".") or path.name in ("", ".", ".."):
        return f"{option} {str(path)!r} is not a file name".strip()
    if path.is_dir() and not path.is_symlink():
        return f"{named} is a folder; name the file to write inside it (e.g. {path / 'result.json'})"
    problem = missing_parent(path)
    if problem is not None or force or not os.path.lexists(path):
        return problem
    other = _what_is_there(path)
    if other == "a symbolic link":
        return (f"{named} is a symbolic link, which vlbench did not write; {instead}, or pass "
                f"{force_hint} to replace the link itself (what it points to is left as it is)")
    if other is not None or not kind.recognizes(path):
        found = other or f"not {kind.name} that vlbench wrote"
        return f"{named} exists and is {found}; {instead}, or pass {force_hint} to replace it"
    return None


def check_file_target(path: str | os.PathLike[str], kind: FileKind, *, force: bool = False, option: str = "--out",
                      force_hint: str = "--force", instead: str = "name another file") -> Path:
    """`path`, when vlbench may write it (`target_problem`); else a UsageError (exit code 2)."""
    problem = target_problem(path, kind, force=force, option=option, force_hint=force_hint, instead=instead)
    if problem is not None:
        raise UsageError(problem)
    return Path(path)


def check_folder_to_fill(path: str | os.PathLike[str], option: str = "--out-dir") -> Path:
    """A folder vlbench writes files into (each checked with `check_file_target`): it may exist
    holding anything; a missing one is made by `make_folder`, but only inside an existing folder."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{option} {path} is a file, not a folder; name a folder")
    problem = None if path.exists() else missing_parent(path)
    if problem is not None:
        raise UsageError(problem)
    return path


def make_folder(path: Path) -> Path:
    """Make the folder `check_folder_to_fill` accepted (its parent exists; nothing above it is made)."""
    path.mkdir(exist_ok=True)
    return path


# --- folders vlbench writes as a whole ------------------------------------------------------------


@dataclass(frozen=True)
class FolderKind:
    """A folder one vlbench command writes as a whole. `writer` names the command (in the marker
    and messages); `legacy` tells by its content a folder it wrote without a marker (before markers,
    or always when `marker` is False: a folder kept in git, whose files say what they are)."""

    writer: str
    legacy: Callable[[Path], bool] | None = None
    marker: bool = True


def _listing(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink()}


def marked_files(folder: Path, writer: str) -> set[str] | None:
    """The files the marker of `folder` says `writer` wrote there; None without a valid marker."""
    marker = folder / FOLDER_MARKER
    if marker.is_symlink() or not marker.is_file():
        return None
    fields = leading_fields(marker, WHOLE_BYTES) or {}
    files = fields.get("files")
    if fields.get("written_by") != writer or not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return set(files)


def folder_is_ours(folder: Path, kind: FolderKind) -> bool:
    """Whether `folder` holds nothing but what `kind.writer` wrote there (its marker lists every
    file in it, and no file in it is a link), or is a folder it wrote before markers."""
    if any(p.is_symlink() for p in folder.rglob("*")):
        return False
    listed = marked_files(folder, kind.writer)
    if listed is not None:
        return _listing(folder) - {FOLDER_MARKER} <= listed
    return kind.legacy is not None and kind.legacy(folder)


def folder_problem(path: Path, kind: FolderKind, *, force: bool, option: str = "--out") -> str | None:
    """Why vlbench must not write the folder `path` as a whole (one sentence), or None."""
    if str(path) in ("", ".") or path.name in ("", ".", ".."):
        return f"{option} {str(path)!r} names no folder vlbench could replace; name a new folder"
    if os.path.lexists(path) and not path.is_dir():
        return f"{option} {path} is a file, not a folder; name a folder"
    problem = missing_parent(path)
    if problem is not None:
        return problem
    if not path.exists() or force:
        return None
    if path.is_symlink():
        return (f"{option} {path} is a symbolic link, which vlbench did not write; name another folder, or pass "
                "--force to write into the folder it points to")
    if any(path.iterdir()) and not folder_is_ours(path, kind):
        return (f"{option} {path} holds files that {kind.writer} did not write; name a new or empty folder, or pass "
                "--force to write into it (files of the same names are replaced, nothing else is deleted)")
    return None


def check_folder_target(path: str | os.PathLike[str], kind: FolderKind, *, force: bool = False,
                        option: str = "--out") -> Path:
    problem = folder_problem(Path(path), kind, force=force, option=option)
    if problem is not None:
        raise UsageError(problem)
    return Path(path)


def write_marker(folder: Path, writer: str, files: Iterable[str], **facts: Any) -> None:
    atomic_write_json(folder / FOLDER_MARKER, {"written_by": writer, **facts, "files": sorted(files)})


def replace_folder(target: Path, kind: FolderKind, build: Callable[[Path], Any], *, force: bool = False,
                   option: str = "--out", **facts: Any) -> Any:
    """Write the folder `target` as a whole: `build(folder)` fills a new folder beside it, which
    then replaces `target` (when `target` is missing, empty or `kind`'s own) or, with `force`, has
    its files moved into `target` over those of the same names. On any failure `target` is left as
    it was. The folder gets a marker listing its files (when `kind.marker`). Returns what `build`
    returned."""
    target = check_folder_target(target, kind, force=force, option=option)
    staging = new_folder_beside(target, f".{target.name}.new-")
    try:
        built = build(staging)
        if kind.marker:
            write_marker(staging, kind.writer, _listing(staging) - {FOLDER_MARKER}, **facts)
        if target.exists() and (target.is_symlink() or any(target.iterdir())) \
                and not folder_is_ours(target, kind):
            _merge_into(staging, target)  # --force: someone's folder keeps everything else
        else:
            _swap(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return built


def _swap(new: Path, target: Path) -> None:
    """Put `new` in place of `target` (missing, empty or wholly vlbench's)."""
    if not target.exists():
        new.rename(target)
        return
    old = target.with_name(f".{target.name}.old-{os.urandom(4).hex()}")
    target.rename(old)
    try:
        new.rename(target)
    except BaseException:
        old.rename(target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _merge_into(new: Path, target: Path) -> None:
    for source in sorted(new.rglob("*")):
        if source.is_dir():
            continue
        dest = target / source.relative_to(new)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.is_dir() and not dest.is_symlink():
            raise UsageError(f"cannot write {dest}: a folder of that name is in the way")
        os.replace(source, dest)


__all__ = [
    "EVALAI_BUNDLE",
    "FOLDER_MARKER",
    "PER_ITEM",
    "RESULT_RECORD",
    "WRITTEN_SUBMISSION",
    "FileKind",
    "FolderKind",
    "check_file_target",
    "check_folder_target",
    "check_folder_to_fill",
    "folder_is_ours",
    "folder_problem",
    "leading_fields",
    "make_folder",
    "marked_files",
    "missing_parent",
    "never",
    "replace_folder",
    "target_problem",
    "write_marker",
]
