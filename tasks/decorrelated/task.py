"""The decorrelated retrieval task type: ODmAP@1/5/10 over object-removed query images."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import IssueList, UsageError, pointer
from harness.registry import (
    Benchmark,
    GroundTruthFiles,
    ItemTable,
    TaskScores,
    TaskType,
    prepare_target,
)
from tasks.decorrelated.manifest import CaptionIndex, GroundTruth, load_manifest, write_manifest
from tasks.decorrelated.metrics import KS, average_precision_at_k, relevance

POPULATION = "image_to_text"
K = max(KS)
_ID_TYPES = {int, str}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _key(x: Any) -> str | None:
    """Canonical caption id: a JSON integer becomes its decimal string; other types have none."""
    t = type(x)
    if t is str:
        return x
    if t is int:
        return str(x)
    return None


def _as_int(x: Any) -> int | None:
    """The integer a caption id denotes in canonical form (JSON int, or its decimal string)."""
    t = type(x)
    if t is int:
        return x if 0 <= x < 2**63 else None
    if t is str and x.isascii() and x.isdigit() and (len(x) == 1 or x[0] != "0") and len(x) < 19:
        return int(x)
    return None


def _lookup(lists: list[list[Any]], index: CaptionIndex) -> list[list[int | None]]:
    """Gallery rows of every listed id (None: unknown or not an id), one batched lookup."""
    flat = [x for ranked in lists for x in ranked]
    if index.all_int:
        as_int = [_as_int(x) for x in flat]
        found = iter(index.lookup_ints([v for v in as_int if v is not None]))
        rows = [next(found) if v is not None else None for v in as_int]
    else:
        rows = [index.get(k) if (k := _key(x)) is not None else None for x in flat]
    out: list[list[int | None]] = []
    start = 0
    for ranked in lists:
        out.append(rows[start : start + len(ranked)])
        start += len(ranked)
    return out


class DecorrelatedRetrievalTask(TaskType):
    name = "decorrelated_retrieval"
    prediction_schema = "predictions.schema.json"

    def load_ground_truth(self, benchmark: Benchmark, files: GroundTruthFiles) -> GroundTruth:
        return load_manifest(files.paths["manifest"])

    def fast_structure_ok(self, predictions: Any, benchmark: Benchmark) -> bool:
        # Equivalent to the schema for valid documents, and much faster on 5,000 lists.
        if type(predictions) is not dict or set(predictions) != {POPULATION}:
            return False
        section = predictions[POPULATION]
        if type(section) is not dict:
            return False
        lists = section.values()
        if not all(type(v) is list for v in lists):
            return False
        return set(map(type, chain.from_iterable(lists))) <= _ID_TYPES

    def check(
        self, predictions: Any, ground_truth: GroundTruth, benchmark: Benchmark, issues: IssueList
    ) -> np.ndarray | None:
        """(Q, 10) gallery indices of each query's top 10, in manifest query order."""
        if not isinstance(predictions, dict):
            return None
        section = predictions.get(POPULATION)
        if not isinstance(section, dict):
            return None  # the schema layer reports it
        gt = ground_truth
        ok = True
        for key in section:
            if key not in gt.query_index:
                ok = False
                issues.add(
                    "unknown_query_id",
                    pointer("predictions", POPULATION, key),
                    f"{_short(key)} is not a query id of this benchmark",
                    "keys are the query ids of the benchmark's manifest (queries[].id)",
                )
        ranks = np.zeros((len(gt.query_ids), K), dtype=np.int64)
        lists = {qid: v for qid in gt.query_ids if isinstance(v := section.get(qid), list)}
        rows = dict(zip(lists, _lookup(list(lists.values()), gt.caption_index), strict=True))
        for row, qid in enumerate(gt.query_ids):
            ranked = section.get(qid)
            if ranked is None:
                ok = False
                issues.add(
                    "missing_query",
                    pointer("predictions", POPULATION, qid),
                    f"no ranked list for query {qid}",
                    f"every query needs a list of at least {K} caption ids",
                )
                continue
            if not isinstance(ranked, list):
                ok = False
                continue
            indices = self._indices(qid, ranked, rows[qid], issues)
            if indices is None:
                ok = False
                continue
            if len(indices) < K:
                ok = False
                issues.add(
                    "list_too_short",
                    pointer("predictions", POPULATION, qid),
                    f"{len(indices)} caption ids; at least {K} are needed for ODmAP@{K}",
                    "submit the top 10 (or more) caption ids per query",
                )
                continue
            ranks[row] = indices[:K]
        return ranks if ok else None

    @staticmethod
    def _indices(qid: str, ranked: list[Any], rows: list[int | None], issues: IssueList) -> list[int] | None:
        if None in rows:
            for pos, (x, i) in enumerate(zip(ranked, rows, strict=True)):
                if i is not None:
                    continue
                if _key(x) is not None:
                    issues.add(
                        "unknown_id",
                        pointer("predictions", POPULATION, qid, pos),
                        f"{_short(x)} is not a caption id of the gallery (train+val+test captions)",
                        "rank caption ids (Karpathy sentids) of the benchmark's gallery",
                    )
                elif type(x) is float and x.is_integer():
                    # JSON Schema counts 12.0 as an integer; ids are exact tokens.
                    issues.add(
                        "float_id",
                        pointer("predictions", POPULATION, qid, pos),
                        f"{_short(x)} is a number with a decimal point; ids are integers or strings",
                        f"write {int(x)} (or \"{int(x)}\")",
                    )
                # other types (null, bool, objects) are reported by the schema layer
            return None
        indices: list[int] = rows  # type: ignore[assignment]
        if len(set(indices)) != len(indices):
            seen: set[int] = set()
            for pos, i in enumerate(indices):
                if i in seen:
                    issues.add(
                        "duplicate_id_in_list",
                        pointer("predictions", POPULATION, qid, pos),
                        f"{_short(ranked[pos])} appears more than once in this ranked list",
                        "each caption id may appear once per ranked list",
                    )
                seen.add(i)
            return None
        return indices

    def item_table(self, ranks: np.ndarray, gt: GroundTruth) -> ItemTable:
        rel = relevance(gt.caption_masks[ranks], gt.removed, gt.present)
        columns = [f"ODmAP@{k}" for k in KS]
        values = [average_precision_at_k(rel, gt.n_relevant, k) for k in KS]
        for g in gt.groups:
            member = np.array([qg == g for qg in gt.query_groups], dtype=np.float64)
            columns.append(f"group/{g}")
            values.append(member)
            for k, v in zip(KS, values[: len(KS)], strict=True):
                columns.append(f"ODmAP@{k}/{g}")
                values.append(v * member)
        return ItemTable(list(gt.query_ids), columns, np.column_stack(values))

    def score(self, parsed: np.ndarray, ground_truth: GroundTruth, benchmark: Benchmark) -> TaskScores:
        gt = ground_truth
        table = self.item_table(parsed, gt)
        means = {POPULATION: {c: table.values[:, j].mean(keepdims=True) for j, c in enumerate(table.columns)}}
        scores = {key: float(v[0]) for key, v in self.metrics_from_means(benchmark, means).items()}
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

    def prepare(self, benchmark: Benchmark, source: str, data_dir: Path) -> list[Path]:
        from tasks.decorrelated import prepare as builders

        root = Path(source)
        if not root.is_dir():
            raise UsageError(f"--source {source}: not a folder (see the benchmark's source hint)")
        kind = benchmark.option("source_kind")
        if kind == "coco":
            manifest = builders.prepare_coco(benchmark.id, root)
        elif kind == "flickr30k":
            manifest = builders.prepare_flickr(benchmark.id, root)
        elif kind == "mini":
            manifest = builders.prepare_mini(benchmark.id, root)
        else:
            raise UsageError(f"benchmark {benchmark.id}: unknown source kind {kind!r}")
        target = prepare_target(benchmark, benchmark.files[0], data_dir)
        return [write_manifest(target, manifest)]
