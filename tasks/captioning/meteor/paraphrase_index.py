"""The index of Meteor's paraphrase table: which of its 5.27 million entries can match in a run.

An entry can match only where its phrase and its paraphrase both occur in the run's tokens
(`paraphrase.py` says why), so a run keys all its n-grams (`paraphrase.ngram_keys`) and keeps the
entries whose two keys are among them. The index holds, per entry, the key of its phrase and of
its paraphrase (`keys.npy`, unsorted, in table order), the byte offset of its line triple in the
decompressed table (`starts.npy`, `table.txt`), and the longest phrase in tokens (`meta.json`).

Built once per table under the vlbench data folder (`cache_root`), keyed by the table's sha256,
from one pass over the table (`paraphrase_table.py`: decompressed, written out and every line
keyed). Nothing is sorted, so the first run on a machine pays for little more than reading the
table once: `open_index` starts that pass in a thread and returns at once; the run prepares its
words meanwhile on the other core and waits for the index only when it needs it. The files are
then written and renamed into place while the run goes on; a run that ends first waits for them
(the thread is not a daemon), so the next run finds a complete index.
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.hashing import sha256_file
from vlbench.progress import stage
from vlbench.tasks.captioning.meteor.paraphrase_table import TableScan, scan_table

try:
    from vlbench.tasks.captioning.meteor import _paraphrase_scan  # type: ignore[attr-defined]
except ImportError:  # installed without a C compiler: numpy matches the same (`keep_numpy`)
    _paraphrase_scan = None

# 2: span keys; 3: a Bloom filter of the sorted distinct phrases; 4: per-entry keys, unsorted
FORMAT = 4
# The index folders of earlier formats, by format, and the files vlbench wrote in them: superseded
# once the current one is built.
_EARLIER_FOLDERS = {1: "index-{key}", 2: "index-v2-{key}", 3: "index-v3-{key}"}
_EARLIER_FILES = {"meta.json", "table.txt", "phrases.npy", "left.npy", "right.npy", "starts.npy", "bloom.npy"}
# The run's n-grams are keyed before the index of a first run is ready, up to this length (the
# shipped table's longest phrase); a table with longer ones gets the rest keyed afterwards.
LIKELY_MAX_N = 7
_FILTER_BITS = 23  # the numpy matcher's prefilter: one bit per key value modulo 2^23


@dataclass
class ParaphraseIndex:
    # Per-entry arrays in blocks, in table order (a first build keeps the blocks it keyed; a
    # loaded index has one block each):
    key_blocks: list[np.ndarray]  # uint64: one stream of keys, each entry's phrase's then paraphrase's
    start_blocks: list[np.ndarray]  # int64: byte offset of each entry's triple in the table text
    table_bytes: int
    max_n: int  # the most tokens of a phrase or paraphrase
    table: Any  # the decompressed table text (bytes-like: an mmap of table.txt)
    root: Path | None = None  # the cache folder (None until a first build has renamed it into place)

    @classmethod
    def load(cls, root: Path) -> ParaphraseIndex:
        meta = json.loads((root / "meta.json").read_text())
        if meta.get("format") != FORMAT:
            raise ValueError("index format changed")
        keys = np.load(root / "keys.npy", mmap_mode="r")
        starts = np.load(root / "starts.npy", mmap_mode="r")
        if keys.dtype != np.uint64 or keys.ndim != 2 or keys.shape[1] != 2 or len(starts) != len(keys) + 1:
            raise ValueError("index arrays do not fit together")
        return cls([keys.reshape(-1)], [starts[:-1]], int(starts[-1]), int(meta["max_n"]),
                   _map_text(root / "table.txt"), root)

    def __len__(self) -> int:
        return sum(len(b) for b in self.key_blocks) // 2

    def keys(self) -> np.ndarray:
        """All entries' keys, (entries, 2)."""
        flat = self.key_blocks[0] if len(self.key_blocks) == 1 else np.concatenate([np.zeros(0, np.uint64), *self.key_blocks])
        return np.asarray(flat).reshape(-1, 2)

    def keep(self, run_keys: np.ndarray) -> np.ndarray:
        """Indices (ascending) of the entries whose phrase and paraphrase keys are both among
        `run_keys` (any order, repeats allowed)."""
        run_keys = np.ascontiguousarray(run_keys, dtype=np.uint64)
        if _paraphrase_scan is not None:
            return np.frombuffer(_paraphrase_scan.matching_entries(self.key_blocks, run_keys), dtype=np.int64)
        return keep_numpy(self.keys(), run_keys)

    def starts(self, entries: np.ndarray) -> np.ndarray:
        """The byte offset of each given entry's triple; the table's size for entry `len(self)`."""
        entries = np.asarray(entries, dtype=np.int64)
        sizes = [len(b) for b in self.start_blocks]
        base = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(sizes, dtype=np.int64)])
        out = np.full(len(entries), self.table_bytes, dtype=np.int64)
        block = np.searchsorted(base, entries, side="right") - 1
        for b in np.unique(block[entries < base[-1]]).tolist():
            at = block == b
            out[at] = np.asarray(self.start_blocks[b])[entries[at] - base[b]]
        return out

    def triples(self, entries: np.ndarray) -> bytes:
        """The kept entries' line triples, verbatim, in the order given."""
        entries = np.asarray(entries, dtype=np.int64)
        lo, hi = self.starts(entries).tolist(), self.starts(entries + 1).tolist()
        table = self.table
        return b"".join([table[a:b] for a, b in zip(lo, hi)])

    def write_subset(self, entries: np.ndarray, out: Path) -> None:
        """The kept entries' original line triples, in file order, gzipped (level 1)."""
        import gzip

        with gzip.open(out, "wb", compresslevel=1) as g:
            g.write(self.triples(entries))


