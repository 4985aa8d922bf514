"""Where the tests find the index of the real paraphrase table: the user's cache when it already
holds one (read only), else one temporary folder per test session (built once, about 15 s)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path

from vlbench.hashing import sha256_file
from vlbench.tasks.captioning.java import meteor_jar
from vlbench.tasks.captioning.meteor import paraphrase_index as PI


@cache
def real_index_cache() -> Path:
    table = meteor_jar().parent / "data" / "paraphrase-en.gz"
    root = PI.cache_root()
    key = PI.index_key(sha256_file(table), table.stat().st_size)
    if (root / f"index-v{PI.FORMAT}-{key}" / "meta.json").is_file():
        return root
    tmp = Path(tempfile.mkdtemp(prefix="vlbench-test-meteor-"))
    atexit.register(shutil.rmtree, tmp, True)
    return tmp
