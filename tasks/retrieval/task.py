"""The standard image-text retrieval task: R@1/5/10 in both directions and RSUM."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.backports import strict_zip
from vlbench.benchmark import Benchmark
from vlbench.errors import IssueList
from vlbench.ground_truth import GroundTruthFiles, prepare_target
from vlbench.item_table import ItemTable
from vlbench.source_check import check_source
from vlbench.task_type import Structure, TaskScores, TaskType
from vlbench.tasks.karpathy import (
    check_karpathy,
    load_karpathy,
    source_description,
    source_sha256,
)
from vlbench.tasks.ranked_lists import (
    RankedListSpec,
    dict_rows_of,
    parse_ranked_lists,
    sections_conform,
)
from vlbench.tasks.retrieval.ground_truth import (
    RetrievalGroundTruth,
    build_ground_truth,
    read_ground_truth,
    write_ground_truth,
)
from vlbench.tasks.retrieval.metrics import KS, image_to_text_hits, rsum, text_to_image_hits

DIRECTIONS = ("image_to_text", "text_to_image")
PREFIX = {"image_to_text": "i2t", "text_to_image": "t2i"}


def ranked_list_specs(gt: RetrievalGroundTruth, k: int) -> dict[str, RankedListSpec]:
    # With folds (COCO 1K), each direction drops the gallery items outside its query's fold.
    folds = (gt.image_fold, gt.caption_fold) if gt.folds > 1 else (None, None)
    return {
        "image_to_text": _direction_spec("image_to_text", gt.images, gt.caption_index, k, "image", "caption", *folds),
        "text_to_image": _direction_spec("text_to_image", gt.captions, gt.image_index, k, "caption", "image",
                                         *reversed(folds)),
    }


def _direction_spec(section: str, query_ids: list[str], gallery_index: dict[Any, int], k: int, query: str,
                    item: str, query_fold: np.ndarray | None, gallery_fold: np.ndarray | None) -> RankedListSpec:
    return RankedListSpec(
        section=section,
        query_ids=query_ids,
        rows_of=dict_rows_of(gallery_index),
        k=k,
        metric=f"R@{k}",
        query_noun=f"test {query}",
        item_noun=item,
        gallery_name="this benchmark's test split",
        unknown_item_hint=f"rank only the benchmark's test {item}s (vlbench tasks; see the README)",
        unknown_query_hint=f"keys of {section} are the {query} ids of the test split",
        query_fold=query_fold,
        gallery_fold=gallery_fold,
    )


class RetrievalTask(TaskType):
    name = "retrieval"
    prediction_schema = "predictions.schema.json"

    def load_ground_truth(self, benchmark: Benchmark, files: GroundTruthFiles) -> RetrievalGroundTruth:
        return read_ground_truth(files.paths["ground_truth"], folds=benchmark.option("folds", 1))

    def fast_structure(self, predictions: Any, benchmark: Benchmark) -> Structure:
        return Structure(sections_conform(predictions, DIRECTIONS))

    def check(
        self, predictions: Any, ground_truth: RetrievalGroundTruth, benchmark: Benchmark, issues: IssueList,
        structure: Structure | None = None,
    ) -> dict[str, np.ndarray] | None:
        if not isinstance(predictions, dict):
            return None
        specs = ranked_list_specs(ground_truth, max(KS))
        parsed = {d: parse_ranked_lists(specs[d], predictions[d], issues) for d in DIRECTIONS if d in predictions}
        if any(v is None for v in parsed.values()) or len(parsed) != 2:
            return None
        return parsed

    def score(self, parsed: dict[str, np.ndarray], ground_truth: RetrievalGroundTruth, benchmark: Benchmark) -> TaskScores:
        gt = ground_truth
        i2t = image_to_text_hits(parsed["image_to_text"], gt.caption_image)
        t2i = text_to_image_hits(parsed["text_to_image"], gt.caption_image)
        columns = [f"R@{k}" for k in KS]
        # The bootstrap draws images: an image brings its image query and its caption queries.
        images = [str(i) for i in gt.images]
        items = {
            "image_to_text": ItemTable(list(gt.images), columns, i2t, unit="image", clusters=images),
            "text_to_image": ItemTable(list(gt.captions), columns, t2i, unit="image",
                                       clusters=[images[i] for i in gt.caption_image]),
        }
        return TaskScores(
            scores=self.point_scores(benchmark, items),
            items=items,
            n={"images": len(gt.images), "captions": len(gt.captions), "folds": gt.folds},
        )

    def metrics_from_means(
        self, benchmark: Benchmark, means: Mapping[str, Mapping[str, np.ndarray]]
    ) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for direction in DIRECTIONS:
            for k in KS:
                out[f"{PREFIX[direction]}_R@{k}"] = np.asarray(means[direction][f"R@{k}"], dtype=np.float64)
        out["RSUM"] = rsum(list(out.values()))
        return out

    def random_predictions(self, ground_truth: RetrievalGroundTruth, benchmark: Benchmark, seed: int = 0) -> dict:
        """Each query ranks 10 items drawn uniformly from its fold: the chance floor."""
        gt = ground_truth
        rng = np.random.default_rng(seed)
        k = max(KS)

        def draw(query_fold: np.ndarray, gallery: list[str], gallery_fold: np.ndarray) -> list[list[str]]:
            members = [np.flatnonzero(gallery_fold == f) for f in range(gt.folds)]
            return [[gallery[i] for i in rng.choice(members[f], size=k, replace=False)] for f in query_fold]

        i2t = draw(gt.image_fold, gt.captions, gt.caption_fold)
        t2i = draw(gt.caption_fold, gt.images, gt.image_fold)
        return {
            "image_to_text": dict(strict_zip(gt.images, i2t)),
            "text_to_image": dict(strict_zip(gt.captions, t2i)),
        }

    def prepare(self, benchmark: Benchmark, source: str, data_dir: Path, force: bool = False) -> list[Path]:
        filename = benchmark.option("source_file")
        split = benchmark.option("split", "test")
        doc = load_karpathy(source, filename, split)
        mismatches = check_karpathy(doc, filename, split, source_sha256(source, filename))
        deviation = check_source(benchmark.id, source, mismatches, force, source_description(filename))
        gt = build_ground_truth(doc, split, benchmark.option("captions_per_image"))
        if deviation is not None:
            gt["source_check"] = deviation
        target = prepare_target(benchmark, benchmark.files[0], data_dir)
        return [write_ground_truth(target, gt)]


TASK = RetrievalTask()