def keep_numpy(keys: np.ndarray, run_keys: np.ndarray) -> np.ndarray:
    """`ParaphraseIndex.keep` without the C extension: a bitmap of the run's keys drops most
    entries, an exact search checks the rest."""
    mask = np.uint64((1 << _FILTER_BITS) - 1)
    bits = np.zeros(1 << _FILTER_BITS, dtype=bool)
    bits[run_keys & mask] = True
    left, right = keys[:, 0], keys[:, 1]
    cand = np.flatnonzero(bits[left & mask])
    cand = cand[bits[right[cand] & mask]]
    run = np.sort(run_keys)
    ok = np.ones(len(cand), dtype=bool)
    for side in (left[cand], right[cand]):
        pos = np.minimum(np.searchsorted(run, side), max(len(run) - 1, 0))
        ok &= run[pos] == side if len(run) else False
    return cand[ok]


def _map_text(path: Path) -> Any:
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return b""  # an empty file cannot be mapped
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def _scanned_index(scan: TableScan, table: Any) -> ParaphraseIndex:
    return ParaphraseIndex(scan.keys, scan.starts, scan.offset, scan.max_n if scan.lines else 0, table)


def _save_blocks(path: Path, blocks: Sequence[np.ndarray], shape: tuple[int, ...], dtype: str) -> None:
    """One .npy file holding the blocks one after another (as np.save of their concatenation)."""
    from numpy.lib import format as npy

    with open(path, "wb") as f:
        npy.write_array_header_1_0(f, {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": shape})
        for block in blocks:
            f.write(np.ascontiguousarray(block, dtype=dtype).data)


def _save(index: ParaphraseIndex, root: Path) -> None:
    n = len(index)
    _save_blocks(root / "keys.npy", index.key_blocks, (n, 2), "<u8")
    sentinel = np.array([index.table_bytes], dtype=np.int64)
    _save_blocks(root / "starts.npy", [*index.start_blocks, sentinel], (n + 1,), "<i8")
    meta = {"format": FORMAT, "entries": n, "max_n": index.max_n, "table_bytes": index.table_bytes}
    (root / "meta.json").write_text(json.dumps(meta))


def _scan_into(table_gz: Path, root: Path) -> tuple[ParaphraseIndex, str]:
    """The table decompressed into `root/table.txt` and keyed: the index (its files not written
    yet) and the table's sha256."""
    with open(root / "table.txt", "w+b") as out:
        scan = scan_table(table_gz, out)
    return _scanned_index(scan, _map_text(root / "table.txt")), scan.sha256.hexdigest()


def build_index(table_gz: Path, root: Path) -> ParaphraseIndex:
    """Decompress the table into `root/table.txt`, key it, and write the index into `root` (a
    fresh folder; the caller renames it into place)."""
    index, _ = _scan_into(table_gz, root)
    _save(index, root)
    return index


# --------------------------------------------------------------------------- the cache
def cache_root() -> Path:
    env = os.environ.get("VLBENCH_METEOR_CACHE")
    if env:
        return Path(env)
    data = os.environ.get("VLBENCH_DATA")
    return (Path(data) if data else Path.home() / ".cache" / "vlbench") / "meteor"


def index_key(sha256: str, size: int) -> str:
    return f"{sha256[:32]}-{size}"


def _stamp(table_gz: Path) -> str:
    st = table_gz.stat()
    return f"{table_gz.resolve()}|{st.st_size}|{st.st_mtime_ns}"


def _memo_sha(table_gz: Path, cache: Path) -> str | None:
    """The table's sha256 as remembered for its (path, size, mtime), if it is."""
    try:
        known = json.loads((cache / "sha256-memo.json").read_text())
    except (OSError, ValueError):
        return None
    sha = known.get(_stamp(table_gz)) if isinstance(known, dict) else None
    return sha if isinstance(sha, str) else None


def _remember_sha(table_gz: Path, cache: Path, sha: str) -> None:
    try:
        cache.mkdir(parents=True, exist_ok=True)
        tmp = cache / f".memo-{os.getpid()}-{threading.get_ident()}"
        tmp.write_text(json.dumps({_stamp(table_gz): sha}))
        os.replace(tmp, cache / "sha256-memo.json")
    except OSError:
        pass


def _folder(cache: Path, key: str) -> Path:
    """The folder of the index of the table `key` names (`index_key`)."""
    return cache / f"index-v{FORMAT}-{key}"


class IndexBuildError(RuntimeError):
    """The index of a first run could not be built (the table unreadable, malformed, ...)."""


class IndexBuild:
    """The first use of a table on a machine: the index built in a thread (`open_index`).
    `result()` waits until the index can be used (the table read and keyed); `wait()` until its
    folder is written and renamed into place too."""

    def __init__(self, table_gz: Path, cache: Path) -> None:
        self._table, self._cache = table_gz, cache
        self._ready = threading.Event()
        self._index: ParaphraseIndex | None = None
        self._error: BaseException | None = None
        # not a daemon: a process that is done before the files are written waits for them
        self._thread = threading.Thread(target=self._run, name="vlbench-paraphrase-index")
        self._thread.start()

    def _run(self) -> None:
        tmp: Path | None = None
        try:
            with stage("building the METEOR paraphrase index (once per machine)"):
                self._cache.mkdir(parents=True, exist_ok=True)
                tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=self._cache))
                self._index, sha = _scan_into(self._table, tmp)
                self._ready.set()
                self._index.root = self._save(tmp, sha)
        except BaseException as exc:  # before the index is ready: the caller's error (result());
            if self._index is None:  # after it: the run goes on, and the next one builds again
                self._error = exc
            else:
                warnings.warn(f"METEOR: the paraphrase index could not be saved in {self._cache} "
                              f"({type(exc).__name__}: {exc}); the next run builds it again", RuntimeWarning,
                              stacklevel=1)
        finally:
            self._ready.set()
            if tmp is not None and tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    def _save(self, tmp: Path, sha: str) -> Path:
        """Write the index files into `tmp` and rename it into place (`sha`: the table's sha256);
        returns the folder."""
        assert self._index is not None
        _save(self._index, tmp)
        key = index_key(sha, self._table.stat().st_size)
        root = _folder(self._cache, key)
        try:
            os.rename(tmp, root)
        except OSError:
            if not (root / "meta.json").is_file():  # not a concurrent build that won
                raise
        _remember_sha(self._table, self._cache, sha)
        for fmt, folder in _EARLIER_FOLDERS.items():
            _remove_earlier_format(self._cache / folder.format(key=key), fmt)
        return root

    def running(self) -> bool:
        """Still reading the table or writing the index files (once it is over, the index is in
        the cache folder, or the build failed and a later call tries again)."""
        return self._thread.is_alive()

    def result(self) -> ParaphraseIndex:
        self._ready.wait()
        if self._index is None:
            exc = self._error
            raise IndexBuildError(f"{type(exc).__name__}: {exc}") from exc
        return self._index

    def wait(self) -> ParaphraseIndex:
        self._thread.join()
        return self.result()


