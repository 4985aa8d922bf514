"""The decorrelated retrieval task type: ODmAP@1/5/10 over object-removed query images."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.backports import strict_zip
from vlbench.benchmark import Benchmark
from vlbench.errors import IssueList, UsageError
from vlbench.ground_truth import GroundTruthFiles, prepare_target
from vlbench.item_table import ItemTable
from vlbench.task_type import Structure, TaskScores, TaskType
from vlbench.tasks.decorrelated.manifest import GroundTruth, load_manifest, write_manifest
from vlbench.tasks.decorrelated.metrics import KS, average_precision_at_k, relevance
from vlbench.tasks.ranked_lists import (
    RankedListSpec,
    parse_ranked_lists,
    sections_conform,
)

POPULATION = "image_to_text"
K = max(KS)


def ranked_list_spec(gt: GroundTruth) -> RankedListSpec:
    return RankedListSpec(
        section=POPULATION,
        query_ids=gt.query_ids,
        rows_of=gt.caption_index.rows,
        k=K,
        metric=f"ODmAP@{K}",
        query_noun="query",
        item_noun="caption",
        gallery_name="the gallery (train+val+test captions)",
        unknown_item_hint="rank caption ids (Karpathy sentids) of the benchmark's gallery",
        unknown_query_hint="keys are the query ids of the benchmark's manifest (queries[].id)",
    )


class DecorrelatedRetrievalTask(TaskType):
    name = "decorrelated_retrieval"
    prediction_schema = "predictions.schema.json"

    def load_ground_truth(self, benchmark: Benchmark, files: GroundTruthFiles) -> GroundTruth:
        gt = load_manifest(files.paths["manifest"])
        if benchmark.option("source_kind") == "coco":
            from vlbench.tasks.decorrelated.mentions import COCO_MATCHER

            made_by = gt.raw.get("params", {}).get("matcher")
            if made_by != COCO_MATCHER:
                # a manifest of an earlier version: its gallery mentions came from another matcher
                raise UsageError(
                    f"the ground truth of {benchmark.id} in {files.paths['manifest'].parent} was prepared with the "
                    f"class matcher {made_by!r}, not {COCO_MATCHER!r} (v{benchmark.version}: class phrases no longer "
                    f"match across punctuation); prepare it again: vlbench data prepare {benchmark.id} --source DIR"
                )
        return gt

    def fast_structure(self, predictions: Any, benchmark: Benchmark) -> Structure:
        return Structure(sections_conform(predictions, (POPULATION,)))

    def check(
        self, predictions: Any, ground_truth: GroundTruth, benchmark: Benchmark, issues: IssueList,
        structure: Structure | None = None,
    ) -> np.ndarray | None:
        """(Q, 10) gallery indices of each query's top 10, in manifest query order."""
        if not isinstance(predictions, dict):
            return None
        return parse_ranked_lists(ranked_list_spec(ground_truth), predictions.get(POPULATION), issues)

    def item_table(self, ranks: np.ndarray, gt: GroundTruth) -> ItemTable:
        rel = relevance(gt.caption_masks[ranks], gt.removed, gt.present)
        columns = [f"ODmAP@{k}" for k in KS]
        values = [average_precision_at_k(rel, gt.n_relevant, k) for k in KS]
        for g in gt.groups:
            member = np.array([qg == g for qg in gt.query_groups], dtype=np.float64)
            columns.append(f"group/{g}")
            values.append(member)
            for k, v in strict_zip(KS, values[: len(KS)]):
                columns.append(f"ODmAP@{k}/{g}")
                values.append(v * member)
        # Queries made from one source image are drawn together by the bootstrap.
        return ItemTable(list(gt.query_ids), columns, np.column_stack(values), unit="source image",
                         clusters=list(gt.query_sources))

    def score(self, parsed: np.ndarray, ground_truth: GroundTruth, benchmark: Benchmark) -> TaskScores:
        gt = ground_truth
        table = self.item_table(parsed, gt)
        scores = self.point_scores(benchmark, {POPULATION: table})
        n = {"queries": len(gt.query_ids), "gallery_captions": len(gt.caption_index)}
        for g in gt.groups:
            n[f"queries/{g}"] = sum(1 for qg in gt.query_groups if qg == g)
        return TaskScores(scores=scores, items={POPULATION: table}, n=n)

    def metrics_from_means(
        self, benchmark: Benchmark, means: Mapping[str, Mapping[str, np.ndarray]]
    ) -> dict[str, np.ndarray]:
        m = means[POPULATION]
        out = {f"ODmAP@{k}": np.asarray(m[f"ODmAP@{k}"], dtype=np.float64) for k in KS}
        groups = [c[len("group/") :] for c in m if c.startswith("group/")]
        for g in groups:
            share = np.asarray(m[f"group/{g}"], dtype=np.float64)
            for k in KS:
                # Ratio of means = mean AP over the group's queries, also within a bootstrap replicate.
                num = np.asarray(m[f"ODmAP@{k}/{g}"], dtype=np.float64)
                out[f"ODmAP@{k}/{g}"] = np.divide(num, share, out=np.full_like(num, np.nan), where=share > 0)
        return out

    def random_predictions(self, ground_truth: GroundTruth, benchmark: Benchmark, seed: int = 0) -> dict:
        """Each query ranks 10 gallery captions drawn uniformly without replacement."""
        gt = ground_truth
        rng = np.random.default_rng(seed)
        ids = gt.caption_index.ids()
        return {
            POPULATION: {
                qid: [ids[i] for i in rng.choice(len(ids), size=K, replace=False)] for qid in gt.query_ids
            }
        }

    def prepare(self, benchmark: Benchmark, source: str, data_dir: Path, force: bool = False) -> list[Path]:
        from vlbench.tasks.decorrelated import prepare as builders

        root = Path(source)
        if not root.is_dir():
            raise UsageError(f"--source {source}: not a folder (see the benchmark's source hint)")
        kind = benchmark.option("source_kind")
        if kind == "coco":
            manifest = builders.prepare_coco(benchmark.id, root, force=force)
        elif kind == "flickr30k":
            manifest = builders.prepare_flickr(benchmark.id, root, force=force)
        elif kind == "mini":
            manifest = builders.prepare_mini(benchmark.id, root, force=force)
        else:
            raise UsageError(f"benchmark {benchmark.id}: unknown source kind {kind!r}")
        target = prepare_target(benchmark, benchmark.files[0], data_dir)
        return [write_manifest(target, manifest)]


TASK = DecorrelatedRetrievalTask()
