"""Writing: a file, several files or a folder appear whole or not at all, with the usual permissions."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from vlbench.atomic_files import (
    atomic_file,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_many,
    check_output_path,
    current_umask,
    dumps_json,
    new_folder_beside,
    staged_folder,
)
from vlbench.errors import UsageError


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_atomic_write_leaves_old_file_on_failure(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        atomic_write_bytes(target, b"new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_writer_that_fails_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "checkpoint.pt"
    target.write_bytes(b"previous")
    with pytest.raises(RuntimeError), atomic_file(target) as fh:
        fh.write(b"half a checkpoint")
        raise RuntimeError("killed")
    assert target.read_bytes() == b"previous" and sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt"]
    with atomic_file(tmp_path / "new" / "checkpoint.pt") as fh:  # the folder is made on the way
        fh.write(b"whole")
    assert (tmp_path / "new" / "checkpoint.pt").read_bytes() == b"whole"


def test_published_files_and_folders_get_umask_permissions(tmp_path: Path, umask_022) -> None:
    assert current_umask() == 0o022
    atomic_write_bytes(tmp_path / "a.bin", b"x")
    atomic_write_many([(tmp_path / "b.json", b"{}"), (tmp_path / "sub" / "c.json", b"[]")])
    assert {_mode(tmp_path / n) for n in ("a.bin", "b.json", "sub/c.json")} == {0o644}
    folder = new_folder_beside(tmp_path / "target", ".target.new-")
    assert folder.parent == tmp_path and folder.name.startswith(".target.new-") and _mode(folder) == 0o755
    with staged_folder(tmp_path / "staged") as staging:
        (staging / "f").write_text("f")
    assert _mode(tmp_path / "staged") == 0o755


def test_json_text_is_utf8_with_a_final_newline(tmp_path: Path) -> None:
    assert dumps_json({"é": [1, 2.5]}, indent=None) == '{"é": [1, 2.5]}\n'.encode()
    with pytest.raises(ValueError):
        dumps_json({"x": float("nan")})
    atomic_write_json(tmp_path / "r.json", {"a": 1})
    assert (tmp_path / "r.json").read_bytes() == dumps_json({"a": 1}) == b'{\n  "a": 1\n}\n'


def test_staged_folder_replaces_only_on_success(tmp_path: Path) -> None:
    target = tmp_path / "world"
    target.mkdir()
    (target / "old.txt").write_text("old")
    with pytest.raises(KeyError), staged_folder(target) as staging:
        (staging / "half.txt").write_text("half")
        raise KeyError("interrupted")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["world"]
    assert sorted(p.name for p in target.iterdir()) == ["old.txt"]
    with staged_folder(target) as staging:
        (staging / "new.txt").write_text("new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["world"]
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]


def test_output_paths_that_cannot_be_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="is a folder"):
        check_output_path(tmp_path)
    with pytest.raises(UsageError, match="is a file, not a folder"):
        check_output_path(tmp_path / "file" / "r.json")
    with pytest.raises(UsageError, match="not a file name"):
        check_output_path(tmp_path / "absent" / "..")
    assert check_output_path(tmp_path / "new" / "r.json") == tmp_path / "new" / "r.json"


def test_many_files_all_or_none(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a.json").write_text("old a")
    real = os.replace

    def replace(src, dst):
        if str(dst).endswith("b.json"):
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(UsageError, match="No space left"):
        atomic_write_many([(tmp_path / "a.json", b"new a"), (tmp_path / "deep" / "b.json", b"new b")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]
    assert (tmp_path / "a.json").read_text() == "old a"
