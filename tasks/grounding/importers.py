"""Read MDETR / GLIP evaluator inputs: score them directly, or convert them to a submission.

MDETR's `Flickr30kEntitiesRecallEvaluator.evaluate` (copied unchanged by GLIP, FIBER, Kosmos-2 and
Ferret) takes a list with one record per sentence:
`{"image_id": 1016887272, "sentence_id": 0, "boxes": [phrase_0_boxes, phrase_1_boxes, ...]}`,
where entry i belongs to the i-th *gradable* phrase of the sentence (phrases whose chain has a
box, in sentence order). vlbench keys phrases explicitly by their first word index, so the
positional lists are mapped through the ground truth here, once, with every mismatch reported.

`vlbench score PREDS.json --benchmark ID --format mdetr|glip` scores such a file as it is
(`GroundingTask.check_foreign`); `vlbench import grounding` writes it out as a submission.

Command line (writes an envelope file):
  python -m vlbench.tasks.grounding.importers PREDICTIONS.json --benchmark flickr30k-entities-test \\
      --method "MDETR R101" --out submission.json [--format mdetr|glip] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union, overload

from vlbench.atomic_files import atomic_write_bytes
from vlbench.errors import InvalidSubmission, IssueList, UsageError, VlbenchError, pointer
from vlbench.ground_truth import locate_ground_truth
from vlbench.jsonio import load_submission_file
from vlbench.output_rule import WRITTEN_SUBMISSION, check_file_target
from vlbench.registry import registry
from vlbench.tasks.grounding.loaders import GroundTruth, load_ground_truth_file

# GLIP's evaluator (maskrcnn_benchmark/data/datasets/evaluation/flickr/flickr_eval.py) is a copy of
# MDETR's and takes the same records.
FORMAT_NAMES: tuple[str, ...] = ("mdetr", "glip")

_RECORD_HINT = "each record is {\"image_id\", \"sentence_id\", \"boxes\"}"


def _as_id(value: Any) -> str | None:
    if type(value) is int and value >= 0:
        return str(value)
    if type(value) is str and value.isascii() and value.isdigit() and len(value) <= 20:
        return str(int(value))
    return None


class RecordKeys(Sequence[tuple[Union[str, int], ...]]):  # a runtime base: Union, not |, for Python 3.9
    """JSON pointer parts `(record, "boxes", j)` of each phrase list, made only when asked for
    (they are needed for problems, which are rare, and there are tens of thousands of lists)."""

    def __init__(self) -> None:
        self.first: list[int] = []  # index of the first phrase list of each kept record
        self.record: list[int] = []  # that record's index in the file
        self.total = 0

    def add(self, record: int, n: int) -> None:
        self.first.append(self.total)
        self.record.append(record)
        self.total += n

    def __len__(self) -> int:
        return self.total

    @overload
    def __getitem__(self, e: int) -> tuple[str | int, ...]: ...
    @overload
    def __getitem__(self, e: slice) -> list[tuple[str | int, ...]]: ...
    def __getitem__(self, e: int | slice) -> Any:
        if isinstance(e, slice):
            return [self[i] for i in range(*e.indices(self.total))]
        if e < 0:
            e += self.total
        if not 0 <= e < self.total:
            raise IndexError(e)
        k = bisect_right(self.first, e) - 1
        return (self.record[k], "boxes", e - self.first[k])


@dataclass
class Records:
    """MDETR-style records mapped onto ground-truth phrase rows, in record order."""

    rows: list[int] = field(default_factory=list)  # phrase row of each phrase list
    box_lists: list[Any] = field(default_factory=list)  # that phrase's boxes, as given
    keys: RecordKeys = field(default_factory=RecordKeys)  # JSON pointer parts of each list
    # Phrase list index -> its `scores` (one finite number per box), for the lists that have them.
    scores: dict[int, list] = field(default_factory=dict)
    repeated: int = 0  # records repeating an earlier one exactly (ignored, as MDETR)
    ignored: int = 0  # records of sentences without a gradable phrase (ignored, as MDETR)
    bad_scores: int = 0  # phrases whose scores are not one finite number per box (ignored)

    def notes(self) -> list[str]:
        """What was tolerated, as MDETR tolerates it, for the result's warnings."""
        out = []
        if self.repeated:
            out.append(f"{self.repeated:,} records repeat an earlier record of the same sentence "
                       "exactly; the first was kept, as MDETR keeps it")
        if self.bad_scores:
            out.append(f"{self.bad_scores:,} phrases have scores that are not one finite number "
                       "per box; those scores were ignored (MDETR ignores scores, the box order is "
                       "the ranking)")
        return out


