"""The query manifest: synthetic queries plus the caption gallery with precomputed class mentions.

One JSON document (`manifest.schema.json`), built by `prepare` and trusted at score time (sha256
pinned). The gallery is stored column-wise with CSR mention arrays so 616k captions load as a few
flat lists instead of 616k objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.atomic_files import atomic_write_json
from vlbench.backports import strict_zip
from vlbench.jsonio import read_trusted_json
from vlbench.tasks.decorrelated.metrics import count_relevant, pack_classes, pack_csr

FORMAT = "vlbench-decorrelated-manifest"
VERSION = 1
SCHEMA_PATH = Path(__file__).parent / "manifest.schema.json"


def canonical_id(value: Any) -> str:
    """Caption and query ids are compared as strings; a JSON integer becomes its decimal form."""
    return str(value)


@dataclass
class Query:
    id: str
    source_image_id: str | int
    file_name: str
    source_file: str
    removed_classes: tuple[str, ...]
    present_classes: tuple[str, ...]
    removed_boxes: tuple[tuple[float, float, float, float], ...]
    group: str | None = None
    # The matched query of the other group (mini v3.0+); written only when known, so manifests
    # of sources without matched pairs keep their bytes.
    matched_query_id: str | None = None


@dataclass
class Gallery:
    caption_ids: list[str | int]
    mentions: list[list[int]]  # class indices per caption


def build_manifest(
    benchmark_id: str,
    classes: Sequence[str],
    queries: Sequence[Query],
    gallery: Gallery,
    params: dict[str, Any],
    *,
    drop_unanswerable: bool = True,
) -> dict[str, Any]:
    """The manifest document. Each query's R (number of correct gallery captions) is computed here;
    queries with R = 0 cannot be answered and are dropped (counted in `stats`)."""
    index = {c: i for i, c in enumerate(classes)}
    n = len(classes)
    indptr = np.zeros(len(gallery.mentions) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(m) for m in gallery.mentions])
    flat = np.fromiter((c for m in gallery.mentions for c in m), dtype=np.int64, count=indptr[-1])
    caption_masks = pack_csr(indptr, flat, n)
    removed = pack_classes([[index[c] for c in q.removed_classes] for q in queries], n)
    present = pack_classes([[index[c] for c in q.present_classes] for q in queries], n)
    r = count_relevant(caption_masks, removed, present) if queries else np.zeros(0, np.int64)
    kept = [(q, int(k)) for q, k in strict_zip(queries, r) if k > 0 or not drop_unanswerable]
    # Matched pairs stay pairs: a query whose match was dropped goes too.
    kept_ids = {q.id for q, _ in kept}
    kept = [(q, k) for q, k in kept if q.matched_query_id is None or q.matched_query_id in kept_ids]
    groups = sorted({q.group for q, _ in kept if q.group is not None})
    return {
        "format": FORMAT,
        "version": VERSION,
        "benchmark": benchmark_id,
        "params": params,
        "classes": list(classes),
        "groups": groups,
        "stats": {
            "queries": len(kept),
            "dropped_unanswerable": len(queries) - len(kept),
            "gallery_captions": len(gallery.caption_ids),
            "captions_with_mentions": int(np.count_nonzero(np.diff(indptr))),
        },
        "queries": [
            {
                "id": q.id,
                "source_image_id": q.source_image_id,
                "file_name": q.file_name,
                "source_file": q.source_file,
                "removed_classes": list(q.removed_classes),
                "present_classes": list(q.present_classes),
                "removed_boxes": [list(b) for b in q.removed_boxes],
                "group": q.group,
                **({"matched_query_id": q.matched_query_id} if q.matched_query_id is not None else {}),
                "n_relevant": k,
            }
            for q, k in kept
        ],
        "gallery": {
            "caption_ids": list(gallery.caption_ids),
            "mention_indptr": indptr.tolist(),
            "mention_classes": flat.tolist(),
        },
    }


def write_manifest(path: Path, manifest: dict[str, Any]) -> Path:
    # Compact separators: the file is read by machines and sha256-pinned.
    atomic_write_json(path, manifest, indent=None)
    return path


class CaptionIndex:
    """Gallery caption id -> row. Ids are compared in canonical form (decimal string of a JSON
    integer). When every gallery id is a JSON integer (Karpathy sentids), lookups go through a
    sorted int64 array instead of a 616k-entry dict: building the dict was most of the load time."""

    def __init__(self, ids: list[Any]) -> None:
        self._ints: np.ndarray | None = None
        if all(type(c) is int for c in ids):
            arr = np.asarray(ids, dtype=np.int64)
            self._order = np.argsort(arr, kind="stable")
            self._sorted = arr[self._order]
            if len(arr) and np.any(self._sorted[1:] == self._sorted[:-1]):
                raise ValueError("the gallery repeats a caption id")
            self._ints = arr
            self._dict: dict[str, int] = {}
        else:
            keys = [canonical_id(c) for c in ids]
            self._dict = dict(strict_zip(keys, range(len(keys))))
            if len(self._dict) != len(keys):
                raise ValueError("the gallery repeats a caption id")
            self._keys = keys

    def __len__(self) -> int:
        return len(self._ints) if self._ints is not None else len(self._dict)

    def ids(self) -> list[str]:
        """Canonical ids in gallery order."""
        return [str(c) for c in self._ints.tolist()] if self._ints is not None else list(self._keys)

    def get(self, key: str) -> int | None:
        """Row of a canonical id, or None."""
        if self._ints is None:
            return self._dict.get(key)
        if not (key.isascii() and key.isdigit()) or (len(key) > 1 and key[0] == "0") or len(key) > 18:
            return None
        return self.lookup_ints([int(key)])[0]

    def lookup_ints(self, values: Sequence[int]) -> list[int | None]:
        assert self._ints is not None
        v = np.asarray(values, dtype=np.int64)
        pos = np.searchsorted(self._sorted, v).clip(0, max(len(self._sorted) - 1, 0))
        hit = self._sorted[pos] == v if len(self._sorted) else np.zeros(len(v), dtype=bool)
        rows = self._order[pos]
        return [int(r) if h else None for r, h in strict_zip(rows.tolist(), hit.tolist())]

    @property
    def all_int(self) -> bool:
        return self._ints is not None

    def rows(self, ids: Sequence[Any]) -> np.ndarray:
        """Row of every id (a JSON int, or a string in canonical form), -1 where unknown."""
        if self._ints is None:
            get = self._dict.get
            return np.fromiter((get(canonical_id(x), -1) for x in ids), dtype=np.int64, count=len(ids))
        values = np.fromiter((_as_int(x) for x in ids), dtype=np.int64, count=len(ids))
        if not len(self._sorted):
            return np.full(len(ids), -1, dtype=np.int64)
        pos = np.searchsorted(self._sorted, values).clip(0, len(self._sorted) - 1)
        hit = (self._sorted[pos] == values) & (values >= 0)
        return np.where(hit, self._order[pos], -1)


def _as_int(x: Any) -> int:
    """The integer a caption id denotes in canonical form (JSON int, or its decimal string); -1
    when it denotes none (ids are non-negative, so -1 never matches)."""
    if type(x) is int:
        return x if 0 <= x < 2**63 else -1
    if type(x) is str and x.isascii() and x.isdigit() and (len(x) == 1 or x[0] != "0") and len(x) < 19:
        return int(x)
    return -1


@dataclass
class GroundTruth:
    """The manifest in scoring form."""

    classes: list[str]
    groups: list[str]
    query_ids: list[str]
    query_index: dict[str, int]
    query_groups: list[str | None]
    removed: np.ndarray  # (Q, B) packed class masks
    present: np.ndarray  # (Q, B)
    n_relevant: np.ndarray  # (Q,) int64
    caption_index: CaptionIndex
    caption_masks: np.ndarray  # (N, B) packed
    raw: dict[str, Any]
    query_sources: list[str]  # (Q,) the source image of each query, as a string
    query_files: list[str]  # (Q,) the file name of each query's image


def load_manifest(path: Path) -> GroundTruth:
    doc = read_trusted_json(path)
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise ValueError(f"{path}: not a {FORMAT} v{VERSION} file")
    classes = doc["classes"]
    index = {c: i for i, c in enumerate(classes)}
    n = len(classes)
    queries = doc["queries"]
    gallery = doc["gallery"]
    indptr = np.asarray(gallery["mention_indptr"], dtype=np.int64)
    flat = np.asarray(gallery["mention_classes"], dtype=np.int64)
    return GroundTruth(
        classes=classes,
        groups=list(doc.get("groups", [])),
        query_ids=[q["id"] for q in queries],
        query_index={q["id"]: i for i, q in enumerate(queries)},
        query_groups=[q.get("group") for q in queries],
        removed=pack_classes([[index[c] for c in q["removed_classes"]] for q in queries], n),
        present=pack_classes([[index[c] for c in q["present_classes"]] for q in queries], n),
        n_relevant=np.asarray([q["n_relevant"] for q in queries], dtype=np.int64),
        caption_index=CaptionIndex(gallery["caption_ids"]),
        caption_masks=pack_csr(indptr, flat, n),
        raw=doc,
        query_sources=[str(q["source_image_id"]) for q in queries],
        query_files=[q["file_name"] for q in queries],
    )
