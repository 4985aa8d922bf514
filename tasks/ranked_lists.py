"""Ranked-list predictions, `{query id: [gallery id, ...]}`: validation shared by the retrieval
task types (standard retrieval both ways, decorrelated retrieval).

`parse_ranked_lists` returns a (queries, K) matrix of gallery rows, or None after reporting every
problem: unknown query keys, missing queries, ids that are not in the gallery, ids written as
floats, repeated ids, lists shorter than K (after an optional fold filter). The whole section is
first tried at once (one C-level id lookup, numpy checks); the per-list walk that says exactly
what and where runs only when that fails. Ids are JSON integers or strings; the task's `rows_of`
maps a list of such ids to gallery rows (-1: not in the gallery).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from vlbench.backports import strict_zip
from vlbench.errors import IssueList, pointer

ID_TYPES = frozenset({int, str})
RowsOf = Callable[[list[Any]], np.ndarray]


def short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class RankedListSpec:
    """One section of a submission (e.g. `image_to_text`) and how to read and describe it."""

    section: str
    query_ids: list[str]
    rows_of: RowsOf
    k: int
    metric: str  # named in the too-short message, e.g. "R@10"
    query_noun: str  # "test image", "query"
    item_noun: str  # "caption", "image"
    gallery_name: str  # "this benchmark's test split", "the gallery (train+val+test captions)"
    unknown_item_hint: str
    unknown_query_hint: str
    # Optional folds (COCO 1K): ids outside the query's fold are dropped before taking the top K.
    query_fold: np.ndarray | None = None
    gallery_fold: np.ndarray | None = None


def sections_conform(predictions: Any, sections: Collection[str]) -> bool:
    """True when `predictions` is exactly `{section: {query id: [id, ...]}}` for `sections`, ids JSON
    integers or strings: equivalent to the ranked-list prediction schemas for valid documents, and
    much faster on thousands of lists (a task's `fast_structure`)."""
    if type(predictions) is not dict or set(predictions) != set(sections):
        return False
    for name in sections:
        section = predictions[name]
        if type(section) is not dict:
            return False
        lists = section.values()
        if not all(type(v) is list for v in lists):
            return False
        if not set(map(type, chain.from_iterable(lists))) <= ID_TYPES:
            return False
    return True


def parse_ranked_lists(spec: RankedListSpec, section: Any, issues: IssueList) -> np.ndarray | None:
    if not isinstance(section, dict):
        return None  # the schema layer reports it
    ranks = _parse_fast(spec, section)
    return ranks if ranks is not None else _parse_reporting(spec, section, issues)


def _parse_fast(spec: RankedListSpec, section: dict[str, Any]) -> np.ndarray | None:
    """None at the first sign of any problem. Whole-section array work, not a Python loop per list:
    every valid submission takes this path, and a COCO-5K file has 30,000 lists."""
    if len(section) != len(spec.query_ids):
        return None
    lists = [section.get(q) for q in spec.query_ids]
    if None in lists or not all(type(x) is list for x in lists):
        return None
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    flat = list(chain.from_iterable(lists))
    if not set(map(type, flat)) <= ID_TYPES:
        return None
    items = spec.rows_of(flat)
    if items.size and items.min() < 0:
        return None
    rows = np.repeat(np.arange(len(lists)), lengths)
    if _has_repeats(items, lengths, rows):
        return None
    if spec.query_fold is not None and spec.gallery_fold is not None:
        keep = spec.gallery_fold[items] == spec.query_fold[rows]
        items, rows = items[keep], rows[keep]
        lengths = np.bincount(rows, minlength=len(lists))
    if lengths.min(initial=spec.k) < spec.k:
        return None
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    return items[starts[:, None] + np.arange(spec.k)[None, :]]


def _has_repeats(items: np.ndarray, lengths: np.ndarray, rows: np.ndarray) -> bool:
    """Whether some list names an id twice. Lists of one length (the usual submission) are sorted
    row by row, which costs a twentieth of one sort of all (row, item) keys at COCO-5K size."""
    if lengths.size and lengths.min() == lengths.max():
        by_row = np.sort(items.reshape(lengths.size, -1), axis=1)
        return bool(np.any(by_row[:, 1:] == by_row[:, :-1]))
    keys = np.sort(rows * (int(items.max(initial=0)) + 1) + items)
    return bool(np.any(keys[1:] == keys[:-1]))


def _parse_reporting(spec: RankedListSpec, section: dict[str, Any], issues: IssueList) -> np.ndarray | None:
    ok = True
    known = set(spec.query_ids)
    for key in section:
        if key not in known:
            ok = False
            issues.add(
                "unknown_query_id",
                pointer("predictions", spec.section, key),
                f"{short_repr(key)} is not a {spec.query_noun} id of this benchmark",
                spec.unknown_query_hint,
            )
    ranks = np.zeros((len(spec.query_ids), spec.k), dtype=np.int64)
    folded = spec.query_fold is not None and spec.gallery_fold is not None
    for row, qid in enumerate(spec.query_ids):
        ranked = section.get(qid)
        if ranked is None:
            ok = False
            issues.add(
                "missing_query",
                pointer("predictions", spec.section, qid),
                f"no ranked list for {spec.query_noun} {qid}",
                f"every {spec.query_noun} needs a list of at least {spec.k} {spec.item_noun} ids",
            )
            continue
        if not isinstance(ranked, list):
            ok = False
            continue
        indices = _list_rows(spec, qid, ranked, issues)
        if indices is None:
            ok = False
            continue
        if folded:
            fold = spec.query_fold[row]  # type: ignore[index]
            indices = [i for i in indices if spec.gallery_fold[i] == fold]  # type: ignore[index]
        if len(indices) < spec.k:
            ok = False
            where = " in the query's 1K fold" if folded else ""
            issues.add(
                "list_too_short",
                pointer("predictions", spec.section, qid),
                f"{len(indices)} {spec.item_noun} ids{where}; at least {spec.k} are needed for {spec.metric}",
                f"submit the top {spec.k} (or more) {spec.item_noun} ids per query"
                + ("; for coco-1k rank within the query's fold of 1,000 images" if folded else ""),
            )
            continue
        ranks[row] = indices[: spec.k]
    return ranks if ok else None


def _list_rows(spec: RankedListSpec, qid: str, ranked: list[Any], issues: IssueList) -> list[int] | None:
    """Gallery rows of one list, or None after reporting what is wrong with it."""
    if not set(map(type, ranked)) <= ID_TYPES:
        for pos, x in enumerate(ranked):
            # JSON Schema counts 12.0 as an integer, so the schema layer passes it; ids are exact
            # tokens. Other wrong types (bool, null, objects) the schema layer reports.
            if type(x) is float and x.is_integer():
                issues.add(
                    "float_id",
                    pointer("predictions", spec.section, qid, pos),
                    f"{short_repr(x)} is a number with a decimal point; ids are integers or strings",
                    f"write {int(x)} (or \"{int(x)}\")",
                )
        return None
    rows = spec.rows_of(ranked).tolist()
    if -1 in rows:
        for pos, (x, r) in enumerate(strict_zip(ranked, rows)):
            if r < 0:
                issues.add(
                    "unknown_id",
                    pointer("predictions", spec.section, qid, pos),
                    f"{short_repr(x)} is not a {spec.item_noun} id of {spec.gallery_name}",
                    spec.unknown_item_hint,
                )
        return None
    if len(set(rows)) != len(rows):
        seen: set[int] = set()
        for pos, r in enumerate(rows):
            if r in seen:
                issues.add(
                    "duplicate_id_in_list",
                    pointer("predictions", spec.section, qid, pos),
                    f"{short_repr(ranked[pos])} appears more than once in this ranked list",
                    f"each {spec.item_noun} id may appear once per ranked list",
                )
            seen.add(r)
        return None
    return rows


def dict_rows_of(lookup: dict[Any, int]) -> RowsOf:
    """`rows_of` for a dict from id (str, and int for canonical decimals) to gallery row."""

    def rows_of(ids: list[Any]) -> np.ndarray:
        try:
            return np.fromiter(map(lookup.__getitem__, ids), dtype=np.int64, count=len(ids))
        except KeyError:
            return np.fromiter((lookup.get(x, -1) for x in ids), dtype=np.int64, count=len(ids))

    return rows_of
