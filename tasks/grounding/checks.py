"""Parsing and layer-2 checks of grounding predictions (vlbench's format and MDETR/GLIP records)
against the ground truth, every problem reported."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np

from vlbench.backports import strict_zip
from vlbench.benchmark import Benchmark
from vlbench.errors import IssueList, pointer
from vlbench.tasks.grounding.loaders import GroundTruth
from vlbench.tasks.grounding.records import read_records, scores_not_sorted
from vlbench.tasks.grounding.structure import (
    _INDEX_KEY,
    _boxes_ok,
    _coordinates,
    _is_number,
    _numbers_ok,
    _Walk,
)


def _finite(v: Any) -> bool:
    try:
        return math.isfinite(v)
    except (OverflowError, TypeError):
        return False


def _to_array(boxes: list[list[Any]]) -> np.ndarray:
    """(M, 4) float64; a number too large for a float becomes inf (reported as non-finite)."""
    if not boxes:
        return np.zeros((0, 4))
    try:
        # fromiter over the flattened numbers is about twice as fast as np.array(list of lists).
        flat = np.fromiter(chain.from_iterable(boxes), dtype=np.float64, count=4 * len(boxes))
        return flat.reshape(-1, 4)
    except OverflowError:
        def conv(v: Any) -> float:
            try:
                return float(v)
            except OverflowError:
                return math.inf
        return np.array([[conv(v) for v in box] for box in boxes], dtype=np.float64)


@dataclass
class Parsed:
    """Validated predictions as flat arrays: box m belongs to phrase row `phrase[m]` at `rank[m]`."""

    boxes: np.ndarray
    phrase: np.ndarray
    rank: np.ndarray
    # Phrase rows of the entries with at least one box, and where their boxes start.
    entry_rows: np.ndarray
    entry_starts: np.ndarray
    n_entries: int  # gradable phrases with an entry (possibly empty)
    ignored_ungradable: int  # entries for phrases whose chain has no box (ignored, as MDETR)
    scores_not_sorted: int
    # Phrase rows of every entry, empty ones included (what the submission covers).
    covered_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    outside: BoxesOutside | None = None
    # Notes on what was tolerated while reading another tool's format (duplicates, scores).
    notes: list[str] = field(default_factory=list)
    # JSON pointer of the predictions in the file: "/predictions" in an envelope, the document
    # itself in another tool's format.
    root: str = "/predictions"


@dataclass(frozen=True)
class BoxesOutside:
    """Boxes extending past the image by more than the tolerance: scored unclipped, as MDETR
    scores them (clipping would change the IoU), and reported."""

    count: int
    entirely: int  # of which no part overlaps the image
    max_overshoot: float  # pixels, the largest distance past an image edge


def parse_predictions(
    predictions: Any, gt: GroundTruth, benchmark: Benchmark, issues: IssueList, walk: _Walk | None = None
) -> Parsed:
    """Layer-2 checks; never raises on schema-invalid input (that part is skipped). `walk`: what
    `walk_structure` returned for these predictions, if it accepted them."""
    rows: list[int] = []
    keys: list[tuple[str, str, str]] = []
    box_lists: list[list] = []
    ignored = 0
    unsorted = 0
    if not isinstance(predictions, dict):
        predictions = {}
    for image_key, sentences in predictions.items():
        image = gt.lookup.get(image_key)
        if image is None:
            _unknown_image(image_key, gt, issues)
            continue
        if not isinstance(sentences, dict):
            continue
        n_sent = gt.n_sentences[gt.image_index[image_key]]
        for sentence_key, phrases in sentences.items():
            sentence = image.get(sentence_key)
            if sentence is None:
                if not (_INDEX_KEY.fullmatch(sentence_key) and str(int(sentence_key)) == sentence_key
                        and int(sentence_key) < n_sent):
                    issues.add(
                        "unknown_sentence",
                        pointer("predictions", image_key, sentence_key),
                        f"image {image_key} has no sentence {sentence_key[:20]!r} "
                        f"(it has {n_sent}, indexed 0..{n_sent - 1})",
                        "sentence indexes are the 0-based line numbers of Sentences/<id>.txt, "
                        "written without leading zeros",
                    )
                    continue
                sentence = {}  # a real sentence with no gradable phrase (MDETR drops it)
            if not isinstance(phrases, dict):
                continue
            for phrase_key, entry in phrases.items():
                row = sentence.get(phrase_key)
                if row is None:
                    if phrase_key in gt.ungradable[image_key].get(sentence_key, ()):
                        ignored += 1
                        continue
                    starts = ", ".join(sorted(sentence, key=int)) or "nowhere (none has a box)"
                    issues.add(
                        "unknown_phrase",
                        pointer("predictions", image_key, sentence_key, phrase_key),
                        f"sentence {sentence_key} of image {image_key} has no phrase starting "
                        f"at word {phrase_key!r}",
                        f"phrases are keyed by the 0-based index of their first word in the "
                        f"caption without markup; gradable phrases here start at {starts}",
                    )
                    continue
                if not isinstance(entry, dict):
                    continue
                pid = entry.get("phrase_id")
                if isinstance(pid, str) and pid != gt.p_chain_id[row]:
                    issues.add(
                        "phrase_id_mismatch",
                        pointer("predictions", image_key, sentence_key, phrase_key, "phrase_id"),
                        f"phrase {gt.p_text[row]!r} belongs to chain "
                        f"{gt.p_chain_id[row]}, not {pid}",
                        "the phrases of this sentence are probably shifted; key each phrase by "
                        "its first word index, or drop phrase_id",
                    )
                boxes = entry.get("boxes")
                if not isinstance(boxes, list):
                    continue
                scores = entry.get("scores")
                if isinstance(scores, list):
                    unsorted += _check_scores(
                        scores, len(boxes), (image_key, sentence_key, phrase_key), issues
                    )
                rows.append(row)
                keys.append((image_key, sentence_key, phrase_key))
                box_lists.append(boxes)
    reuse = walk is not None and walk.document is predictions and len(walk.counts) == len(box_lists)
    keys_ptr = [("predictions", *k, "boxes") for k in keys]
    return assemble(rows, keys_ptr, box_lists, gt, benchmark, issues, ignored, unsorted,
                    walk if reuse else None)


def assemble(
    rows: list[int],
    keys: list[tuple[str | int, ...]],
    box_lists: list[list],
    gt: GroundTruth,
    benchmark: Benchmark,
    issues: IssueList,
    ignored: int = 0,
    unsorted: int = 0,
    walk: _Walk | None = None,
    root: str = "/predictions",
) -> Parsed:
    """Flat arrays from one box list per phrase entry (`rows[e]`, JSON pointer parts of the list
    `keys[e]`), with the box checks. Malformed box lists are skipped (the caller reported them).
    `walk`, when given, holds the coordinates `structure_ok` already converted, in this order."""
    if walk is not None:
        counts = np.asarray(walk.counts, dtype=np.int64)
        boxes = walk.coordinates.reshape(-1, 4)
    else:
        flat = list(chain.from_iterable(box_lists))
        if flat and not (
            set(map(type, flat)) == {list}
            and set(map(len, flat)) == {4}
            and _numbers_ok(chain.from_iterable(flat))
        ):
            keep = [i for i, b in enumerate(box_lists) if _boxes_ok(b, None)]
            rows = [rows[i] for i in keep]
            keys = [keys[i] for i in keep]
            box_lists = [box_lists[i] for i in keep]
            flat = list(chain.from_iterable(box_lists))
        counts = np.fromiter(map(len, box_lists), dtype=np.int64, count=len(box_lists))
        boxes = _to_array(flat)
    entry_of_box = np.repeat(np.arange(len(box_lists)), counts)
    rank = np.arange(len(boxes)) - np.repeat(np.cumsum(counts) - counts, counts)
    row_arr = np.asarray(rows, dtype=np.int64)
    phrase = row_arr[entry_of_box]
    outside = _check_boxes(boxes, phrase, entry_of_box, rank, keys, gt, benchmark, issues, root)
    nonempty = counts > 0
    return Parsed(
        boxes=boxes,
        phrase=phrase,
        rank=rank,
        entry_rows=row_arr[nonempty] if len(row_arr) else np.zeros(0, dtype=np.int64),
        entry_starts=(np.cumsum(counts) - counts)[nonempty],
        n_entries=len(rows),
        ignored_ungradable=ignored,
        scores_not_sorted=unsorted,
        covered_rows=row_arr,
        outside=outside,
        root=root,
    )


def parse_mdetr(records: Any, gt: GroundTruth, benchmark: Benchmark, issues: IssueList) -> Parsed:
    """MDETR/GLIP evaluator records straight to `Parsed`, with the checks the schema and
    `parse_predictions` make on vlbench's own format (no schema layer: a list of records has
    none). The number of boxes per phrase is not capped: MDETR gives every phrase all its
    queries, and the evaluator takes any number."""
    read = read_records(records, gt, issues)
    box_lists = read.box_lists
    walk = None
    if set(map(type, box_lists)) <= {list}:
        flat = list(chain.from_iterable(box_lists))
        if not flat or (set(map(type, flat)) == {list} and set(map(len, flat)) == {4}):
            coords = _coordinates(flat)
            if coords is not None:
                walk = _Walk(records, coords, list(map(len, box_lists)))
    if walk is None:
        for key, boxes in strict_zip(read.keys, box_lists):
            _report_box_list(boxes, key, issues)
    parsed = assemble(read.rows, read.keys, box_lists, gt, benchmark, issues,
                      ignored=read.ignored, unsorted=scores_not_sorted(read), walk=walk, root="")
    parsed.notes = read.notes()
    return parsed


def _report_box_list(boxes: Any, key: tuple[str | int, ...], issues: IssueList) -> None:
    hint = "each phrase gets a ranked list of boxes [[x1, y1, x2, y2], ...], even for one box"
    if type(boxes) is not list:
        issues.add("mdetr.boxes", pointer(*key), "a phrase's boxes are not a list", hint)
        return
    for k, box in enumerate(boxes):
        if not (type(box) is list and len(box) == 4 and all(map(_is_number, box))):
            issues.add("mdetr.boxes", pointer(*key, k), "a box is not a list of four numbers",
                       hint)
            return


def _unknown_image(image_key: str, gt: GroundTruth, issues: IssueList) -> None:
    hint = f"image ids are those of the {gt.split} split file ({len(gt.image_ids)} images)"
    if image_key.isascii() and image_key.isdigit() and len(image_key) <= 20 and str(int(image_key)) in gt.lookup:
        hint = f"write the id without leading zeros: {int(image_key)}"
    elif image_key.endswith(".jpg"):
        hint = "use the bare image id, without .jpg"
    issues.add(
        "unknown_image",
        pointer("predictions", image_key),
        f"image {image_key[:40]!r} is not in the {gt.split} split",
        hint,
    )


def _check_scores(
    scores: list, n_boxes: int, where: tuple[str, str, str], issues: IssueList
) -> int:
    """Report wrong length / non-finite scores; return 1 if they are not non-increasing."""
    ptr = pointer("predictions", *where, "scores")
    if len(scores) != n_boxes:
        issues.add(
            "scores_length",
            ptr,
            f"{len(scores)} scores for {n_boxes} boxes",
            "give one score per box, in the same order, or leave scores out",
        )
        return 0
    if not all(map(_is_number, scores)):
        return 0
    if not all(map(_finite, scores)):
        issues.add("non_finite_score", ptr, "a score is not a finite number", "write finite numbers")
        return 0
    return 0 if all(a >= b for a, b in zip(scores, scores[1:])) else 1


def _check_boxes(
    boxes: np.ndarray,
    phrase: np.ndarray,
    entry_of_box: np.ndarray,
    rank: np.ndarray,
    keys: list[tuple[str | int, ...]],
    gt: GroundTruth,
    benchmark: Benchmark,
    issues: IssueList,
    root: str = "/predictions",
) -> BoxesOutside | None:
    """Refuse non-finite and inverted boxes (MDETR would score them as NaN or odd IoUs) and
    all-normalised files; count, not refuse, boxes extending past the image: MDETR's own
    outputs have them (cxcywh from the model, scaled by the image size, never clipped)."""
    if not len(boxes):
        return None
    tol = float(benchmark.option("box_tolerance", 1.0))
    x1, y1, x2, y2 = boxes.T
    finite = np.isfinite(boxes).all(axis=1)
    with np.errstate(invalid="ignore"):
        order_bad = finite & ((x2 <= x1) | (y2 <= y1))
        width = gt.width[gt.p_image[phrase]]
        height = gt.height[gt.p_image[phrase]]
        good = finite & ~order_bad
        overshoot = np.maximum.reduce([-x1, -y1, x2 - width, y2 - height])
        outside = good & (overshoot > tol)
    if finite.all() and np.abs(boxes).max() <= 1.0:
        issues.add(
            "normalised_coordinates",
            root,
            "every coordinate in the file is between -1 and 1: these look like normalised "
            "coordinates",
            "boxes are in pixels of the original image: multiply x by the image width and y by "
            "its height (<size> in Annotations/<id>.xml)",
        )
    for m in np.flatnonzero(~good):
        ptr = pointer(*keys[entry_of_box[m]], int(rank[m]))
        box = [float(v) for v in boxes[m]]
        w, h = float(width[m]), float(height[m])
        if not finite[m]:
            issues.add("non_finite_box", ptr, "a coordinate is not a finite number",
                       "write finite pixel coordinates")
        else:
            looks_xywh = box[0] + box[2] <= w + tol and box[1] + box[3] <= h + tol
            issues.add(
                "box_order",
                ptr,
                f"box {_fmt(box)} does not have x1 < x2 and y1 < y2",
                "looks like xywh? boxes are [x1, y1, x2, y2]: use [x, y, x + w, y + h]"
                if looks_xywh
                else "boxes are [x1, y1, x2, y2] with x1 < x2 and y1 < y2 (no empty boxes)",
            )
    n_outside = int(outside.sum())
    if not n_outside:
        return None
    o = np.flatnonzero(outside)
    disjoint = (x2[o] <= 0) | (y2[o] <= 0) | (x1[o] >= width[o]) | (y1[o] >= height[o])
    return BoxesOutside(n_outside, int(disjoint.sum()), float(overshoot[o].max()))


def _fmt(box: list[float]) -> str:
    return "[" + ", ".join(f"{v:g}" for v in box) + "]"
