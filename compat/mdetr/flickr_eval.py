"""MDETR's Flickr30k Entities evaluator (`datasets/flickr_eval.py` of ashkamath/mdetr), the one
GLIP, FIBER and others copy, on vlbench's grounding code.

`FlickrEvaluator(flickr_path, subset, top_k, iou_thresh, merge_boxes)`: `update(predictions)`
with MDETR's records `{"image_id", "sentence_id", "boxes": [ranked [x1, y1, x2, y2] boxes per
scored phrase, in sentence order]}`, `synchronize_between_processes()`, `summarize()` -> the dict
`{"Recall@1_all": ..., "Recall@1_people": ..., "Upper_bound_all": ...}`, after printing MDETR's
table. The same tree layout (`flickr_path/{subset}.txt`, `Annotations/`, `Sentences/`), the same
numbers (the IoU of torchvision's formula in float64, `>=` the threshold, recall per entity type
as MDETR tallies it), the same messages and errors (a missing sentence raises
`RuntimeError("Missing predictions")`; a repeated sentence keeps the first record).

What differs: the phrases are scored all at once with numpy rather than one by one; the tree is
read once and then taken from a cache keyed by its files' sha256; a phrase given an empty box list
is a miss (MDETR's `box_area` fails on it); a phrase's boxes that are not N x 4 raise a ValueError
naming the sentence (MDETR fails on an assertion); missing sentences are listed in split order.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

import numpy as np

from vlbench.compat._grounding import EntitiesSplit

SUBSETS = ("train", "test", "val")


def _box_array(box_lists: list[Any], sentences: list[str], n_phrases: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(boxes (M, 4) float64, boxes per phrase) from each phrase's ranked boxes as given (lists,
    arrays or tensors: whatever numpy reads as N x 4); `box_lists` holds the phrases of
    `sentences[i]`, `n_phrases[i]` of them, one sentence after the other."""
    counts = np.fromiter(map(len, box_lists), dtype=np.int64, count=len(box_lists))
    total = int(counts.sum())
    try:
        if all(len(b) == 4 for b in chain.from_iterable(box_lists)):
            flat = np.fromiter(chain.from_iterable(chain.from_iterable(box_lists)), dtype=np.float64,
                               count=4 * total)
            return flat.reshape(-1, 4), counts
    except (TypeError, ValueError):
        pass  # not plain nested numbers: phrase by phrase below, which names a bad one
    arrays = []
    owners = ((sentence, j) for sentence, n in zip(sentences, n_phrases) for j in range(n))
    for boxes, (sentence, j) in zip(box_lists, owners):
        a = np.asarray(boxes, dtype=np.float64)
        if a.size == 0:
            a = a.reshape(0, 4)
        if a.ndim != 2 or a.shape[1] != 4:
            raise ValueError(f"the boxes of phrase {j} of sentence {sentence} (image_sentence) have shape "
                             f"{a.shape}; each phrase takes a list of [x1, y1, x2, y2] boxes")
        arrays.append(a)
    return np.concatenate(arrays) if arrays else np.zeros((0, 4)), \
        np.array([len(a) for a in arrays], dtype=np.int64)


class Flickr30kEntitiesRecallEvaluator:
    """MDETR's evaluator proper: reads the split (printing what MDETR prints with `verbose`) and
    `evaluate(predictions)` -> {k: {category: recall}} (categories: "all", then each entity type
    in the order first met)."""

    def __init__(self, flickr_path: str | os.PathLike[str], subset: str = "test",
                 topk: Sequence[int] = (1, 5, 10, -1), iou_thresh: float = 0.5,
                 merge_boxes: bool = False, verbose: bool = True) -> None:
        if subset not in SUBSETS:
            raise AssertionError(f"Wrong flickr subset {subset}")
        bad = [k for k in topk if not (k == -1 or (isinstance(k, int) and k > 0))]
        if bad:
            raise ValueError(f"top_k values are positive integers or -1 (any box of the list), not {bad}")
        self.topk = topk
        self.iou_thresh = iou_thresh
        self.merge_boxes = merge_boxes
        self._split = EntitiesSplit.read(flickr_path, subset)
        self.img_ids = self._split.image_ids
        self.all_ids = list(self._split.sentences)
        if verbose:
            print(f"Flickr subset contains {len(self.img_ids)} images")
            print("Loading annotations...")
            print("Loading annotations...")
            print(f"There are {self._split.n_phrases} phrases in {len(self.all_ids)} sentences to evaluate")

    def evaluate(self, predictions: Iterable[dict[str, Any]]) -> dict[int, dict[str, float]]:
        sentences = self._split.sentences
        evaluated: set[str] = set()
        rows: list[int] = []
        box_lists: list[Any] = []
        # which sentence each phrase list is of, for _box_array's messages (not a tuple per phrase:
        # 14,000 objects that would live through the whole call, for the garbage collector to scan)
        owner_ids: list[str] = []
        owner_counts: list[int] = []
        for pred in predictions:
            cur_id = f"{pred['image_id']}_{pred['sentence_id']}"
            if cur_id in evaluated:
                print(f"Warning, multiple predictions found for sentence{pred['sentence_id']} in image "
                      f"{pred['image_id']}")
                continue
            phrases = sentences.get(cur_id)
            if phrases is None:  # no such sentence, or none of its phrases has a box
                if len(pred["boxes"]) != 0:
                    print(f"Warning, in image {pred['image_id']} we were not expecting predictions for "
                          f"sentence {pred['sentence_id']}. Ignoring them.")
                continue
            evaluated.add(cur_id)
            pred_boxes = pred["boxes"]
            if len(pred_boxes) != len(phrases):
                raise RuntimeError(f"Error, got {len(pred_boxes)} predictions, expected {len(phrases)} "
                                   f"for sentence {pred['sentence_id']} in image {pred['image_id']}")
            rows.extend(phrases)
            box_lists.extend(pred_boxes)
            owner_ids.append(cur_id)
            owner_counts.append(len(phrases))
        if len(evaluated) != len(sentences):
            print("ERROR, the number of evaluated sentence doesn't match. Missing predictions:")
            for missing in sentences:
                if missing not in evaluated:
                    img_id, sent_id = missing.split("_")
                    print(f"\t sentence {sent_id} in image {img_id}")
            raise RuntimeError("Missing predictions")
        boxes, counts = _box_array(box_lists, owner_ids, owner_counts)
        hits = self._split.hits(rows, boxes, counts, list(self.topk), self.iou_thresh, self.merge_boxes)
        return _report(self.topk, hits, [self._split.types(r) for r in rows])


