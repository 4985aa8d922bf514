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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.backports import strict_zip
from vlbench.tasks.flickr30k_entities import parse_annotation, parse_sentences
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


def build_ground_truth(
    tree: Path, split: str, split_file: Path | None = None, types: tuple[str, ...] = TYPES
) -> dict[str, Any]:
    """Read the official tree for one split into the compact columnar document; `types` are the
    entity types reported per column (Flickr30k's eight, or the mini world's)."""
    split_file = split_file or tree / f"{split}.txt"
    image_ids = [line.strip() for line in split_file.read_text().splitlines()]
    image_ids = [i for i in image_ids if i]
    images: dict[str, list] = {"id": [], "width": [], "height": [], "n_sentences": []}
    phrases: dict[str, list] = {
        "image": [], "sentence": [], "first_word": [], "chain": [], "types": [], "text": [],
    }
    chains: dict[str, list] = {"image": [], "id": [], "box_start": [], "box_count": []}
    ungradable: dict[str, list] = {"image": [], "sentence": [], "first_word": []}
    boxes: list[int] = []
    for ii, image_id in enumerate(image_ids):
        ann = parse_annotation((tree / "Annotations" / f"{image_id}.xml").read_bytes())
        sentences = parse_sentences(
            (tree / "Sentences" / f"{image_id}.txt").read_text(encoding="utf-8")
        )
        images["id"].append(image_id)
        images["width"].append(ann.width)
        images["height"].append(ann.height)
        images["n_sentences"].append(len(sentences))
        chain_index: dict[str, int] = {}
        for chain_id, chain_boxes in ann.boxes.items():
            chain_index[chain_id] = len(chains["id"])
            chains["image"].append(ii)
            chains["id"].append(chain_id)
            chains["box_start"].append(len(boxes) // 4)
            chains["box_count"].append(len(chain_boxes))
            for box in chain_boxes:
                boxes.extend(box)
        for si, sentence in enumerate(sentences):
            for phrase in sentence.phrases:
                if phrase.phrase_id in chain_index:
                    phrases["image"].append(ii)
                    phrases["sentence"].append(si)
                    phrases["first_word"].append(phrase.first_word_index)
                    phrases["chain"].append(chain_index[phrase.phrase_id])
                    phrases["types"].append(list(phrase.types))
                    phrases["text"].append(phrase.text)
                else:
                    ungradable["image"].append(ii)
                    ungradable["sentence"].append(si)
                    ungradable["first_word"].append(phrase.first_word_index)
    # Derived indexes, stored so that loading needs no Python loop over phrases.
    lookup: dict[str, dict[str, dict[str, int]]] = {i: {} for i in image_ids}
    for row, (ii, si, fw) in enumerate(
        strict_zip(phrases["image"], phrases["sentence"], phrases["first_word"])
    ):
        lookup[image_ids[ii]].setdefault(str(si), {})[str(fw)] = row
    ungradable_index: dict[str, dict[str, list[str]]] = {i: {} for i in image_ids}
    for ii, si, fw in strict_zip(ungradable["image"], ungradable["sentence"], ungradable["first_word"]):
        ungradable_index[image_ids[ii]].setdefault(str(si), []).append(str(fw))
    phrases["type_mask"] = [
        sum(1 << j for j, t in enumerate(types) if t in phrase_types)
        for phrase_types in phrases["types"]
    ]
    # MDETR tallies a phrase once per entry of its type list, so a repeated type counts twice;
    # the rare repeats are stored as [row, type column, extra count].
    phrases["type_repeats"] = [
        [row, j, phrase_types.count(t) - 1]
        for row, phrase_types in enumerate(phrases["types"])
        for j, t in enumerate(types)
        if phrase_types.count(t) > 1
    ]
    phrases["id"] = [
        f"{image_ids[ii]}/{si}/{fw}"
        for ii, si, fw in strict_zip(phrases["image"], phrases["sentence"], phrases["first_word"])
    ]
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
    p_types: list[list[str]]
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
    p_types: list[list[str]] = phrases["types"]
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
