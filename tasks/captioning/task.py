"""The caption-scoring task type: validation of COCO results, scoring with the pycocoevalcap
metrics (BLEU-1..4, METEOR, ROUGE-L, CIDEr-D, CIDEr, SPICE where runnable), and `prepare`."""

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
from vlbench.item_table import ItemTable
from vlbench.task_type import Structure, TaskScores, TaskType
from vlbench.tasks.captioning import metrics as M
from vlbench.tasks.captioning.loaders import (
    References,
    load_references,
    write_compact,
)
from vlbench.tasks.captioning.meteor import MeteorProcess, MeteorUnavailable
from vlbench.tasks.captioning.ptb import (
    TokenizerUnavailable,
    pycoco_successors,
    rare_shape_lexer,
    tokenize,
)
from vlbench.tasks.captioning.spice import run_spice, spice_status

MAX_CAPTION_CHARS = 10_000
MISSING_LISTED = 20
POPULATION = "images"
METRIC_KEYS = ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR", "ROUGE-L", "CIDEr-D", "CIDEr")
PER_IMAGE = [f"{k}@image" for k in ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR")]


# pycocoevalcap's names for vlbench's keys (vlbench's CIDEr, the original one, has none there)
PYCOCOEVALCAP_NAMES = {
    "BLEU-1": "Bleu_1", "BLEU-2": "Bleu_2", "BLEU-3": "Bleu_3", "BLEU-4": "Bleu_4",
    "METEOR": "METEOR", "ROUGE-L": "ROUGE_L", "CIDEr-D": "CIDEr", "SPICE": "SPICE",
}
CIDER_NAME_NOTE = (
    'CIDEr-D is the score pycocoevalcap reports as "CIDEr"; vlbench\'s CIDEr is the original CIDEr '
    "(no clipping, no length penalty, in [0, 1])"
)
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
                "give one caption for every image of the benchmark (an empty string is allowed and scores 0)",
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
        stats = np.stack([np.asarray(t[c]) for c in M.BLEU_COLUMNS], axis=-1) * np.asarray(n)[..., None]
        bleu = M.bleu_from_stats(stats)
        for k in range(M.MAX_N):
            out[f"BLEU-{k + 1}"] = bleu[..., k]
        if M.METEOR_COLUMNS[0] in t:
            out["METEOR"] = M.meteor_from_stats(np.stack([np.asarray(t[c]) for c in M.METEOR_COLUMNS], axis=-1))
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


def score_captions(captions: list[str], refs: References, warnings: list[str] | None = None,
                   meteor: bool = True, spice: bool = True,
                   meteor_process: MeteorProcess | None = None) -> TaskScores:
    """Score candidates (aligned with `refs.ids`) against the references.

    `meteor_process`: a started Meteor JVM to reuse (left open); by default one is started here
    and closed at the end."""
    warnings = list(warnings or [])
    unavailable: dict[str, str] = {}
    proc: MeteorProcess | None = meteor_process
    if meteor_process is not None:
        pass
    elif meteor:
        try:
            proc = MeteorProcess().start()  # JVM start-up overlaps tokenization and the other metrics
        except MeteorUnavailable as exc:
            unavailable["METEOR"] = str(exc)
    else:
        unavailable["METEOR"] = "disabled"
    try:
        n = refs.n_images
        flat_refs = [r for rs in refs.captions for r in rs]
        flat = list(captions) + flat_refs
        try:
            # pycocoevalcap's temp files: the references in image order, the candidates likewise
            tok, n_rare = tokenize(flat, pycoco_successors([captions, flat_refs]))
        except TokenizerUnavailable as exc:  # only with the cross-check switch VLBENCH_PTB=jar
            raise UsageError(
                f"VLBENCH_PTB=jar sends {len(exc.captions)} caption(s) of rare shapes to the CoreNLP PTB "
                f"tokenizer jar, which cannot run ({exc}); e.g. {exc.captions[0][:80]!r}. Unset "
                "VLBENCH_PTB to tokenize them in Python, or install Java and pycocoevalcap==1.2"
            ) from None
        cands = tok[:n]
        tok_refs: list[list[str]] = []
        pos = n
        for rs in refs.captions:
            tok_refs.append(tok[pos : pos + len(rs)])
            pos += len(rs)

        corpus = M.Corpus.build(cands, tok_refs)
        bleu_stats = M.bleu_stats(corpus)
        bleu = M.corpus_bleu(bleu_stats)
        bleu_img = M.bleu_from_stats(bleu_stats)
        cider_d, cider = M.cider_scores(corpus)
        rouge = M.rouge_l(cands, tok_refs, corpus=corpus)

        meteor_stats = None
        if proc is not None:
            try:
                meteor_stats = proc.stats(cands, tok_refs)
            except MeteorUnavailable as exc:
                unavailable["METEOR"] = str(exc)
    finally:
        if proc is not None and meteor_process is None:
            proc.close()

    scores: dict[str, float | None] = {f"BLEU-{k + 1}": float(bleu[k]) for k in range(M.MAX_N)}
    # "n_images" is constant, so its mean in any bootstrap replicate is the set size.
    columns: list[str] = [*M.BLEU_COLUMNS, "n_images"]
    blocks: list[np.ndarray] = [bleu_stats, np.full((n, 1), float(n))]
    if meteor_stats is not None:
        agg_ready = meteor_stats.copy()
        agg_ready[M.meteor_perfect(meteor_stats), 20] = 0.0
        scores["METEOR"] = float(M.meteor_from_stats(M.meteor_aggregate(meteor_stats)))
        columns += M.METEOR_COLUMNS
        blocks.append(agg_ready)
    else:
        scores["METEOR"] = None
    scores["ROUGE-L"] = float(np.mean(rouge))
    scores["CIDEr-D"] = float(np.mean(cider_d))
    scores["CIDEr"] = float(np.mean(cider))
    columns += ["ROUGE-L", "CIDEr-D", "CIDEr"]
    blocks.append(np.stack([rouge, cider_d, cider], axis=1))

    if spice:
        jar, reason = spice_status()
        if jar is None:
            unavailable["SPICE"] = reason
        else:
            try:
                sp = run_spice(jar, refs.ids, cands, tok_refs)
                scores["SPICE"] = float(np.mean(sp))
                if np.isnan(sp).any():
                    warnings.append(f"SPICE gave no score for {int(np.isnan(sp).sum())} image(s); the mean is NaN as in pycocoevalcap")
                columns.append("SPICE")
                blocks.append(sp[:, None])
            except Exception as exc:  # a present but broken SPICE install is reported, not faked
                unavailable["SPICE"] = f"SPICE jar present but failed: {exc}"

    columns += PER_IMAGE[:4]
    blocks.append(bleu_img)
    if meteor_stats is not None:
        columns.append(PER_IMAGE[4])
        blocks.append(M.meteor_from_stats(meteor_stats)[:, None])
    values = np.concatenate([b.reshape(len(refs.ids), -1) for b in blocks], axis=1)
    table = ItemTable([str(i) for i in refs.ids], columns, values, unit="image")
    extra: dict[str, Any] = {
        "notes": [CIDER_NAME_NOTE],
        "pycocoevalcap_names": PYCOCOEVALCAP_NAMES,
        # captions of rare shapes: tokenized by the whole PTB lexer in Python (or the jar, VLBENCH_PTB=jar)
        "tokenizer": {"captions": len(flat), "rare_shapes": n_rare, "rare_shapes_by": rare_shape_lexer()},
        "cider_document_frequency": f"from the references of the {n} scored images (fixed for bootstrap replicates)",
    }
    if warnings:
        extra["warnings"] = warnings
    if unavailable:
        extra["unavailable"] = unavailable
    return TaskScores(
        scores=scores,
        items={POPULATION: table},
        n={"images": n, "references": int(sum(len(r) for r in refs.captions))},
        extra=extra,
    )


TASK = CaptioningTask()

__all__ = ["TASK", "CaptioningTask", "score_captions"]
