"""Flickr30k Entities grounding: the official tree (read by `vlbench.tasks.flickr30k_entities`)
made into the compact ground-truth file, and that file loaded.

Official tree (github.com/BryanPlummer/flickr30k_entities, `annotations.zip`):
`Sentences/<id>.txt`, `Annotations/<id>.xml`, `train.txt`, `val.txt`, `test.txt`.

Ground truth is built exactly as MDETR's evaluator (`datasets/flickr_eval.py`) builds it, which
GLIP, FIBER, Kosmos-2 and Ferret copy:
- boxes are the raw XML integers (1-based, VOC style). The official Python parser subtracts 1 since
  commit 873a1c1; MDETR's copy of it does not, and every published number uses MDETR's copy;
- a phrase is gradable only if its chain has at least one box (this drops chain 0 = notvisual,
  `nobndbox` chains and box-less `scene` chains);
- a sentence with no gradable phrase is dropped.

The compact file is columnar JSON so that loading 14,500 phrases takes milliseconds.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.tasks.flickr30k_entities import (
    caption_lines,
    caption_markup,
    decode_sentences,
    parse_annotation,
)
from vlbench.tasks.grounding.protocol import TYPES

GT_FORMAT = "vlbench-flickr30k-entities-gt"
GT_FORMAT_VERSION = 1


def merge_boxes(boxes: np.ndarray) -> np.ndarray:
    """MERGED-BOX: the smallest box enclosing all of a chain's boxes, shape (4,)."""
    return np.array([boxes[:, 0].min(), boxes[:, 1].min(), boxes[:, 2].max(), boxes[:, 3].max()])


def find_tree(root: Path, split: str) -> Path:
    """The folder holding `Sentences/`, `Annotations/` and `<split>.txt` inside `root`."""
    for candidate in (root, root / "flickr30k_entities", root / "annotations", root / "flickr30k"):
        if (candidate / "Sentences").is_dir() and (candidate / "Annotations").is_dir():
            if not (candidate / f"{split}.txt").is_file():
                raise FileNotFoundError(f"{candidate} has no {split}.txt split file")
            return candidate
    raise FileNotFoundError(
        f"no Flickr30k Entities tree (Sentences/, Annotations/, {split}.txt) in {root}"
    )


def split_image_ids(text: str) -> list[str]:
    """The image ids of a split file's text: one a line, blank lines skipped."""
    return [i for i in (line.strip() for line in text.splitlines()) if i]


def read_image_files(tree: Path, image_ids: Iterable[str]) -> Iterator[tuple[bytes, bytes]]:
    """Each image's (`Annotations/<id>.xml`, `Sentences/<id>.txt`) bytes, read in that order."""
    annotations = os.path.join(tree, "Annotations")
    sentences = os.path.join(tree, "Sentences")
    for image_id in image_ids:
        # plain str paths and open(): Path objects and read_bytes() add half again to the reads
        with open(os.path.join(annotations, f"{image_id}.xml"), "rb") as fh:
            xml = fh.read()
        with open(os.path.join(sentences, f"{image_id}.txt"), "rb") as fh:
            yield xml, fh.read()


def build_ground_truth(
    tree: Path, split: str, split_file: Path | None = None, types: tuple[str, ...] = TYPES
) -> dict[str, Any]:
    """Read the official tree for one split into the compact columnar document; `types` are the
    entity types reported per column (Flickr30k's eight, or the mini world's)."""
    split_file = split_file or tree / f"{split}.txt"
    image_ids = split_image_ids(split_file.read_text())
    return ground_truth_from_files(image_ids, read_image_files(tree, image_ids), split, types)


