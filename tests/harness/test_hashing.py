"""The one sha256 helper: a file read in blocks gives the digest of its bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from vlbench.hashing import sha256_bytes, sha256_file

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("size", [0, 1, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 * (1 << 20) + 17])
def test_file_digest_is_the_digest_of_its_bytes(tmp_path: Path, size: int) -> None:
    data = bytes((i * 7 + i // 251) % 256 for i in range(size))  # not periodic in the block size
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    assert sha256_file(path) == sha256_file(str(path)) == hashlib.sha256(data).hexdigest() == sha256_bytes(data)


def test_prefix_is_hashed_before_the_file(tmp_path: Path) -> None:
    path = tmp_path / "weights.bin"
    path.write_bytes(b"weights")
    assert sha256_file(path, prefix=b"settings") == hashlib.sha256(b"settingsweights").hexdigest()
    assert sha256_file(path, prefix=b"settings") != sha256_file(path)


def test_a_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        sha256_file(tmp_path / "absent")


def test_no_other_module_hashes_a_file() -> None:
    """A file's sha256 is computed in `vlbench.hashing` only (no second block loop, no
    `hashlib.sha256(path.read_bytes())`)."""
    own = REPO / "harness" / "hashing.py"
    found = []
    for folder in ("harness", "tasks", "baselines", "benchmarks"):
        for path in sorted((REPO / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if path != own and ("read_bytes()).hexdigest()" in text or "fh.read(1 << 20)" in text
                                or "f.read(1 << 20)" in text):
                found.append(str(path.relative_to(REPO)))
    assert found == []
