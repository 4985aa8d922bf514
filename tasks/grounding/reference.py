"""A per-phrase loop written the way MDETR's `Flickr30kEntitiesRecallEvaluator` works.

Not used for scoring. It is the independent cross-check for tests and `benchmarks/`: it reads the
official tree itself (its own parsing, kept close to MDETR's copy of the official utilities) and
scores MDETR-format predictions phrase by phrase with the (P x G) IoU matrix, as MDETR does.
Differences from MDETR, on purpose: a missing sentence counts its phrases as misses instead of
raising, so partial submissions can be compared.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.backports import strict_zip


def _sentences(path: Path) -> list[list[dict[str, Any]]]:
    out = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line:
            continue
        words: list[str] = []
        phrases: list[dict[str, Any]] = []
        inside = False
        for token in line.split():
            if inside:
                if token[-1] == "]":
                    inside = False
                    token = token[:-1]
                words.append(token)
            elif token[0] == "[":
                inside = True
                parts = token.split("/")
                phrases.append(
                    {"first_word_index": len(words), "phrase_id": parts[1][3:], "phrase_type": parts[2:]}
                )
            else:
                words.append(token)
        out.append(phrases)
    return out


def _boxes(path: Path) -> dict[str, list[list[int]]]:
    boxes: dict[str, list[list[int]]] = defaultdict(list)
    for obj in ET.parse(path).getroot().findall("object"):
        container = obj.findall("bndbox")
        for name in obj.findall("name"):
            if container:
                b = container[0]
                boxes[name.text].append(
                    [int(b.findall(k)[0].text) for k in ("xmin", "ymin", "xmax", "ymax")]
                )
    return dict(boxes)


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """torchvision's box_iou in numpy: (N, 4) x (M, 4) -> (N, M), no +1."""
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    lt = np.maximum(a[:, None, :2], b[:, :2])
    rb = np.minimum(a[:, None, 2:], b[:, 2:])
    wh = (rb - lt).clip(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    union = area_a[:, None] + area_b - inter
    return inter / union


class MdetrStyleEvaluator:
    def __init__(self, tree: Path, split: str, merge_boxes: bool = False) -> None:
        tree = Path(tree)
        ids = [x.strip() for x in (tree / f"{split}.txt").read_text().splitlines() if x.strip()]
        self.boxes: dict[str, dict[str, list[list[int]]]] = {}
        self.sentences: dict[str, list[list[dict[str, Any]] | None]] = {}
        for img in ids:
            boxes = _boxes(tree / "Annotations" / f"{img}.xml")
            if merge_boxes:
                boxes = {
                    k: [[min(b[0] for b in v), min(b[1] for b in v),
                         max(b[2] for b in v), max(b[3] for b in v)]]
                    for k, v in boxes.items()
                }
            self.boxes[img] = boxes
            kept: list[list[dict[str, Any]] | None] = []
            for phrases in _sentences(tree / "Sentences" / f"{img}.txt"):
                gradable = [p for p in phrases if p["phrase_id"] in boxes]
                kept.append(gradable or None)
            self.sentences[img] = kept

    def evaluate(
        self, predictions: list[dict[str, Any]], topk: tuple[int, ...] = (1, 5, 10, -1),
        iou_thresh: float = 0.5, all_ids_as_list: bool = True,
    ) -> dict[int, dict[str, float]]:
        """MDETR's loop over prediction records. `all_ids_as_list` keeps MDETR's list of
        "image_sentence" ids, whose membership test scans the list; False uses a set."""
        positives: dict[int, dict[str, int]] = {k: defaultdict(int) for k in topk}
        totals: dict[int, dict[str, int]] = {k: defaultdict(int) for k in topk}
        all_ids = [
            f"{img}_{sid}" for img, sents in self.sentences.items()
            for sid, phrases in enumerate(sents) if phrases is not None
        ]
        known = all_ids if all_ids_as_list else set(all_ids)
        evaluated: set[str] = set()

        def tally(phrase: dict[str, Any], hit: bool, k: int) -> None:
            for cat in ["all", *phrase["phrase_type"]]:
                totals[k][cat] += 1
                positives[k][cat] += int(hit)

        for pred in predictions:
            cur_id = f"{pred['image_id']}_{pred['sentence_id']}"
            if cur_id in evaluated or cur_id not in known:
                continue  # MDETR: duplicate (first kept) or sentence without gradable phrase
            evaluated.add(cur_id)
            img = str(pred["image_id"])
            phrases = self.sentences[img][int(pred["sentence_id"])]
            if len(pred["boxes"]) != len(phrases):
                raise RuntimeError(f"wrong number of phrases for {cur_id}")
            for cur, phrase in strict_zip(pred["boxes"], phrases):
                target = self.boxes[img][phrase["phrase_id"]]
                ious = box_iou(np.asarray(cur, dtype=np.float64).reshape(-1, 4),
                               np.asarray(target))
                for k in topk:
                    sub = ious if k == -1 else ious[:k]
                    tally(phrase, bool(sub.size) and sub.max() >= iou_thresh, k)
        # Deviation from MDETR (which raises): phrases of missing sentences count as misses.
        for cur_id in all_ids:
            if cur_id not in evaluated:
                img, sid = cur_id.rsplit("_", 1)
                for phrase in self.sentences[img][int(sid)] or []:
                    for k in topk:
                        tally(phrase, False, k)
        return {k: {c: positives[k][c] / totals[k][c] for c in totals[k]} for k in topk}
