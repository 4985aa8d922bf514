"""Scoring parsed grounding predictions: ANY-BOX and MERGED-BOX recall, coverage and warnings."""

from __future__ import annotations

from typing import Any

import numpy as np

from vlbench.backports import strict_zip
from vlbench.benchmark import Benchmark
from vlbench.errors import Issue
from vlbench.item_table import ItemTable
from vlbench.task_type import TaskScores
from vlbench.tasks.grounding.checks import Parsed
from vlbench.tasks.grounding.loaders import (
    TYPES,
    GroundTruth,
)
from vlbench.tasks.grounding.metrics import box_best_iou, pairwise_iou, phrase_hits
from vlbench.tasks.grounding.protocol import MEASURES, PROTOCOLS

POPULATION = "phrases"


def metric_keys(types: tuple[str, ...] = TYPES) -> list[str]:
    keys = [f"{p}{m}" for p in PROTOCOLS for m in MEASURES]
    keys += [f"{p}{m}/{t}" for p in PROTOCOLS for m in MEASURES for t in types]
    return keys


def entity_types(benchmark: Benchmark) -> tuple[str, ...]:
    return tuple(benchmark.option("entity_types", TYPES))


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
            for t, total, positives in strict_zip(gt.types, type_counts, both.sum(axis=0)):
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
        "type_counts": {t: int(c) for t, c in strict_zip(gt.types, type_counts)},
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


def all_warnings(parsed: Parsed, gt: GroundTruth) -> list[str]:
    """Every warning scoring `parsed` gives (for `vlbench import`, which does not score)."""
    return parse_warnings(parsed) + [i.message for i in partial_issues(parsed, gt)]
