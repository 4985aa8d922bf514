"""The retrieval ground truth: test images, their captions, and the fold of each item.

Written by `prepare` from a Karpathy split file as a small JSON document:
`{"format": "vlbench-retrieval-gt", "version": 1, "images": [...], "captions": [...],
"caption_image": [...], ...}`, in Karpathy file order (the order the 1K folds are cut from).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.atomic_files import atomic_write_json
from vlbench.backports import strict_zip
from vlbench.errors import UsageError
from vlbench.jsonio import read_trusted_json
from vlbench.tasks.karpathy import parse_karpathy

FORMAT = "vlbench-retrieval-gt"


@dataclass
class RetrievalGroundTruth:
    images: list[str]
    captions: list[str]
    caption_image: np.ndarray  # index into `images` for every caption
    folds: int = 1
    image_index: dict[Any, int] = field(default_factory=dict)
    caption_index: dict[Any, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.folds < 1 or len(self.images) % self.folds:
            raise UsageError(f"{len(self.images)} images cannot be cut into {self.folds} equal folds")
        self.image_index = _id_lookup(self.images)
        self.caption_index = _id_lookup(self.captions)
        counts = np.bincount(self.caption_image, minlength=len(self.images))
        if counts.min(initial=1) == 0:
            raise UsageError("every test image needs at least one caption")

    @property
    def image_fold(self) -> np.ndarray:
        return np.arange(len(self.images)) // (len(self.images) // self.folds)

    @property
    def caption_fold(self) -> np.ndarray:
        return self.image_fold[self.caption_image]


def _id_lookup(ids: list[str]) -> dict[Any, int]:
    """Index by the id string, and by the integer when the id is a canonical decimal.

    Submissions may write ids as JSON numbers or strings; JSON object keys are always strings.
    """
    lookup: dict[Any, int] = dict(strict_zip(ids, range(len(ids))))
    if len(lookup) != len(ids):
        raise UsageError("ground truth ids are not unique")
    # Canonical decimals only: "007" is not the integer 7. COCO and Flickr ids are all canonical,
    # which three C-level passes confirm; the per-id check is the slow fallback.
    try:
        as_int = list(map(int, ids))
        all_canonical = list(map(str, as_int)) == ids
    except ValueError:
        all_canonical = False
    if all_canonical:
        lookup.update(strict_zip(as_int, range(len(ids))))
    else:
        lookup.update(
            (int(item), i)
            for i, item in enumerate(ids)
            if item.isascii() and item.isdigit() and (item[0] != "0" or item == "0")
        )
    return lookup


def build_ground_truth(doc: dict[str, Any], split: str, captions_per_image: int | None) -> dict[str, Any]:
    images, captions, caption_image = [], [], []
    for image in parse_karpathy(doc):
        if image.split != split:
            continue
        kept = image.captions[:captions_per_image] if captions_per_image else image.captions
        if not kept:
            continue
        for caption in kept:
            captions.append(caption.id)
            caption_image.append(len(images))
        images.append(image.id)
    if not images:
        raise UsageError(f"the source has no images in split {split!r}")
    _check_ids(images, "image")
    _check_ids(captions, "caption")
    return {
        "format": FORMAT,
        "version": 1,
        "split": split,
        "captions_per_image": captions_per_image,
        "images": images,
        "captions": captions,
        "caption_image": caption_image,
    }


def _check_ids(ids: list[str], what: str) -> None:
    """Ids a submission can name: present and unique (a source with empty or repeated ids would
    otherwise give a ground truth that silently merges or drops items)."""
    present = [i for i in ids if i.strip()]
    empty, repeated = len(ids) - len(present), len(present) - len(set(present))
    if empty or repeated:
        found = [f"{empty:,} empty" if empty else "", f"{repeated:,} repeated" if repeated else ""]
        raise UsageError(f"the source's {what} ids are not usable: {' and '.join(f for f in found if f)} "
                         f"among {len(ids):,} ({what} ids must be present and unique)")


def write_ground_truth(path: str | os.PathLike, doc: dict[str, Any]) -> Path:
    atomic_write_json(path, doc, indent=None)
    return Path(path)


def read_ground_truth(path: str | os.PathLike, folds: int) -> RetrievalGroundTruth:
    doc = read_trusted_json(path)
    if doc.get("format") != FORMAT:
        raise UsageError(f"{path} is not a vlbench retrieval ground-truth file")
    return RetrievalGroundTruth(
        images=[str(i) for i in doc["images"]],
        captions=[str(c) for c in doc["captions"]],
        caption_image=np.asarray(doc["caption_image"], dtype=np.int64),
        folds=folds,
    )