def read_records(records: Any, gt: GroundTruth, issues: IssueList) -> Records:
    """Map records onto phrase rows; every mismatch is added to `issues`.

    As MDETR: records for sentences without a gradable phrase are ignored, and of two records
    for one sentence the first is kept. MDETR keeps it silently even when the two differ; here
    only an exact repeat (what distributed evaluation's padding produces) is tolerated, and a
    differing one is refused, since which of the two was meant cannot be known.
    """
    out = Records()
    if type(records) is not list:
        issues.add("mdetr.not_a_list", "", "MDETR-style predictions are a JSON list of records",
                   "one {\"image_id\", \"sentence_id\", \"boxes\"} object per sentence")
        return out
    seen: dict[tuple[str, str], int] = {}
    lookup, image_index, n_sentences = gt.lookup, gt.image_index, gt.n_sentences
    for i, rec in enumerate(records):
        if type(rec) is not dict:
            issues.add("mdetr.record", pointer(i), "a record is not an object", _RECORD_HINT)
            continue
        image = _as_id(rec.get("image_id"))
        sentence = _as_id(rec.get("sentence_id"))
        boxes = rec.get("boxes")
        if image is None or sentence is None or type(boxes) is not list:
            issues.add("mdetr.record", pointer(i),
                       "a record needs integer image_id and sentence_id and a boxes list",
                       _RECORD_HINT)
            continue
        sentences = lookup.get(image)
        if sentences is None:
            issues.add("unknown_image", pointer(i, "image_id"),
                       f"image {image} is not in the {gt.split} split",
                       "predict the images of the benchmark's split file")
            continue
        first = seen.get((image, sentence))
        if first is not None:
            if records[first].get("boxes") == boxes:
                out.repeated += 1
            else:
                issues.add("duplicate_sentence", pointer(i),
                           f"image {image} sentence {sentence} already has a different record "
                           f"(record {first})",
                           "give one record per sentence (MDETR silently keeps the first)")
            continue
        seen[(image, sentence)] = i
        phrases = sentences.get(sentence)
        if phrases is None:
            if int(sentence) >= n_sentences[image_index[image]]:
                issues.add("unknown_sentence", pointer(i, "sentence_id"),
                           f"image {image} has no sentence {sentence}",
                           "sentence ids are 0-based caption line numbers")
            else:
                out.ignored += 1
            continue
        if len(boxes) != len(phrases):
            issues.add("phrase_count", pointer(i, "boxes"),
                       f"{len(boxes)} phrase box lists for image {image} sentence {sentence}, "
                       f"which has {len(phrases)} gradable phrases",
                       "give one list per phrase whose chain has a box, in sentence order "
                       "(MDETR's tokens_positive_eval)")
            continue
        # A sentence's phrase rows are consecutive and in sentence order (the ground truth is
        # built phrase by phrase), and so are MDETR's lists: list j belongs to row start + j.
        start = min(phrases.values())
        first = len(out.rows)
        out.rows.extend(range(start, start + len(boxes)))
        out.box_lists.extend(boxes)
        out.keys.add(i, len(boxes))
        scores = rec.get("scores")
        if scores is None:
            continue
        if type(scores) is not list or len(scores) != len(boxes):
            out.bad_scores += len(boxes)
            continue
        for j, (phrase_scores, phrase_boxes) in enumerate(zip(scores, boxes, strict=True)):
            if _scores_ok(phrase_scores, phrase_boxes):
                out.scores[first + j] = phrase_scores
            else:
                out.bad_scores += 1
    return out


def _scores_ok(scores: Any, boxes: Any) -> bool:
    return (
        type(scores) is list
        and type(boxes) is list
        and len(scores) == len(boxes)
        and all(type(v) in (int, float) and math.isfinite(v) for v in scores)
    )


def scores_not_sorted(records: Records) -> int:
    """Phrases whose usable scores are not non-increasing (the box order still ranks)."""
    return sum(
        1 for s in records.scores.values()
        if not all(a >= b for a, b in zip(s, s[1:], strict=False))
    )


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
    for e, (row, boxes) in enumerate(zip(read.rows, read.box_lists, strict=True)):
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
        # Imported here: the checks read records with this module's `read_records`.
        from vlbench.tasks.grounding.checks import parse_mdetr
        from vlbench.tasks.grounding.scores import all_warnings

        gt = load_ground_truth_file(locate_ground_truth(benchmark, args.data_dir).paths["ground_truth"])
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
