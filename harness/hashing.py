"""sha256, the one digest vlbench records: of a file (read in blocks, whatever its size) or of bytes.

Result records, ground-truth pins, the leaderboard's cache keys, checkpoints and the recipes'
provenance all name files by these hex digests, so they are computed here only.
"""

from __future__ import annotations

import hashlib
import os

_BLOCK = 1 << 20  # read a file a MiB at a time: model weights are gigabytes


def sha256_bytes(data: bytes) -> str:
    """The hex sha256 of `data`."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike[str], prefix: bytes = b"") -> str:
    """The hex sha256 of the file's bytes (of `prefix` followed by them, when given: a digest
    that keys something by both a setting and a file)."""
    digest = hashlib.sha256(prefix)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


__all__ = ["sha256_bytes", "sha256_file"]
