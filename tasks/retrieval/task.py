"""The standard image-text retrieval task: R@1/5/10 in both directions and RSUM."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.benchmark import Benchmark
from vlbench.errors import IssueList
from vlbench.ground_truth import GroundTruthFiles, prepare_target
from vlbench.item_table import ItemTable
from vlbench.source_check import check_source
from vlbench.task_type import Structure, TaskScores, TaskType
from vlbench.tasks.ranked_lists import ID_TYPES, RankedListSpec, dict_rows_of, parse_ranked_lists
from vlbench.tasks.retrieval.ground_truth import (
    RetrievalGroundTruth,
    build_ground_truth,
    read_ground_truth,
    write_ground_truth,
)
from vlbench.tasks.retrieval.karpathy import (
    check_karpathy,
    load_karpathy,
    source_description,
    source_sha256,
)
from vlbench.tasks.retrieval.metrics import KS, image_to_text_hits, rsum, text_to_image_hits

DIRECTIONS = ("image_to_text", "text_to_image")
PREFIX = {"image_to_text": "i2t", "text_to_image": "t2i"}


def ranked_list_specs(gt: RetrievalGroundTruth, k: int) -> dict[str, RankedListSpec]:
    folded = gt.folds > 1
    return {
        "image_to_text": RankedListSpec(
            section="image_to_text",
            query_ids=gt.images,
            rows_of=dict_rows_of(gt.caption_index),
            k=k,
            metric=f"R@{k}",
            query_noun="test image",
            item_noun="caption",
            gallery_name="this benchmark's test split",
            unknown_item_hint="rank only the benchmark's test captions (vlbench tasks; see the README)",
            unknown_query_hint="keys of image_to_text are the image ids of the test split",
            query_fold=gt.image_fold if folded else None,
            gallery_fold=gt.caption_fold if folded else None,
        ),
        "text_to_image": RankedListSpec(
            section="text_to_image",
            query_ids=gt.captions,
            rows_of=dict_rows_of(gt.image_index),
            k=k,
            metric=f"R@{k}",
            query_noun="test caption",
            item_noun="image",
            gallery_name="this benchmark's test split",
            unknown_item_hint="rank only the benchmark's test images (vlbench tasks; see the README)",
            unknown_query_hint="keys of text_to_image are the caption ids of the test split",
            query_fold=gt.caption_fold if folded else None,
            gallery_fold=gt.image_fold if folded else None,
        ),
    }


class RetrievalTask(TaskType):
    name = "retrieval"
    prediction_schema = "predictions.schema.json"

    def load_ground_truth(self, benchmark: Benchmark, files: GroundTruthFiles) -> RetrievalGroundTruth:
        return read_ground_truth(files.paths["ground_truth"], folds=benchmark.option("folds", 1))

    def fast_structure(self, predictions: Any, benchmark: Benchmark) -> Structure:
        # Equivalent to the schema for valid documents, and much faster on 30,000 lists.
        if type(predictions) is not dict or set(predictions) != set(DIRECTIONS):
            return Structure(False)
        for direction in DIRECTIONS:
            section = predictions[direction]
            if type(section) is not dict:
                return Structure(False)
            lists = section.values()
            if not all(type(v) is list for v in lists):
                return Structure(False)
            if not set(map(type, chain.from_iterable(lists))) <= ID_TYPES:
                return Structure(False)
        return Structure(True)

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
            "image_to_text": dict(zip(gt.images, i2t, strict=True)),
            "text_to_image": dict(zip(gt.captions, t2i, strict=True)),
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
