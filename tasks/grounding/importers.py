"""Read MDETR / GLIP evaluator inputs: score them directly, or convert them to a submission.

MDETR's `Flickr30kEntitiesRecallEvaluator.evaluate` (copied unchanged by GLIP, FIBER, Kosmos-2 and
Ferret) takes a list with one record per sentence:
`{"image_id": 1016887272, "sentence_id": 0, "boxes": [phrase_0_boxes, phrase_1_boxes, ...]}`,
where entry i belongs to the i-th *gradable* phrase of the sentence (phrases whose chain has a
box, in sentence order). vlbench keys phrases explicitly by their first word index, so the
positional lists are mapped through the ground truth once, with every mismatch reported
(`records.py`, which scoring such a file directly reads them with too).

`vlbench score PREDS.json --benchmark ID --format mdetr|glip` scores such a file as it is
(`GroundingTask.check_foreign`); `vlbench import grounding` writes it out as a submission.

Command line (writes an envelope file):
  python -m vlbench.tasks.grounding.importers PREDICTIONS.json --benchmark flickr30k-entities-test \\
      --method "MDETR R101" --out submission.json [--format mdetr|glip] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from vlbench.atomic_files import atomic_write_bytes
from vlbench.backports import strict_zip
from vlbench.errors import InvalidSubmission, IssueList, UsageError, VlbenchError
from vlbench.ground_truth import load_ground_truth
from vlbench.jsonio import load_submission_file
from vlbench.output_rule import WRITTEN_SUBMISSION, check_file_target
from vlbench.registry import registry
from vlbench.tasks.grounding.loaders import GroundTruth
from vlbench.tasks.grounding.records import Records, read_records

# GLIP's evaluator (maskrcnn_benchmark/data/datasets/evaluation/flickr/flickr_eval.py) is a copy of
# MDETR's and takes the same records.
FORMAT_NAMES: tuple[str, ...] = ("mdetr", "glip")


def from_mdetr(records: Any, gt: GroundTruth, issues: IssueList | None = None) -> dict[str, Any]:
    """MDETR-style per-sentence records -> vlbench predictions; raises InvalidSubmission when
    `issues` is not given and there is a problem.

    Usable per-phrase `"scores"` (one per box, parallel to `boxes`) are carried over. Records for
    sentences without a gradable phrase are ignored, as MDETR ignores them.
    """
    own = issues is None
    issues = IssueList() if issues is None else issues
    read = read_records(records, gt, issues)
    if own and issues:
        raise InvalidSubmission(issues)
    return to_predictions(read, gt)


def to_predictions(read: Records, gt: GroundTruth) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for e, (row, boxes) in enumerate(strict_zip(read.rows, read.box_lists)):
        entry: dict[str, Any] = {"boxes": boxes, "phrase_id": gt.p_chain_id[row]}
        if e in read.scores:
            entry["scores"] = read.scores[e]
        image = gt.image_ids[gt.p_image[row]]
        sentence, first_word = str(gt.p_sentence[row]), str(gt.p_first_word[row])
        out.setdefault(image, {}).setdefault(sentence, {})[first_word] = entry
    return out


from_glip = from_mdetr

FORMATS = {"mdetr": from_mdetr, "glip": from_glip}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m vlbench.tasks.grounding.importers", allow_abbrev=False,
        description="Convert MDETR/GLIP-style Flickr30k Entities predictions into a vlbench "
        "submission envelope.",
    )
    parser.add_argument("predictions", help="JSON list of {image_id, sentence_id, boxes} records")
    parser.add_argument("--benchmark", required=True, help="e.g. flickr30k-entities-test")
    parser.add_argument("--out", required=True, help="submission file to write")
    parser.add_argument("--format", choices=sorted(FORMATS), default="mdetr")
    parser.add_argument("--method", default="imported MDETR-style predictions")
    parser.add_argument("--data-dir", help="prepared data folder")
    parser.add_argument("--force", action="store_true",
                        help="replace an --out file that is not a submission vlbench wrote (refused without it)")
    args = parser.parse_args(argv)
    try:
        out = check_file_target(args.out, WRITTEN_SUBMISSION, force=args.force)
        benchmark = registry().benchmark(args.benchmark)
        if benchmark.task != "grounding":
            raise UsageError(f"{benchmark.id} is not a grounding benchmark")
        # Imported here: the command alone needs the checks and the scores' warnings.
        from vlbench.tasks.grounding.checks import parse_mdetr
        from vlbench.tasks.grounding.scores import all_warnings

        gt, _ = load_ground_truth(benchmark, args.data_dir)
        issues = IssueList()
        loaded = load_submission_file(args.predictions, issues)
        if loaded is None:
            raise InvalidSubmission(issues, args.predictions)
        # The same checks as scoring the file directly, so that problems (and the warnings the
        # score would give) show here, not only when the written submission is scored.
        parsed = parse_mdetr(loaded.data, gt, benchmark, issues)
        if issues:
            raise InvalidSubmission(issues, args.predictions)
        predictions = to_predictions(read_records(loaded.data, gt, IssueList()), gt)
        envelope = {
            "vlbench": 1,
            "benchmark": benchmark.id,
            "task": "grounding",
            # `imported_from` also marks the file as one vlbench wrote (output_rule.WRITTEN_SUBMISSION)
            "meta": {"method": args.method, "extra": {"imported_from": {
                "format": args.format, "file": Path(args.predictions).name, "sha256": loaded.sha256}}},
            "predictions": predictions,
        }
        # Atomic: an interrupted or failed write leaves no truncated submission behind.
        atomic_write_bytes(out, json.dumps(envelope, separators=(",", ":")).encode("utf-8"))
    except InvalidSubmission as exc:
        print(str(exc), file=sys.stderr)
        print(exc.issues.report(), file=sys.stderr)
        return exc.exit_code
    except VlbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    for warning in all_warnings(parsed, gt):
        print(f"warning: {warning}", file=sys.stderr)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