def _report(topk: Sequence[int], hits: np.ndarray, types: list[list[str]]) -> dict[int, dict[str, float]]:
    """MDETR's RecallTracker report: per k, positives / total for "all" and for each type of each
    phrase (a type listed twice for a phrase counts twice)."""
    category = {"all": 0}
    pair_phrase: list[int] = []
    pair_category: list[int] = []
    for e, phrase_types in enumerate(types):
        for t in phrase_types:
            pair_phrase.append(e)
            pair_category.append(category.setdefault(t, len(category)))
    n = len(types)
    cats = list(category) if n else []
    pair_c = np.asarray(pair_category, dtype=np.int64)
    totals = np.bincount(pair_c, minlength=len(category)).tolist()
    totals[0] = n
    report: dict[int, dict[str, float]] = {}
    for j, k in enumerate(topk):
        hit = hits[:, j]
        positives = np.bincount(pair_c, weights=hit[np.asarray(pair_phrase, dtype=np.int64)],
                                minlength=len(category)).astype(np.int64).tolist()
        positives[0] = int(hit.sum())
        report[k] = {c: positives[i] / totals[i] for i, c in enumerate(cats)}
    return report


def _distributed() -> Any:
    """torch.distributed when this process is one of several initialised ranks (never imports
    torch: a distributed run has imported it already)."""
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        return dist
    return None


class FlickrEvaluator:
    """MDETR's `FlickrEvaluator`: collects records with `update`, gathers them from every rank
    with `synchronize_between_processes`, and `summarize()` scores them on the main process,
    prints the table and returns {"Recall@k_category" | "Upper_bound_category": recall} (other
    ranks get `(None, None)`, as in MDETR)."""

    def __init__(self, flickr_path: str | os.PathLike[str], subset: str = "test",
                 top_k: Sequence[int] = (1, 5, 10, -1), iou_thresh: float = 0.5,
                 merge_boxes: bool = False) -> None:
        if not isinstance(top_k, (list, tuple)):
            raise AssertionError(f"top_k must be a list or tuple, not {type(top_k).__name__}")
        self.evaluator = Flickr30kEntitiesRecallEvaluator(
            flickr_path, subset=subset, topk=top_k, iou_thresh=iou_thresh, merge_boxes=merge_boxes,
            verbose=False,
        )
        self.predictions: list[dict[str, Any]] = []
        self.results: dict[int, dict[str, float]] | None = None

    def accumulate(self) -> None:
        pass

    def update(self, predictions: Iterable[dict[str, Any]]) -> None:
        self.predictions += predictions

    def synchronize_between_processes(self) -> None:
        dist = _distributed()
        if dist is None:
            return
        gathered: list[Any] = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, self.predictions)
        self.predictions = sum(gathered, [])

    def summarize(self) -> Any:
        dist = _distributed()
        if dist is not None and dist.get_rank() != 0:
            return None, None
        try:
            from prettytable import PrettyTable
        except ImportError:  # MDETR's own requirement; pip install 'vlbench[mdetr]'
            raise ImportError("FlickrEvaluator.summarize prints MDETR's table with prettytable: "
                              "pip install prettytable (or 'vlbench[mdetr]')") from None
        self.results = self.evaluator.evaluate(self.predictions)
        table = PrettyTable()
        all_cat = sorted(next(iter(self.results.values())).keys())
        table.field_names = ["Recall@k", *all_cat]
        score: dict[str, float] = {}
        for k, v in self.results.items():
            header = "Upper_bound" if k == -1 else f"Recall@{k}"
            for cat in all_cat:
                score[f"{header}_{cat}"] = v[cat]
            table.add_row([header, *[v[cat] for cat in all_cat]])
        print(table)
        return score
