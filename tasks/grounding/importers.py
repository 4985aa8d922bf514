"""Import MDETR / GLIP evaluator inputs into vlbench's grounding predictions.

MDETR's `Flickr30kEntitiesRecallEvaluator.evaluate` (copied unchanged by GLIP, FIBER, Kosmos-2 and
Ferret) takes a list with one record per sentence:
`{"image_id": 1016887272, "sentence_id": 0, "boxes": [phrase_0_boxes, phrase_1_boxes, ...]}`,
where entry i belongs to the i-th *gradable* phrase of the sentence (phrases whose chain has a
box, in sentence order). vlbench keys phrases explicitly by their first word index, so the
positional lists are mapped through the ground truth here, once, with every mismatch reported.

Command line (writes an envelope file):
  python -m tasks.grounding.importers PREDICTIONS.json --benchmark flickr30k-entities-test \
      --method "MDETR R101" --out submission.json [--format mdetr|glip] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from vlbench.errors import InvalidSubmission, IssueList, UsageError, VlbenchError, pointer
from vlbench.jsonio import load_submission_file
from vlbench.registry import locate_ground_truth, registry
from vlbench.tasks.grounding.loaders import GroundTruth


def _as_id(value: Any) -> str | None:
    if type(value) is int and value >= 0:
        return str(value)
    if type(value) is str and value.isascii() and value.isdigit():
        return str(int(value))
    return None


def from_mdetr(records: Any, gt: GroundTruth, issues: IssueList | None = None) -> dict[str, Any]:
    """MDETR-style per-sentence records -> vlbench predictions; raises InvalidSubmission.

    Optional per-record `"scores"` (one list per phrase, parallel to `boxes`) is carried over.
    Records for sentences without a gradable phrase are ignored, as MDETR ignores them.
    """
    own = issues is None
    issues = IssueList() if issues is None else issues
    out: dict[str, Any] = {}
    if type(records) is not list:
        issues.add("mdetr.not_a_list", "", "MDETR-style predictions are a JSON list of records",
                   "one {\"image_id\", \"sentence_id\", \"boxes\"} object per sentence")
        records = []
    seen: dict[tuple[str, str], int] = {}
    for i, rec in enumerate(records):
        if type(rec) is not dict:
            issues.add("mdetr.record", pointer(i), "a record is not an object",
                       "each record is {\"image_id\", \"sentence_id\", \"boxes\"}")
            continue
        image = _as_id(rec.get("image_id"))
        sentence = _as_id(rec.get("sentence_id"))
        boxes = rec.get("boxes")
        scores = rec.get("scores")
        if image is None or sentence is None or type(boxes) is not list:
            issues.add("mdetr.record", pointer(i),
                       "a record needs integer image_id and sentence_id and a boxes list",
                       "each record is {\"image_id\", \"sentence_id\", \"boxes\"}")
            continue
        if image not in gt.lookup:
            issues.add("unknown_image", pointer(i, "image_id"),
                       f"image {image} is not in the {gt.split} split",
                       "predict the images of the benchmark's split file")
            continue
        if (image, sentence) in seen:
            issues.add("duplicate_sentence", pointer(i),
                       f"image {image} sentence {sentence} already has a record "
                       f"(record {seen[(image, sentence)]})",
                       "give one record per sentence (MDETR silently keeps the first)")
            continue
        seen[(image, sentence)] = i
        phrases = gt.lookup[image].get(sentence)
        if phrases is None:
            if int(sentence) >= gt.n_sentences[gt.image_index[image]]:
                issues.add("unknown_sentence", pointer(i, "sentence_id"),
                           f"image {image} has no sentence {sentence}",
                           "sentence ids are 0-based caption line numbers")
            continue  # a sentence with no gradable phrase: ignored, as MDETR does
        if len(boxes) != len(phrases):
            issues.add("phrase_count", pointer(i, "boxes"),
                       f"{len(boxes)} phrase box lists for image {image} sentence {sentence}, "
                       f"which has {len(phrases)} gradable phrases",
                       "give one list per phrase whose chain has a box, in sentence order "
                       "(MDETR's tokens_positive_eval)")
            continue
        if scores is not None and (type(scores) is not list or len(scores) != len(boxes)):
            issues.add("mdetr.scores", pointer(i, "scores"),
                       "scores must be a list with one score list per phrase",
                       "drop scores, or align them with boxes")
            scores = None
        target = out.setdefault(image, {}).setdefault(sentence, {})
        # Sentence order = increasing first word index (the GT file's keys are sorted as text).
        ordered = sorted(phrases.items(), key=lambda kv: int(kv[0]))
        for j, (first_word, row) in enumerate(ordered):
            entry: dict[str, Any] = {"boxes": boxes[j], "phrase_id": gt.chain_ids[gt.p_chain[row]]}
            if scores is not None:
                entry["scores"] = scores[j]
            target[first_word] = entry
    if own and issues:
        raise InvalidSubmission(issues)
    return out


# GLIP's evaluator (maskrcnn_benchmark/data/datasets/evaluation/flickr/flickr_eval.py) is a copy of
# MDETR's and takes the same records.
from_glip = from_mdetr

FORMATS = {"mdetr": from_mdetr, "glip": from_glip}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tasks.grounding.importers",
        description="Convert MDETR/GLIP-style Flickr30k Entities predictions into a vlbench "
        "submission envelope.",
    )
    parser.add_argument("predictions", help="JSON list of {image_id, sentence_id, boxes} records")
    parser.add_argument("--benchmark", required=True, help="e.g. flickr30k-entities-test")
    parser.add_argument("--out", required=True, help="submission file to write")
    parser.add_argument("--format", choices=sorted(FORMATS), default="mdetr")
    parser.add_argument("--method", default="imported MDETR-style predictions")
    parser.add_argument("--data-dir", help="prepared data folder")
    args = parser.parse_args(argv)
    try:
        benchmark = registry().benchmark(args.benchmark)
        if benchmark.task != "grounding":
            raise UsageError(f"{benchmark.id} is not a grounding benchmark")
        from vlbench.tasks.grounding import TASK

        gt = TASK.load_ground_truth(benchmark, locate_ground_truth(benchmark, args.data_dir))
        issues = IssueList()
        loaded = load_submission_file(args.predictions, issues)
        if loaded is None:
            raise InvalidSubmission(issues, args.predictions)
        predictions = FORMATS[args.format](loaded.data, gt, issues)
        if issues:
            raise InvalidSubmission(issues, args.predictions)
        envelope = {
            "vlbench": 1,
            "benchmark": benchmark.id,
            "task": "grounding",
            "meta": {"method": args.method},
            "predictions": predictions,
        }
        Path(args.out).write_text(json.dumps(envelope, separators=(",", ":")), encoding="utf-8")
    except InvalidSubmission as exc:
        print(str(exc), file=sys.stderr)
        print(exc.issues.report(), file=sys.stderr)
        return exc.exit_code
    except VlbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
