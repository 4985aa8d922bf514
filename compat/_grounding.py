"""The one module of `vlbench.compat` that imports vlbench's grounding internals.

The MDETR drop-in reads the Flickr30k Entities tree and scores phrases only through `EntitiesSplit`
here: the tree is read by vlbench's own reader into its ground truth
(`vlbench.tasks.grounding.loaders`), and recall is computed by its vectorised metric functions
(`vlbench.tasks.grounding.metrics`), the code `vlbench score --format mdetr` runs. So when those
modules move, only the imports below change.

The ground truth read from a tree is cached (`VLBENCH_COMPAT_CACHE`, else `<data dir>/compat`:
`$VLBENCH_DATA` or `~/.cache/vlbench`), keyed by the sha256 of every file it was read from (the
split file, each image's sentences and annotations), so a changed file changes the key. Each file
is read once: hashed for the key and, when the key is not cached, parsed from the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vlbench.atomic_files import atomic_write_bytes
from vlbench.ground_truth import default_data_dir
from vlbench.tasks.grounding.loaders import (
    GT_FORMAT_VERSION,
    GroundTruth,
    build_ground_truth,
    ground_truth_from_doc,
    ground_truth_from_files,
    read_image_files,
    split_image_ids,
)
from vlbench.tasks.grounding.metrics import box_best_iou, phrase_hits

CACHE_VERSION = 1


def cache_root() -> Path:
    env = os.environ.get("VLBENCH_COMPAT_CACHE")
    return Path(env).expanduser() if env else default_data_dir() / "compat"


def _read_tree(tree: Path, subset: str) -> tuple[str, list[str], list[tuple[bytes, bytes]]]:
    """(cache key, image ids, each image's annotation and sentence bytes): every file read once,
    hashed and then parsed from the same bytes. The key is the sha256 over the split file and
    every file of its images, each length-prefixed."""
    split_file = tree / f"{subset}.txt"
    split = split_file.read_bytes()
    image_ids = split_image_ids(split_file.read_text())  # as build_ground_truth reads it
    files = list(read_image_files(tree, image_ids))
    h = hashlib.sha256(f"vlbench-compat-entities/{CACHE_VERSION}/{GT_FORMAT_VERSION}/{subset}\n".encode())
    h.update(len(split).to_bytes(8, "little") + split)
    for xml, sentences in files:
        h.update(len(sentences).to_bytes(8, "little") + sentences)
        h.update(len(xml).to_bytes(8, "little") + xml)
    return h.hexdigest(), image_ids, files


def _ground_truth(tree: Path, subset: str) -> GroundTruth:
    try:
        key, image_ids, files = _read_tree(tree, subset)
    except (OSError, UnicodeDecodeError):
        # a missing or unreadable file: the reader below says which
        return ground_truth_from_doc(build_ground_truth(tree, subset))
    cached = cache_root() / "flickr30k_entities" / f"{subset}-{key[:32]}.json"
    try:
        return ground_truth_from_doc(json.loads(cached.read_bytes()))
    except (OSError, ValueError, KeyError):
        pass
    doc = ground_truth_from_files(image_ids, files, subset)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(cached, json.dumps(doc, separators=(",", ":")).encode("utf-8"))
    except OSError as exc:
        warnings.warn(f"could not cache the Flickr30k Entities ground truth in {cached.parent} ({exc}); "
                      "the next run reads the tree again (set VLBENCH_COMPAT_CACHE to a writable folder)",
                      RuntimeWarning, stacklevel=3)
    return ground_truth_from_doc(doc)


@dataclass
class EntitiesSplit:
    """One split of the Flickr30k Entities tree, read as MDETR reads it: boxes are the raw XML
    integers, a phrase is scored when its chain has a box, a sentence when it has such a phrase.

    `sentences` maps MDETR's sentence key `f"{image_id}_{sentence_index}"` to the rows of its
    scored phrases, in the split's order; a row's entity types are `types(row)`."""

    gt: GroundTruth
    sentences: dict[str, range]

    @classmethod
    def read(cls, flickr_path: str | os.PathLike[str], subset: str) -> EntitiesSplit:
        tree = Path(flickr_path)
        if not (tree / f"{subset}.txt").is_file():
            raise FileNotFoundError(f"no {subset}.txt split file in {tree} (MDETR's flickr_path holds "
                                    f"{subset}.txt, Annotations/ and Sentences/)")
        gt = _ground_truth(tree, subset)
        sentences: dict[str, range] = {}
        for image in gt.image_ids:
            for sentence, phrases in gt.lookup.get(image, {}).items():
                rows = phrases.values()
                sentences[f"{image}_{sentence}"] = range(min(rows), max(rows) + 1)
        # the split's order (MDETR lists sentences image by image, in caption order)
        order = sorted(sentences, key=lambda k: sentences[k].start)
        return cls(gt, {k: sentences[k] for k in order})

    @property
    def image_ids(self) -> list[str]:
        return list(self.gt.image_ids)

    @property
    def n_phrases(self) -> int:
        return self.gt.n_phrases

    def types(self, row: int) -> Sequence[str]:
        return self.gt.p_types[row]

    def hits(self, rows: Sequence[int], boxes: np.ndarray, counts: np.ndarray, topk: Sequence[int],
             iou_thresh: float, merge_boxes: bool) -> np.ndarray:
        """Hit matrix (len(rows), len(topk)): phrase `rows[e]` was given `counts[e]` ranked boxes,
        consecutive in `boxes` (M, 4); column j is R@topk[j] (-1: any box of the list). With
        `merge_boxes` the chain's enclosing box is the target (MDETR's merge_boxes=True)."""
        gt = self.gt
        n = len(rows)
        chain = gt.p_chain[np.asarray(rows, dtype=np.int64)]
        starts = np.cumsum(counts) - counts
        phrase = np.repeat(np.arange(n, dtype=np.int64), counts)
        rank = np.arange(len(phrase), dtype=np.int64) - np.repeat(starts, counts)
        pred = np.ascontiguousarray(boxes.T, dtype=np.float64)
        if merge_boxes:
            best = box_best_iou(pred, phrase, gt.merged_t, chain, np.ones(len(chain), dtype=np.int64))
        else:
            best = box_best_iou(pred, phrase, gt.boxes_t, gt.c_box_start[chain], gt.c_box_count[chain])
        ks = tuple(sorted({k for k in topk if k != -1}))
        given = counts > 0
        h = phrase_hits(best, rank, np.flatnonzero(given), starts[given], n, iou_thresh, ks)
        return np.stack([h[:, -1] if k == -1 else h[:, ks.index(k)] for k in topk], axis=1) if topk \
            else np.zeros((n, 0), dtype=bool)
