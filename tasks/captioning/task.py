"""The caption-scoring task type: validation of COCO results, scoring with the pycocoevalcap
metrics (BLEU-1..4, METEOR, ROUGE-L, CIDEr-D, CIDEr, SPICE where runnable; `scoring.py`), and
`prepare`."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.benchmark import DATA_DIR, PACKAGE, Benchmark, DataFile
from vlbench.errors import IssueList, UsageError, pointer
from vlbench.ground_truth import GroundTruthFiles
from vlbench.task_type import Structure, TaskScores, TaskType
from vlbench.tasks.captioning.bleu import BLEU_COLUMNS, bleu_from_stats
from vlbench.tasks.captioning.corpus import MAX_N
from vlbench.tasks.captioning.loaders import (
    References,
    load_references,
    write_compact,
)
from vlbench.tasks.captioning.meteor.scores import METEOR_COLUMNS, meteor_from_stats
from vlbench.tasks.captioning.scoring import POPULATION, score_captions

MAX_CAPTION_CHARS = 10_000
MISSING_LISTED = 20
METRIC_KEYS = ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR", "ROUGE-L", "CIDEr-D", "CIDEr")
SUBSET_OPTION = "subset"


@dataclass
class ParsedCaptions:
    captions: list[str]  # aligned with the references' image order
    warnings: list[str] = field(default_factory=list)
    # subset mode: the positions (in the references' order) of the images the results caption
    covered: list[int] | None = None


def _id_hint(iid: Any, known: Mapping[Any, int], subset: bool = False) -> str:
    if isinstance(iid, str) and iid.strip().isascii() and iid.strip().isdigit() and len(iid) <= 20 and int(iid) in known:
        return f"the references use integer ids: write {int(iid)}, not {iid!r}"
    if isinstance(iid, int) and str(iid) in known:
        return f"the references use string ids: write {str(iid)!r}"
    if subset:
        # pycocotools' loadRes asserts the same ("Results do not correspond to current coco set")
        return ("a subset may leave reference images out, but every result must name one of them "
                "(pycocoevalcap refuses such a file too): drop the records of other images")
    return "use the image ids of the references (COCO image ids for coco-karpathy-test)"


class CaptioningTask(TaskType):
    name = "captioning"
    prediction_schema = "predictions.schema.json"
    accepts_bare = True
    reads_references = True
    metrics_install_hint = "METEOR needs the captions extra, not Java: pip install 'vlbench[captions]'"

    # ------------------------------------------------------------------ ground truth
    def load_ground_truth(self, benchmark: Benchmark, files: GroundTruthFiles) -> References:
        return load_references(files.paths["references"])

    def references_benchmark(self, path: Path, subset: bool = False) -> Benchmark:
        """An ad-hoc benchmark scoring against any COCO-format caption file (--references).

        `subset`: score the images the results caption, as pycocoevalcap's COCOEvalCap does
        (it evaluates `cocoRes.getImgIds()`), instead of requiring every reference image."""
        import os

        from vlbench.jsonio import open_regular
        from vlbench.tasks.captioning.benchmarks import METRICS

        try:
            path = Path(path).expanduser().resolve()
        except (OSError, ValueError, RuntimeError):  # a NUL character, a symlink loop
            path = Path(path)
        if not path.exists() and "\0" not in str(path):
            raise UsageError(f"references file not found: {path}")
        # a device, FIFO or folder is refused before any read, as for a submission
        os.close(open_regular(path, "references")[0])
        return Benchmark(
            id="references-" + (re.sub(r"[^a-z0-9.-]+", "-", path.name.lower()).strip("-.") or "file"),
            task=self.name,
            version="1",
            description=f"captions scored against {path}",
            files=(DataFile("references", str(path), sha256=None, location=DATA_DIR),),
            metrics=METRICS,
            main_score="CIDEr-D",
            options={SUBSET_OPTION: True} if subset else {},
        )

    # ------------------------------------------------------------------ validation
    def fast_structure(self, predictions: Any, benchmark: Benchmark) -> Structure:
        if type(predictions) is not list:
            return Structure(False)
        for p in predictions:
            if type(p) is not dict:
                return Structure(False)
            i = p.get("image_id")
            if type(i) is not int and type(i) is not str:
                return Structure(False)
            if type(p.get("caption")) is not str:
                return Structure(False)
        return Structure(True)

    def check(
        self, predictions: Any, ground_truth: References, benchmark: Benchmark, issues: IssueList,
        structure: Structure | None = None,
    ) -> ParsedCaptions | None:
        if not isinstance(predictions, list):
            return None
        index = {i: k for k, i in enumerate(ground_truth.ids)}
        n = len(index)
        subset = bool(benchmark.option(SUBSET_OPTION, False))
        where: list[int | None] = [None] * n
        captions: list[str] = [""] * n
        empty: list[str] = []
        if _none_match(predictions, index, benchmark, issues):
            return None
        for j, p in enumerate(predictions):
            if not isinstance(p, dict):
                continue
            iid, cap = p.get("image_id"), p.get("caption")
            if isinstance(iid, float) and iid.is_integer():
                # JSON Schema counts 391895.0 as an integer; ids are compared by type here
                issues.add(
                    "bad_image_id",
                    pointer("predictions", j, "image_id"),
                    f"image id {iid!r} is a float",
                    f"write the id as an integer: {int(iid)}",
                )
                continue
            if isinstance(iid, bool) or not isinstance(iid, (int, str)):
                continue  # the schema layer reports it
            k = index.get(iid)
            if k is None:
                issues.add(
                    "unknown_image",
                    pointer("predictions", j, "image_id"),
                    f"image {iid!r:.80} is not one of the {n} images of {benchmark.id}",
                    _id_hint(iid, index, subset),
                )
                continue
            if where[k] is not None:
                issues.add(
                    "duplicate_image",
                    pointer("predictions", j, "image_id"),
                    f"image {iid!r} already has a caption at /predictions/{where[k]}",
                    "give exactly one caption per image (pycocoevalcap asserts this too)",
                )
                continue
            where[k] = j
            if not isinstance(cap, str):
                continue  # the schema layer reports non-string captions
            if len(cap) > MAX_CAPTION_CHARS:
                issues.add(
                    "caption_too_long",
                    pointer("predictions", j, "caption"),
                    f"the caption has {len(cap):,} characters; the limit is {MAX_CAPTION_CHARS:,}",
                    "a caption is one sentence: truncate the model output",
                )
                continue
            captions[k] = cap
            if not cap.strip():
                empty.append(pointer("predictions", j, "caption"))
        missing = [ground_truth.ids[k] for k in range(n) if where[k] is None]
        covered = [k for k in range(n) if where[k] is not None] if subset else None
        if subset and not covered and issues.total == 0:
            issues.add(
                "no_images",
                "/predictions",
                f"no caption names one of the {n} images of the references: nothing to score",
                "give {\"image_id\": ..., \"caption\": ...} records for images of the references file",
            )
        if missing and not subset:
            listed = ", ".join(repr(i) for i in missing[:MISSING_LISTED])
            more = f", ... and {len(missing) - MISSING_LISTED} more" if len(missing) > MISSING_LISTED else ""
            issues.add(
                "missing_images",
                "/predictions",
                f"{len(missing)} of {n} images have no caption: {listed}{more}",
                "give one caption for every image (an empty string is allowed and scores 0), or add --subset "
                "(subset=True in Python) to score only the images the results caption, as pycocoevalcap does"
                if benchmark.id.startswith("references-") else
                "give one caption for every image of the benchmark (an empty string is allowed and scores 0); for "
                "part of a caption set, score against its references file: --references FILE --subset",
            )
        warnings = []
        if empty:
            shown = ", ".join(empty[:5]) + (f" and {len(empty) - 5} more" if len(empty) > 5 else "")
            warnings.append(f"{len(empty)} empty caption(s) score 0 on every metric: {shown}")
        return ParsedCaptions(captions, warnings, covered)

    # ------------------------------------------------------------------ scoring
    def score(self, parsed: ParsedCaptions, ground_truth: References, benchmark: Benchmark) -> TaskScores:
        if parsed.covered is None:
            return score_captions(parsed.captions, ground_truth, warnings=list(parsed.warnings))
        # subset mode: the images the results caption, in the references' order (pycocoevalcap's
        # order too), with CIDEr's document frequency from their references only, as there
        keep = parsed.covered
        refs = References([ground_truth.ids[k] for k in keep], [ground_truth.captions[k] for k in keep],
                          ground_truth.source_format)
        scored = score_captions([parsed.captions[k] for k in keep], refs, warnings=list(parsed.warnings))
        total = ground_truth.n_images
        scored.n["reference_images"] = total
        scored.extra["subset"] = {"scored_images": len(keep), "reference_images": total}
        scored.extra.setdefault("notes", []).insert(
            0, f"subset mode: scored the {len(keep):,} images the results caption, of the "
               f"{total:,} images of the references"
        )
        return scored

    def metrics_from_means(self, benchmark: Benchmark, means: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
        t = means[POPULATION]
        out: dict[str, np.ndarray] = {}
        # BLEU's 1e-15 / 1e-9 smoothing is not scale-free: turn means back into corpus sums.
        n = np.asarray(t["n_images"]) if "n_images" in t else 1.0
        stats = np.stack([np.asarray(t[c]) for c in BLEU_COLUMNS], axis=-1) * np.asarray(n)[..., None]
        bleu = bleu_from_stats(stats)
        for k in range(MAX_N):
            out[f"BLEU-{k + 1}"] = bleu[..., k]
        if METEOR_COLUMNS[0] in t:
            out["METEOR"] = meteor_from_stats(np.stack([np.asarray(t[c]) for c in METEOR_COLUMNS], axis=-1))
        for key in ("ROUGE-L", "CIDEr-D", "CIDEr", "SPICE"):
            if key in t:
                out[key] = np.asarray(t[key])
        return out

    def random_predictions(self, ground_truth: References, benchmark: Benchmark, seed: int = 0) -> Any:
        """Chance floor: each image gets a reference caption of another, randomly chosen image."""
        rng = random.Random(seed)
        n = ground_truth.n_images
        out = []
        for k, iid in enumerate(ground_truth.ids):
            other = rng.randrange(n - 1) if n > 1 else 0
            if n > 1 and other >= k:
                other += 1
            out.append({"image_id": iid, "caption": rng.choice(ground_truth.captions[other])})
        return out

    # ------------------------------------------------------------------ prepare
    def prepare(self, benchmark: Benchmark, source: str, data_dir: Path, force: bool = False) -> list[Path]:
        from vlbench.tasks.captioning.prepare import prepare_references

        refs, origin, deviation = prepare_references(benchmark, source, force=force)
        f = benchmark.files[0]
        rel = f.path[len("data/"):] if f.location == PACKAGE and f.path.startswith("data/") else f.path
        return [write_compact(refs, Path(data_dir) / benchmark.id / rel, source=origin, source_check=deviation)]


def _none_match(predictions: list, index: Mapping[Any, int], benchmark: Benchmark, issues: IssueList) -> bool:
    """Not one image id of the submission is in the references (another split or dataset): one
    problem that says so, instead of one per caption and a list of every image left out."""
    ids = [p.get("image_id") for p in predictions if isinstance(p, dict)]
    ids = [i for i in ids if isinstance(i, (int, str, float)) and not isinstance(i, bool)]
    if not ids or any(i in index for i in ids):
        return False
    examples = ", ".join(repr(i) for i in list(index)[:3])
    theirs = ", ".join(f"{i!r:.40}" for i in ids[:3])
    where = (f"the references file {benchmark.files[0].path}" if benchmark.id.startswith("references-")
             else f"the {len(index):,} images of {benchmark.id}")
    issues.add(
        "no_matching_images",
        "/predictions",
        f"none of the {len(set(map(repr, ids))):,} image ids of the submission (e.g. {theirs}) are in {where} "
        f"({len(index):,} images, e.g. {examples}): they are of another split or dataset",
        "score against the references of the split the captions were made for "
        "(e.g. captions_val2014.json for COCO val2014 images)",
    )
    return True


TASK = CaptioningTask()

__all__ = ["TASK", "CaptioningTask"]