# Builds this process has started, by (table, cache, the table's stamp): a second scorer in the same
# process (several caption files in one `vlbench score`) shares a build that is still running
# rather than start another.
_BUILDS: dict[tuple[str, str, str], IndexBuild] = {}
_BUILDS_LOCK = threading.Lock()


def open_index(table_gz: Path, cache: Path | None = None) -> ParaphraseIndex | IndexBuild:
    """The index of `table_gz` from the cache, or its build started (`IndexBuild`), or the build
    this process already started for it."""
    cache = cache or cache_root()
    with _BUILDS_LOCK:
        known = (str(table_gz.resolve()), str(cache.resolve()), _stamp(table_gz))
        build = _BUILDS.get(known)
        if build is not None and build.running():
            return build
        found = _cached(table_gz, cache)
        if found is not None:
            return found
        build = _BUILDS[known] = IndexBuild(table_gz, cache)
        return build


def _cached(table_gz: Path, cache: Path) -> ParaphraseIndex | None:
    sha = _memo_sha(table_gz, cache)
    if sha is None and (cache / "sha256-memo.json").exists():
        # the memo holds another stamp (the table moved or was touched): an index of the same
        # content may exist, so hash it rather than build again
        sha = sha256_file(table_gz)
        _remember_sha(table_gz, cache, sha)
    if sha is not None:
        root = _folder(cache, index_key(sha, table_gz.stat().st_size))
        if (root / "meta.json").is_file():
            return ParaphraseIndex.load(root)
    return None


def ensure_index(table_gz: Path, cache: Path | None = None) -> ParaphraseIndex:
    """The index of `table_gz`, built first when it is not in the cache (atomically: a temporary
    folder renamed)."""
    index = open_index(table_gz, cache)
    if isinstance(index, IndexBuild):
        try:
            return index.wait()
        except IndexBuildError as exc:
            raise exc.__cause__ or exc from None
    return index


def _remove_earlier_format(old: Path, fmt: int) -> None:
    """The same table's index in an earlier format (300-400 MB), superseded: removed when it is
    one that vlbench wrote (its meta.json says that format, and it holds only vlbench's files);
    anything else is left alone."""
    try:
        meta = json.loads((old / "meta.json").read_text())
    except (OSError, ValueError):
        return
    if isinstance(meta, dict) and meta.get("format") == fmt and {p.name for p in old.iterdir()} <= _EARLIER_FILES:
        shutil.rmtree(old, ignore_errors=True)
