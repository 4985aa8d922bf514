"""The output rule's cases, run against any writer (`harness/output_rule.py`; each writer's tests
call these): a file vlbench wrote is replaced, anything else is refused (exit 2) and left as it was
with nothing written beside it, unless --force; a missing folder is refused and not made; a folder
as a file target and a symbolic link are refused."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

# write(target, force) -> the command's exit code (0 written, 2 refused)
Writer = Callable[[Path, bool], int]


def listing(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes (links as what they point to, by name)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        key = p.relative_to(folder).as_posix()
        if p.is_symlink():
            out[key] = b"-> " + os.readlink(p).encode()
        elif p.is_file():
            out[key] = p.read_bytes()
        else:
            out[key] = b"<folder>"
    return out


def check_file_writer(root: Path, write: Writer, name: str = "out.json", beside: Callable[[Path], list[Path]] = lambda p: []) -> None:
    """Every case of the rule for a writer of one file (plus the files `beside(target)` it writes
    with it, such as a per-item file). `root` is an empty folder of the test's own."""
    # 1. a new file, then the same file again: vlbench's own, replaced
    ours = root / "ours"
    ours.mkdir()
    assert write(ours / name, False) == 0
    first = listing(ours)
    assert name in first and all(p.name in first for p in beside(ours / name))
    assert write(ours / name, False) == 0, "a file vlbench wrote must be replaced without --force"
    assert set(listing(ours)) == set(first)

    # 2. someone's file: refused, left as it was, nothing written beside it; --force replaces it
    theirs = root / "theirs"
    theirs.mkdir()
    (theirs / name).write_text("# my notes\n")
    before = listing(theirs)
    assert write(theirs / name, False) == 2
    assert listing(theirs) == before, "a refused run must write nothing"
    assert write(theirs / name, True) == 0
    assert (theirs / name).read_bytes() != b"# my notes\n"

    # 3. a missing folder: refused and not made (as cp and curl refuse it)
    assert write(root / "missing" / "deeper" / name, False) == 2
    assert write(root / "missing" / name, True) == 2
    assert not (root / "missing").exists()

    # 4. a folder as the target
    folder = root / "folder.json"
    folder.mkdir()
    (folder / "keep.txt").write_text("keep")
    assert write(folder, False) == 2 and listing(folder) == {"keep.txt": b"keep"}

    # 5. a symbolic link (to a file vlbench wrote, even): refused; --force replaces the link itself
    links = root / "links"
    links.mkdir()
    pointed = root / "pointed.json"
    pointed.write_bytes((ours / name).read_bytes())
    os.symlink(pointed, links / name)
    before = listing(links)
    assert write(links / name, False) == 2 and listing(links) == before
    assert write(links / name, True) == 0
    assert not (links / name).is_symlink() and pointed.read_bytes() == (ours / name).read_bytes()
    # a link left dangling is refused too
    os.symlink(root / "nowhere.json", root / "dangling.json")
    assert write(root / "dangling.json", False) == 2 and not (root / "nowhere.json").exists()
