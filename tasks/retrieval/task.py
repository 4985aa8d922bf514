"""The standard image-text retrieval task: R@1/5/10 in both directions and RSUM."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import IssueList, pointer
from harness.registry import (
    Benchmark,
    GroundTruthFiles,
    ItemTable,
    TaskScores,
    TaskType,
    prepare_target,
)
from tasks.retrieval.ground_truth import (
    RetrievalGroundTruth,
    build_ground_truth,
    read_ground_truth,
    write_ground_truth,
)
from tasks.retrieval.karpathy import load_karpathy
from tasks.retrieval.metrics import KS, image_to_text_hits, text_to_image_hits

DIRECTIONS = ("image_to_text", "text_to_image")
PREFIX = {"image_to_text": "i2t", "text_to_image": "t2i"}
_ID_TYPES = {int, str}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class RankedLists:
    """Validates one direction's ranked lists and turns them into a (n_queries, K) index matrix."""

    def __init__(
        self,
        direction: str,
        query_ids: list[str],
        gallery_lookup: Mapping[Any, int],
        query_fold: np.ndarray,
        gallery_fold: np.ndarray,
        folds: int,
        k: int,
    ) -> None:
        self.direction = direction
        self.query_ids = query_ids
        self.lookup = gallery_lookup
        self.query_fold = query_fold
        self.gallery_fold = gallery_fold
        self.folds = folds
        self.k = k
        self.query_noun, self.item_noun = (
            ("image", "caption") if direction == "image_to_text" else ("caption", "image")
        )

    def parse(self, section: Any, issues: IssueList) -> np.ndarray | None:
        if not isinstance(section, dict):
            return None  # the schema layer reports it
        ranks = self._parse_fast(section)
        return ranks if ranks is not None else self._parse_reporting(section, issues)

    def _parse_fast(self, section: dict[str, Any]) -> np.ndarray | None:
        """The whole direction at once: one C-level id lookup, then numpy checks.

        Returns None at the first sign of any problem; `_parse_reporting` then walks the lists one
        by one to say exactly what and where. A per-list Python loop here was 3x slower.
        """
        if len(section) != len(self.query_ids):
            return None
        lists = [section.get(q) for q in self.query_ids]
        if None in lists or not all(type(x) is list for x in lists):
            return None
        lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        flat = list(chain.from_iterable(lists))
        if not set(map(type, flat)) <= _ID_TYPES:
            return None
        try:
            items = np.fromiter(map(self.lookup.__getitem__, flat), dtype=np.int64, count=len(flat))
        except KeyError:
            return None
        rows = np.repeat(np.arange(len(lists)), lengths)
        # Duplicates within a list: equal (row, item) keys after sorting.
        keys = np.sort(rows * (int(items.max(initial=0)) + 1) + items)
        if np.any(keys[1:] == keys[:-1]):
            return None
        if self.folds > 1:
            keep = self.gallery_fold[items] == self.query_fold[rows]
            items, rows = items[keep], rows[keep]
            lengths = np.bincount(rows, minlength=len(lists))
        if lengths.min(initial=self.k) < self.k:
            return None
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        return items[starts[:, None] + np.arange(self.k)[None, :]]

    def _parse_reporting(self, section: dict[str, Any], issues: IssueList) -> np.ndarray | None:
        ranks = np.zeros((len(self.query_ids), self.k), dtype=np.int64)
        ok = True
        known_queries = {q: i for i, q in enumerate(self.query_ids)}
        for key in section:
            if key not in known_queries:
                ok = False
                issues.add(
                    "unknown_query_id",
                    pointer("predictions", self.direction, key),
                    f"{_short(key)} is not a test {self.query_noun} id of this benchmark",
                    f"keys of {self.direction} are the {self.query_noun} ids of the test split",
                )
        for row, qid in enumerate(self.query_ids):
            ranked = section.get(qid)
            if ranked is None:
                ok = False
                issues.add(
                    "missing_query",
                    pointer("predictions", self.direction, qid),
                    f"no ranked list for test {self.query_noun} {qid}",
                    f"every test {self.query_noun} needs a list of at least {self.k} ids",
                )
                continue
            if not isinstance(ranked, list):
                ok = False
                continue
            indices = self._indices(qid, ranked, issues)
            if indices is None:
                ok = False
                continue
            if self.folds > 1:
                fold = self.query_fold[row]
                indices = [i for i in indices if self.gallery_fold[i] == fold]
            if len(indices) < self.k:
                ok = False
                where = " in the query's 1K fold" if self.folds > 1 else ""
                issues.add(
                    "list_too_short",
                    pointer("predictions", self.direction, qid),
                    f"{len(indices)} {self.item_noun} ids{where}; at least {self.k} are needed for R@{self.k}",
                    "submit the top 10 (or more) ids per query"
                    + ("; for coco-1k rank within the query's fold of 1,000 images" if self.folds > 1 else ""),
                )
                continue
            ranks[row] = indices[: self.k]
        return ranks if ok else None

    def _indices(self, qid: str, ranked: list[Any], issues: IssueList) -> list[int] | None:
        try:
            if not set(map(type, ranked)) <= _ID_TYPES:
                self._report_float_ids(qid, ranked, issues)
                return None
            indices = [self.lookup[x] for x in ranked]
        except KeyError:
            for pos, x in enumerate(ranked):
                if x not in self.lookup:
                    issues.add(
                        "unknown_id",
                        pointer("predictions", self.direction, qid, pos),
                        f"{_short(x)} is not a {self.item_noun} id of this benchmark's test split",
                        f"rank only the benchmark's test {self.item_noun}s (vlbench tasks; see the README)",
                    )
            return None
        if len(set(indices)) != len(indices):
            seen: set[int] = set()
            for pos, i in enumerate(indices):
                if i in seen:
                    issues.add(
                        "duplicate_id_in_list",
                        pointer("predictions", self.direction, qid, pos),
                        f"{_short(ranked[pos])} appears more than once in this ranked list",
                        "each id may appear once per ranked list",
                    )
                seen.add(i)
            return None
        return indices


    def _report_float_ids(self, qid: str, ranked: list[Any], issues: IssueList) -> None:
        # JSON Schema counts 12.0 as an integer, so the schema layer passes it; ids are exact
        # tokens, so say so here. Other wrong types (bool, null, objects) the schema reports.
        for pos, x in enumerate(ranked):
            if type(x) is float and x.is_integer():
                issues.add(
                    "float_id",
                    pointer("predictions", self.direction, qid, pos),
                    f"{_short(x)} is a number with a decimal point; ids are integers or strings",
                    f"write {int(x)} (or \"{int(x)}\")",
                )


