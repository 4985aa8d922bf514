"""The phrase-grounding task type: validation, scoring, chance floor and data preparation."""

from __future__ import annotations

import hashlib
import math
import re
import shutil
import zipfile
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.benchmark import Benchmark
from vlbench.errors import Issue, IssueList, UsageError, pointer
from vlbench.ground_truth import GroundTruthFiles, prepare_target
from vlbench.item_table import ItemTable
from vlbench.source_check import SourceMismatch, check_source
from vlbench.task_type import Structure, TaskScores, TaskType
from vlbench.tasks.grounding.importers import FORMAT_NAMES, read_records, scores_not_sorted
from vlbench.tasks.grounding.loaders import (
    TYPES,
    GroundTruth,
    build_ground_truth,
    find_tree,
    load_ground_truth_file,
    write_ground_truth,
)
from vlbench.tasks.grounding.metrics import KS, box_best_iou, pairwise_iou, phrase_hits

GT_FILE = "ground_truth.json"
POPULATION = "phrases"
MEASURES: tuple[str, ...] = tuple(f"R@{k}" for k in KS) + ("UB",)
PROTOCOLS: tuple[str, ...] = ("", "merged_")  # ANY-BOX, MERGED-BOX
MAX_BOXES = 100

_INDEX_KEY = re.compile(r"[0-9]{1,6}")


def _digits(key: Any, max_len: int) -> bool:
    """Same strings as the schema pattern ^[0-9]{1,max_len}$ minus a trailing newline (which
    Python's `$` lets through): str methods are several times faster than a regex here."""
    return type(key) is str and 0 < len(key) <= max_len and key.isascii() and key.isdigit()

_ENTRY_KEYS = frozenset({"boxes", "scores", "phrase_id"})
_NUMBER_TYPES = frozenset({int, float})


def metric_keys(types: tuple[str, ...] = TYPES) -> list[str]:
    keys = [f"{p}{m}" for p in PROTOCOLS for m in MEASURES]
    keys += [f"{p}{m}/{t}" for p in PROTOCOLS for m in MEASURES for t in types]
    return keys


def entity_types(benchmark: Benchmark) -> tuple[str, ...]:
    return tuple(benchmark.option("entity_types", TYPES))


def _numbers_ok(values: Any) -> bool:
    return set(map(type, values)) <= _NUMBER_TYPES


@dataclass
class _Walk:
    """What `walk_structure` learnt about a document it accepted: every coordinate as one float64
    array and the number of boxes of each entry, in document order. The harness hands it to
    `check_structured` with the same document, which reuses it instead of converting 500k numbers
    again."""

    document: Any
    coordinates: np.ndarray  # (4 * total boxes,)
    counts: list[int]


