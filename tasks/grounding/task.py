"""The phrase-grounding task type: a thin adapter from the `TaskType` interface to the modules
that do the work (`structure`, `checks`, `scores`, `prepare`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.benchmark import Benchmark
from vlbench.errors import Issue, IssueList, UsageError
from vlbench.ground_truth import GroundTruthFiles
from vlbench.task_type import Structure, TaskScores, TaskType
from vlbench.tasks.grounding.checks import Parsed, parse_mdetr, parse_predictions
from vlbench.tasks.grounding.importers import FORMAT_NAMES
from vlbench.tasks.grounding.loaders import (
    GroundTruth,
    load_ground_truth_file,
)
from vlbench.tasks.grounding.prepare import prepare_ground_truth
from vlbench.tasks.grounding.scores import (
    MEASURES,
    POPULATION,
    PROTOCOLS,
    entity_types,
    partial_issues,
    score_parsed,
)
from vlbench.tasks.grounding.structure import (
    _Walk,
    structure_suspects,
    walk_structure,
)


class GroundingTask(TaskType):
    name = "grounding"
    prediction_schema = "predictions.schema.json"
    foreign_formats = FORMAT_NAMES

    def load_ground_truth(self, benchmark: Benchmark, files: GroundTruthFiles) -> GroundTruth:
        return load_ground_truth_file(files.paths["ground_truth"])

    def fast_structure(self, predictions: Any, benchmark: Benchmark) -> Structure:
        walk = walk_structure(predictions)
        if walk is not None:
            return Structure(True, walk)
        return Structure(False, suspects=structure_suspects(predictions))

    def check(
        self, predictions: Any, ground_truth: GroundTruth, benchmark: Benchmark, issues: IssueList,
        structure: Structure | None = None,
    ) -> Parsed:
        walk = structure.memo if structure is not None and isinstance(structure.memo, _Walk) else None
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
        return prepare_ground_truth(benchmark, source, data_dir, force)


TASK = GroundingTask()