class RetrievalTask(TaskType):
    name = "retrieval"
    prediction_schema = "predictions.schema.json"

    def load_ground_truth(self, benchmark: Benchmark, files: GroundTruthFiles) -> RetrievalGroundTruth:
        return read_ground_truth(files.paths["ground_truth"], folds=benchmark.option("folds", 1))

    def fast_structure_ok(self, predictions: Any, benchmark: Benchmark) -> bool:
        # Equivalent to the schema for valid documents, and much faster on 30,000 lists.
        if type(predictions) is not dict or set(predictions) != set(DIRECTIONS):
            return False
        for direction in DIRECTIONS:
            section = predictions[direction]
            if type(section) is not dict:
                return False
            lists = section.values()
            if not all(type(v) is list for v in lists):
                return False
            if not set(map(type, chain.from_iterable(lists))) <= _ID_TYPES:
                return False
        return True

    def check(
        self, predictions: Any, ground_truth: RetrievalGroundTruth, benchmark: Benchmark, issues: IssueList
    ) -> dict[str, np.ndarray] | None:
        if not isinstance(predictions, dict):
            return None
        gt = ground_truth
        k = max(KS)
        parsers = {
            "image_to_text": RankedLists(
                "image_to_text", gt.images, gt.caption_index, gt.image_fold, gt.caption_fold, gt.folds, k
            ),
            "text_to_image": RankedLists(
                "text_to_image", gt.captions, gt.image_index, gt.caption_fold, gt.image_fold, gt.folds, k
            ),
        }
        parsed = {d: parsers[d].parse(predictions.get(d), issues) for d in DIRECTIONS if d in predictions}
        if any(v is None for v in parsed.values()) or len(parsed) != 2:
            return None
        return parsed

    def score(self, parsed: dict[str, np.ndarray], ground_truth: RetrievalGroundTruth, benchmark: Benchmark) -> TaskScores:
        gt = ground_truth
        i2t = image_to_text_hits(parsed["image_to_text"], gt.caption_image)
        t2i = text_to_image_hits(parsed["text_to_image"], gt.caption_image)
        columns = [f"R@{k}" for k in KS]
        items = {
            "image_to_text": ItemTable(list(gt.images), columns, i2t),
            "text_to_image": ItemTable(list(gt.captions), columns, t2i),
        }
        means = {name: {c: t.values[:, j].mean(keepdims=True) for j, c in enumerate(columns)} for name, t in items.items()}
        scores = {key: float(value[0]) for key, value in self.metrics_from_means(benchmark, means).items()}
        return TaskScores(
            scores=scores,
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
        out["RSUM"] = 100.0 * sum(out.values())
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

    def prepare(self, benchmark: Benchmark, source: str, data_dir: Path) -> list[Path]:
        doc = load_karpathy(source, benchmark.option("source_file"))
        gt = build_ground_truth(doc, benchmark.option("split", "test"), benchmark.option("captions_per_image"))
        target = prepare_target(benchmark, benchmark.files[0], data_dir)
        return [write_ground_truth(target, gt)]