def ground_truth_from_files(
    image_ids: list[str], files: Iterable[tuple[bytes, bytes]], split: str,
    types: tuple[str, ...] = TYPES,
) -> dict[str, Any]:
    """`build_ground_truth` from each image's annotation and sentence files' bytes, in the split's
    order (`read_image_files`), so that a caller that has read them (to hash them) parses the same
    bytes. One pass, with the derived indexes filled as the rows are made."""
    images: dict[str, list] = {"id": [], "width": [], "height": [], "n_sentences": []}
    chains: dict[str, list] = {"image": [], "id": [], "box_start": [], "box_count": []}
    ungradable: dict[str, list] = {"image": [], "sentence": [], "first_word": []}
    p_image: list[int] = []
    p_sentence: list[int] = []
    p_first: list[int] = []
    p_chain: list[int] = []
    p_types: list[tuple[str, ...]] = []
    p_text: list[str] = []
    p_mask: list[int] = []
    p_repeats: list[list[int]] = []
    p_id: list[str] = []
    boxes: list[int] = []
    # The derived indexes, stored so that loading needs no Python loop over phrases. A split file
    # that lists an image twice gives it one entry here, filled by both (in row order).
    lookup: dict[str, dict[str, dict[str, int]]] = {i: {} for i in image_ids}
    ungradable_index: dict[str, dict[str, list[str]]] = {i: {} for i in image_ids}
    # A phrase's type columns depend only on its types: (bit mask, [(column, extra count)]).
    # MDETR tallies a phrase once per entry of its type list, so a repeated type counts twice;
    # the rare repeats are stored as [row, type column, extra count]. Phrases with the same types
    # share one tuple (JSON writes it as the list it was): a list per phrase would be 14,000
    # objects more for the garbage collector to scan, in the caller's process, on every pass.
    type_columns: dict[tuple[str, ...], tuple[tuple[str, ...], int, list[tuple[int, int]]]] = {}
    for ii, (image_id, (xml, text)) in enumerate(zip(image_ids, files)):
        ann = parse_annotation(xml)
        lines = caption_lines(decode_sentences(text))
        images["id"].append(image_id)
        images["width"].append(ann.width)
        images["height"].append(ann.height)
        images["n_sentences"].append(len(lines))
        chain_index: dict[str, int] = {}
        for chain_id, chain_boxes in ann.boxes.items():
            chain_index[chain_id] = len(chains["id"])
            chains["image"].append(ii)
            chains["id"].append(chain_id)
            chains["box_start"].append(len(boxes) // 4)
            chains["box_count"].append(len(chain_boxes))
            for box in chain_boxes:
                boxes.extend(box)
        image_lookup = lookup[image_id]
        image_ungradable = ungradable_index[image_id]
        for si, line in enumerate(lines):
            sentence = str(si)
            for first, chain_id, phrase_types, phrase_text in caption_markup(line)[1]:
                chain = chain_index.get(chain_id)
                if chain is None:
                    ungradable["image"].append(ii)
                    ungradable["sentence"].append(si)
                    ungradable["first_word"].append(first)
                    image_ungradable.setdefault(sentence, []).append(str(first))
                    continue
                row = len(p_image)
                p_image.append(ii)
                p_sentence.append(si)
                p_first.append(first)
                p_chain.append(chain)
                p_text.append(phrase_text)
                image_lookup.setdefault(sentence, {})[str(first)] = row
                p_id.append(f"{image_id}/{si}/{first}")
                columns = type_columns.get(phrase_types)
                if columns is None:
                    columns = type_columns[phrase_types] = (
                        phrase_types,
                        sum(1 << j for j, t in enumerate(types) if t in phrase_types),
                        [(j, phrase_types.count(t) - 1) for j, t in enumerate(types) if phrase_types.count(t) > 1],
                    )
                p_types.append(columns[0])
                p_mask.append(columns[1])
                if columns[2]:
                    p_repeats.extend([row, j, extra] for j, extra in columns[2])
    phrases = {"image": p_image, "sentence": p_sentence, "first_word": p_first, "chain": p_chain,
               "types": p_types, "text": p_text, "type_mask": p_mask, "type_repeats": p_repeats, "id": p_id}
    return {
        "format": GT_FORMAT,
        "types": list(types),
        "lookup": lookup,
        "ungradable_index": ungradable_index,
        "format_version": GT_FORMAT_VERSION,
        "split": split,
        "coordinates": "raw XML integers (1-based), as MDETR's evaluator",
        "images": images,
        "chains": chains,
        "boxes": boxes,
        "phrases": phrases,
        "ungradable": ungradable,
    }


def write_ground_truth(doc: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    # Sorted keys and no whitespace: byte-identical output for identical input (pinned sha256).
    tmp.write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")), encoding="utf-8")
    tmp.replace(path)
    return path


@dataclass
class GroundTruth:
    """In-memory ground truth: phrase rows (the scored population) and chain boxes."""

    split: str
    image_ids: list[str]
    width: np.ndarray  # (I,) float64
    height: np.ndarray
    n_sentences: list[int]
    p_image: np.ndarray  # (P,) image index of each gradable phrase
    p_sentence: np.ndarray
    p_first_word: np.ndarray
    p_chain: np.ndarray  # global chain index
    p_types: list[Sequence[str]]  # lists, or tuples shared between phrases (never changed)
    p_text: list[str]
    types: tuple[str, ...]  # the entity types reported per column
    type_member: np.ndarray  # (P, len(types)) int64: times the phrase is tallied in each type
    chain_ids: list[str]
    c_box_start: np.ndarray
    c_box_count: np.ndarray
    boxes: np.ndarray  # (B, 4) float64, raw XML integers
    merged: np.ndarray  # (C, 4) float64
    # image id -> sentence index string -> first word index string -> phrase row
    lookup: dict[str, dict[str, dict[str, int]]]
    # image id -> sentence index string -> first word index strings of phrases without boxes
    ungradable: dict[str, dict[str, set[str]]]
    item_ids: list[str] = field(default_factory=list)  # "image/sentence/first word" per row
    image_index: dict[str, int] = field(default_factory=dict)
    p_chain_id: list[str] = field(default_factory=list)  # chain id string per phrase row
    boxes_t: np.ndarray = field(default_factory=lambda: np.zeros((4, 0)))  # (4, B) for the IoU
    merged_t: np.ndarray = field(default_factory=lambda: np.zeros((4, 0)))

    def __post_init__(self) -> None:
        self.image_index = {image_id: i for i, image_id in enumerate(self.image_ids)}
        self.p_chain_id = [self.chain_ids[c] for c in self.p_chain.tolist()]
        self.boxes_t = np.ascontiguousarray(self.boxes.T)
        self.merged_t = np.ascontiguousarray(self.merged.T)

    @property
    def n_phrases(self) -> int:
        return len(self.p_image)

    @property
    def n_sentences_scored(self) -> int:
        return sum(len(s) for s in self.lookup.values())


def ground_truth_from_doc(doc: dict[str, Any]) -> GroundTruth:
    if doc.get("format") != GT_FORMAT or doc.get("format_version") != GT_FORMAT_VERSION:
        raise ValueError("not a vlbench Flickr30k Entities ground-truth file (format/version)")
    images, chains, phrases = doc["images"], doc["chains"], doc["phrases"]
    image_ids: list[str] = images["id"]
    boxes = np.asarray(doc["boxes"], dtype=np.float64).reshape(-1, 4)
    c_start = np.asarray(chains["box_start"], dtype=np.int64)
    c_count = np.asarray(chains["box_count"], dtype=np.int64)
    merged = np.empty((len(c_start), 4))
    if len(c_start):
        # Enclosing box per chain via reduceat over each chain's contiguous box range.
        merged[:, 0] = np.minimum.reduceat(boxes[:, 0], c_start)
        merged[:, 1] = np.minimum.reduceat(boxes[:, 1], c_start)
        merged[:, 2] = np.maximum.reduceat(boxes[:, 2], c_start)
        merged[:, 3] = np.maximum.reduceat(boxes[:, 3], c_start)
    p_image = np.asarray(phrases["image"], dtype=np.int64)
    p_sentence = np.asarray(phrases["sentence"], dtype=np.int64)
    p_first = np.asarray(phrases["first_word"], dtype=np.int64)
    p_types: list[Sequence[str]] = phrases["types"]
    masks = np.asarray(phrases["type_mask"], dtype=np.int64)
    types = tuple(doc["types"])
    type_member = (masks[:, None] >> np.arange(len(types))) & 1
    for row, j, extra in phrases["type_repeats"]:
        type_member[row, j] += extra
    ungradable = {
        image: {s: set(words) for s, words in sentences.items()}
        for image, sentences in doc["ungradable_index"].items()
    }
    return GroundTruth(
        split=doc["split"],
        image_ids=image_ids,
        width=np.asarray(images["width"], dtype=np.float64),
        height=np.asarray(images["height"], dtype=np.float64),
        n_sentences=list(images["n_sentences"]),
        p_image=p_image,
        p_sentence=p_sentence,
        p_first_word=p_first,
        p_chain=np.asarray(phrases["chain"], dtype=np.int64),
        p_types=p_types,
        p_text=phrases["text"],
        types=types,
        type_member=type_member,
        chain_ids=chains["id"],
        c_box_start=c_start,
        c_box_count=c_count,
        boxes=boxes,
        merged=merged,
        lookup=doc["lookup"],
        ungradable=ungradable,
        item_ids=phrases["id"],
    )


def load_ground_truth_file(path: Path) -> GroundTruth:
    return ground_truth_from_doc(json.loads(Path(path).read_text(encoding="utf-8")))