def _coordinates(all_boxes: list[list]) -> np.ndarray | None:
    """All coordinates as float64 if every one is an int or float (not bool), else None.

    `array('d', ...)` converts in C and refuses str, None and containers (numpy's fromiter would
    parse numeric strings). It accepts bool, which JSON Schema's number does not; a bool becomes
    0.0 or 1.0, so only those positions are looked at again. (It would also accept non-JSON
    objects with __float__, e.g. Decimal; the JSON reader never produces them.)
    """
    try:
        coords = np.frombuffer(array("d", chain.from_iterable(all_boxes)), dtype=np.float64)
    except (TypeError, OverflowError, ValueError):
        return None
    suspects = np.flatnonzero((coords == 0.0) | (coords == 1.0))
    for i, j in zip((suspects // 4).tolist(), (suspects % 4).tolist(), strict=True):
        if type(all_boxes[i][j]) is bool:
            return None
    return coords


def _is_number(v: Any) -> bool:
    # What JSON Schema's "number" accepts from Python objects (subclasses included, bool not).
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _boxes_ok(boxes: Any, limit: int | None = MAX_BOXES) -> bool:
    """`boxes` satisfies the schema's box list (the slow, per-value test); `limit` None: any
    number of boxes (other tools' formats have no cap)."""
    return (
        isinstance(boxes, list)
        and (limit is None or len(boxes) <= limit)
        and all(isinstance(b, list) and len(b) == 4 and all(map(_is_number, b)) for b in boxes)
    )


def structure_ok(predictions: Any) -> bool:
    """Conservative mirror of predictions.schema.json: True only if the schema accepts."""
    return walk_structure(predictions) is not None


def walk_structure(predictions: Any) -> _Walk | None:
    """`structure_ok`, returning what was learnt (None: the schema may refuse the document).

    Type tests use `type(x) is ...` (JSON Schema's number excludes bool) and keys are checked
    as full matches (Python's `$` would also accept a trailing newline; rejecting more is safe).
    Coordinates are checked while converting them all at once, in C (see `_coordinates`).
    """
    if type(predictions) is not dict:
        return None
    all_boxes: list = []
    counts: list[int] = []
    for image_key, sentences in predictions.items():
        if type(sentences) is not dict or not _digits(image_key, 20):
            return None
        for sentence_key, phrases in sentences.items():
            if type(phrases) is not dict or not _digits(sentence_key, 6):
                return None
            for phrase_key, entry in phrases.items():
                if type(entry) is not dict or not _digits(phrase_key, 6):
                    return None
                if not entry.keys() <= _ENTRY_KEYS:
                    return None
                boxes = entry.get("boxes")
                if type(boxes) is not list or len(boxes) > MAX_BOXES:
                    return None
                all_boxes += boxes
                counts.append(len(boxes))
                if "scores" in entry:
                    scores = entry["scores"]
                    if type(scores) is not list or len(scores) > MAX_BOXES or not _numbers_ok(scores):
                        return None
                if "phrase_id" in entry:
                    pid = entry["phrase_id"]
                    if not _digits(pid, 12):
                        return None
    if all_boxes and not (set(map(type, all_boxes)) == {list} and set(map(len, all_boxes)) == {4}):
        return None
    coords = _coordinates(all_boxes)
    if coords is None:
        return None
    return _Walk(predictions, coords, counts)


def _entry_ok(entry: Any) -> bool:
    """One phrase entry satisfies the schema's `phrase` (the per-value test, for the error path)."""
    return (
        type(entry) is dict
        and "boxes" in entry
        and entry.keys() <= _ENTRY_KEYS
        and _boxes_ok(entry["boxes"])
        and (
            "scores" not in entry
            or (type(entry["scores"]) is list and len(entry["scores"]) <= MAX_BOXES
                and all(map(_is_number, entry["scores"])))
        )
        and ("phrase_id" not in entry or _digits(entry["phrase_id"], 12))
    )


def structure_suspects(predictions: Any, limit: int = 2000) -> tuple[tuple[str, ...], ...] | None:
    """Where a document `walk_structure` refused may break the schema: the paths of the values
    (with the keys leading to them) the schema layer needs to look at, up to `limit` of them;
    everything else certainly conforms. None: the whole document (it is not an object)."""
    if type(predictions) is not dict:
        return None
    found: list[tuple[str, ...]] = []
    for image_key, sentences in predictions.items():
        if len(found) >= limit:
            break
        if type(sentences) is not dict or not _digits(image_key, 20):
            found.append((image_key,))
            continue
        for sentence_key, phrases in sentences.items():
            if type(phrases) is not dict or not _digits(sentence_key, 6):
                found.append((image_key, sentence_key))
                continue
            found.extend(
                (image_key, sentence_key, phrase_key)
                for phrase_key, entry in phrases.items()
                if not (_digits(phrase_key, 6) and _entry_ok(entry))
            )
    return tuple(found[:limit])


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
        for key, boxes in zip(read.keys, box_lists, strict=True):
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
    return 0 if all(a >= b for a, b in zip(scores, scores[1:], strict=False)) else 1


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


def item_columns(types: tuple[str, ...]) -> list[str]:
    cols = [f"{p}{m}" for p in PROTOCOLS for m in MEASURES]
    cols += [f"type/{t}" for t in types]
    cols += [f"{p}{m}/{t}" for p in PROTOCOLS for m in MEASURES for t in types]
    return cols


def parse_warnings(parsed: Parsed) -> list[str]:
    """What was accepted but deserves a word: boxes past the image, unsorted scores, what was
    tolerated in another tool's format. (A partial submission is reported by `partial_issues`.)"""
    warnings = list(parsed.notes)
    if parsed.outside is not None:
        o = parsed.outside
        warnings.append(
            f"{o.count:,} of {len(parsed.boxes):,} boxes extend past the image (by up to "
            f"{o.max_overshoot:.1f} px; {o.entirely:,} lie wholly outside it); they are scored "
            "unclipped, as MDETR's evaluator scores them"
            + ("; so many suggests coordinates of the model's resized input rather than of the "
               "original image" if o.count * 2 > len(parsed.boxes) else "")
        )
    if parsed.scores_not_sorted:
        warnings.append(
            f"{parsed.scores_not_sorted} phrases have scores that are not non-increasing; the "
            "order of boxes was used as the ranking"
        )
    return warnings


def coverage(parsed: Parsed, gt: GroundTruth) -> dict[str, int]:
    """Gradable sentences and phrases with an entry in the submission (an empty box list
    counts as an entry: it is an explicit miss), out of those in the ground truth."""
    rows = parsed.covered_rows
    sentences = 0
    if len(rows):
        # Rows are grouped sentence by sentence: number the sentences along the rows.
        image, sentence = gt.p_image, gt.p_sentence
        starts = np.ones(len(image), dtype=bool)
        starts[1:] = (image[1:] != image[:-1]) | (sentence[1:] != sentence[:-1])
        sentence_of_row = np.cumsum(starts) - 1
        seen = np.zeros(int(sentence_of_row[-1]) + 1, dtype=bool)
        seen[sentence_of_row[rows]] = True
        sentences = int(seen.sum())
    return {"sentences": sentences, "sentences_total": gt.n_sentences_scored,
            "phrases": len(rows), "phrases_total": gt.n_phrases}


def partial_issues(parsed: Parsed, gt: GroundTruth) -> list[Issue]:
    """A submission that leaves phrases out: scored with them as misses, refused by --strict
    (MDETR's evaluator raises "Missing predictions" on such a file)."""
    c = coverage(parsed, gt)
    missing = c["phrases_total"] - c["phrases"]
    if not missing:
        return []
    return [Issue(
        "partial_submission",
        parsed.root,
        f"the submission covers {c['sentences']:,} of {c['sentences_total']:,} sentences and "
        f"{c['phrases']:,} of {c['phrases_total']:,} phrases; the {missing:,} phrases left out "
        "are scored as misses",
        "predict every gradable phrase of the split (MDETR's evaluator refuses a partial file)",
    )]


def score_parsed(parsed: Parsed, gt: GroundTruth, iou_threshold: float) -> TaskScores:
    n = gt.n_phrases
    pred = np.ascontiguousarray(parsed.boxes.T)
    any_iou = box_best_iou(
        pred, parsed.phrase, gt.boxes_t, gt.c_box_start[gt.p_chain], gt.c_box_count[gt.p_chain]
    )
    # A single-box chain's merged box is that box: reuse its IoU, compute only multi-box chains.
    merged_iou = any_iou.copy()
    multi = np.flatnonzero(gt.c_box_count[gt.p_chain[parsed.phrase]] > 1)
    merged_iou[multi] = pairwise_iou(pred[:, multi], gt.merged_t[:, gt.p_chain[parsed.phrase[multi]]])
    segments = (parsed.rank, parsed.entry_rows, parsed.entry_starts, n, iou_threshold)
    hits = {"": phrase_hits(any_iou, *segments), "merged_": phrase_hits(merged_iou, *segments)}
    member = gt.type_member
    type_counts = member.sum(axis=0)
    scores: dict[str, float | None] = {}
    blocks = []
    for p in PROTOCOLS:
        for j, m in enumerate(MEASURES):
            scores[f"{p}{m}"] = float(hits[p][:, j].mean()) if n else None
        blocks.append(hits[p])
    blocks.append(member)
    for p in PROTOCOLS:
        for j, m in enumerate(MEASURES):
            both = hits[p][:, j : j + 1] * member
            blocks.append(both)
            for t, total, positives in zip(gt.types, type_counts, both.sum(axis=0), strict=True):
                # positives / total, as MDETR's RecallTracker divides counts.
                scores[f"{p}{m}/{t}"] = float(positives / total) if total else None
    values = np.hstack(blocks).astype(np.float64) if n else np.zeros((0, len(item_columns(gt.types))))
    ids = gt.item_ids
    with_boxes = len(parsed.entry_rows)
    covered = coverage(parsed, gt)
    extra: dict[str, Any] = {
        "coverage": with_boxes / n if n else None,
        "phrases_missing": n - parsed.n_entries,
        "phrases_with_empty_list": parsed.n_entries - with_boxes,
        "covered": covered,
        "ignored_ungradable_predictions": parsed.ignored_ungradable,
        "iou_threshold": iou_threshold,
        "type_counts": {t: int(c) for t, c in zip(gt.types, type_counts, strict=True)},
    }
    if parsed.outside is not None:
        o = parsed.outside
        extra["boxes_outside_image"] = {"count": o.count, "entirely": o.entirely,
                                        "max_overshoot_px": o.max_overshoot}
    warnings = parse_warnings(parsed)
    if warnings:
        extra["warnings"] = warnings
    return TaskScores(
        scores=scores,
        # The bootstrap draws images: the phrases of one image are not independent.
        items={POPULATION: ItemTable(ids, item_columns(gt.types), values, unit="image",
                                     clusters=[str(gt.image_ids[i]) for i in gt.p_image])},
        n={"phrases": n, "sentences": gt.n_sentences_scored, "images": len(gt.image_ids),
           "phrases_with_boxes": with_boxes},
        extra=extra,
    )


class GroundingTask(TaskType):
    name = "grounding"
    prediction_schema = "predictions.schema.json"
    foreign_formats = FORMAT_NAMES

    def load_ground_truth(self, benchmark: Benchmark, files: GroundTruthFiles) -> GroundTruth:
        return load_ground_truth_file(files.paths["ground_truth"])

    def fast_structure_ok(self, predictions: Any, benchmark: Benchmark) -> bool:
        return structure_ok(predictions)

    def fast_structure(self, predictions: Any, benchmark: Benchmark) -> Structure:
        walk = walk_structure(predictions)
        if walk is not None:
            return Structure(True, walk)
        return Structure(False, suspects=structure_suspects(predictions))

    def check(
        self, predictions: Any, ground_truth: GroundTruth, benchmark: Benchmark, issues: IssueList
    ) -> Parsed:
        return parse_predictions(predictions, ground_truth, benchmark, issues)

    def check_structured(
        self, predictions: Any, ground_truth: GroundTruth, benchmark: Benchmark, issues: IssueList,
        structure: Structure,
    ) -> Parsed:
        walk = structure.memo if isinstance(structure.memo, _Walk) else None
        return parse_predictions(predictions, ground_truth, benchmark, issues, walk)

    def detect_format(self, document: Any, benchmark: Benchmark) -> str | None:
        # vlbench's own predictions are an object; MDETR's and GLIP's a list of records.
        return "mdetr" if isinstance(document, list) else None

    def check_foreign(
        self, fmt: str, document: Any, ground_truth: GroundTruth, benchmark: Benchmark,
        issues: IssueList,
    ) -> Parsed:
        if fmt not in self.foreign_formats:
            raise UsageError(f"the grounding task reads formats {', '.join(self.foreign_formats)}, "
                             f"not {fmt!r}")
        return parse_mdetr(document, ground_truth, benchmark, issues)

    def strict_issues(self, parsed: Parsed, ground_truth: GroundTruth, benchmark: Benchmark) -> list[Issue]:
        return partial_issues(parsed, ground_truth)

    def warnings(self, parsed: Parsed, ground_truth: GroundTruth, benchmark: Benchmark) -> list[str]:
        """Every warning scoring `parsed` gives (for `vlbench import`, which does not score)."""
        return parse_warnings(parsed) + [i.message for i in partial_issues(parsed, ground_truth)]

    def score(self, parsed: Parsed, ground_truth: GroundTruth, benchmark: Benchmark) -> TaskScores:
        return score_parsed(parsed, ground_truth, float(benchmark.option("iou_threshold", 0.5)))

    def metrics_from_means(
        self, benchmark: Benchmark, means: Mapping[str, Mapping[str, np.ndarray]]
    ) -> dict[str, np.ndarray]:
        table = means[POPULATION]
        out: dict[str, np.ndarray] = {}
        for p in PROTOCOLS:
            for m in MEASURES:
                out[f"{p}{m}"] = table[f"{p}{m}"]
                for t in entity_types(benchmark):
                    # Per-type recall = mean(hit * member) / mean(member): a ratio of means.
                    with np.errstate(divide="ignore", invalid="ignore"):
                        out[f"{p}{m}/{t}"] = table[f"{p}{m}/{t}"] / table[f"type/{t}"]
        return out

    def random_predictions(
        self, ground_truth: GroundTruth, benchmark: Benchmark, seed: int = 0
    ) -> dict[str, Any]:
        """Ten uniformly random boxes per gradable phrase (the chance floor)."""
        gt = ground_truth
        rng = np.random.default_rng(seed)
        n = gt.n_phrases
        k = 10
        w = gt.width[gt.p_image][:, None]
        h = gt.height[gt.p_image][:, None]
        bw = rng.uniform(0.05, 1.0, (n, k)) * w
        bh = rng.uniform(0.05, 1.0, (n, k)) * h
        x1 = rng.uniform(0.0, 1.0, (n, k)) * (w - bw)
        y1 = rng.uniform(0.0, 1.0, (n, k)) * (h - bh)
        boxes = np.round(np.stack([x1, y1, x1 + bw, y1 + bh], axis=-1), 2)
        out: dict[str, Any] = {}
        for row in range(n):
            image = gt.image_ids[gt.p_image[row]]
            out.setdefault(image, {}).setdefault(str(gt.p_sentence[row]), {})[
                str(gt.p_first_word[row])
            ] = {"boxes": boxes[row].tolist()}
        return out

    def prepare(self, benchmark: Benchmark, source: str, data_dir: Path, force: bool = False) -> list[Path]:
        split = str(benchmark.option("split", "test"))
        root = Path(source).expanduser()
        if not root.exists():
            root = _download(source)
        out_dir = Path(data_dir) / benchmark.id
        try:
            tree, split_file = _locate(root, split, out_dir)
            doc = build_ground_truth(tree, split, split_file, entity_types(benchmark))
        except (FileNotFoundError, ValueError, OSError) as exc:
            raise UsageError(f"cannot prepare {benchmark.id} from {source}: {exc}") from exc
        expected = benchmark.option("source")
        if expected is not None:
            deviation = check_source(
                benchmark, source, source_mismatches(doc, expected), force,
                f"the Flickr30k Entities release's {split} split ({expected['images']:,} images)",
            )
            if deviation is not None:
                doc["source_check"] = deviation
        doc["benchmark"] = benchmark.id
        return [write_ground_truth(doc, prepare_target(benchmark, benchmark.files[0], data_dir))]


def source_mismatches(doc: dict[str, Any], expected: Mapping[str, Any]) -> list[SourceMismatch]:
    """How a prepared ground-truth document differs from the official split's."""
    ids = sorted(doc["images"]["id"], key=lambda i: (len(i), i))
    found = {
        "images": len(ids),
        "sentences": sum(len(s) for s in doc["lookup"].values()),
        "phrases": len(doc["phrases"]["image"]),
        "ids_sha256": hashlib.sha256("\n".join(ids).encode()).hexdigest(),
    }
    what = {"images": "images in the split file", "sentences": "sentences with a boxed phrase",
            "phrases": "phrases whose chain has a box",
            "ids_sha256": "sha256 of the split's image ids"}
    return [
        SourceMismatch(what[k], f"{expected[k]:,}" if isinstance(expected[k], int) else expected[k],
                       f"{found[k]:,}" if isinstance(found[k], int) else found[k])
        for k in what if k in expected and expected[k] != found[k]
    ]


def _download(repo_id: str) -> Path:
    """A Hugging Face dataset repo holding the official tree (or annotations.zip + split files)."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:
        raise UsageError(
            f"{repo_id} is not a folder, and huggingface_hub is not installed to fetch it "
            "(pip install 'vlbench[hub]')"
        ) from exc
    try:
        path = snapshot_download(
            repo_id=repo_id,
            repo_type="dataset",
            allow_patterns=["*Sentences/*", "*Annotations/*", "*.txt", "*annotations.zip"],
        )
    except Exception as exc:  # the hub client raises many types (network, auth, not found)
        raise UsageError(f"could not download {repo_id} from the Hugging Face hub: {exc}") from exc
    return Path(path)


def _locate(root: Path, split: str, out_dir: Path) -> tuple[Path, Path]:
    """The tree folder and the split file; unpacks the official annotations.zip if that is all
    there is (the GitHub repository ships Sentences/ and Annotations/ zipped next to the split
    files)."""
    try:
        tree = find_tree(root, split)
        return tree, tree / f"{split}.txt"
    except FileNotFoundError:
        archive = next(iter(sorted(root.rglob("annotations.zip"))), None)
        if archive is None:
            raise
    split_file = archive.parent / f"{split}.txt"
    if not split_file.is_file():
        raise FileNotFoundError(f"no {split}.txt next to {archive}")
    dest = out_dir / "source"
    if dest.exists():
        shutil.rmtree(dest)
    with zipfile.ZipFile(archive) as z:
        members = [
            n for n in z.namelist()
            if ("Sentences/" in n or "Annotations/" in n) and not n.startswith(("/", ".."))
            and ".." not in Path(n).parts
        ]
        z.extractall(dest, members)
    for candidate in (dest, *sorted(p.parent for p in dest.rglob("Sentences"))):
        if (candidate / "Sentences").is_dir() and (candidate / "Annotations").is_dir():
            return candidate, split_file
    raise FileNotFoundError(f"{archive} holds no Sentences/ and Annotations/ folders")
