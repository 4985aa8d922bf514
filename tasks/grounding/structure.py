"""A fast, conservative mirror of the grounding predictions schema.

When `walk_structure` accepts a document the JSON Schema pass is skipped (it is slow on large
documents); the walk keeps the boxes it converted for the checks (`Structure.memo`).
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from vlbench.backports import strict_zip

MAX_BOXES = 100


_INDEX_KEY = re.compile(r"[0-9]{1,6}")


def _digits(key: Any, max_len: int) -> bool:
    """Same strings as the schema pattern ^[0-9]{1,max_len}$ minus a trailing newline (which
    Python's `$` lets through): str methods are several times faster than a regex here."""
    return type(key) is str and 0 < len(key) <= max_len and key.isascii() and key.isdigit()


_ENTRY_KEYS = frozenset({"boxes", "scores", "phrase_id"})


_NUMBER_TYPES = frozenset({int, float})


def _numbers_ok(values: Any) -> bool:
    return set(map(type, values)) <= _NUMBER_TYPES


@dataclass
class _Walk:
    """What `walk_structure` learnt about a document it accepted: every coordinate as one float64
    array and the number of boxes of each entry, in document order. The harness hands it to
    `check` with the same document, which reuses it instead of converting 500k numbers
    again."""

    document: Any
    coordinates: np.ndarray  # (4 * total boxes,)
    counts: list[int]


def _coordinates(all_boxes: list[list]) -> np.ndarray | None:
    """All coordinates as float64 if every one is an int or float (not bool), else None.

    `array('d', ...)` converts in C and refuses str, None and containers (numpy's fromiter would
    parse numeric strings). It accepts bool, which JSON Schema's number does not; a bool becomes
    0.0 or 1.0, so only those positions are looked at again. (It would also accept non-JSON
    objects with __float__, e.g. Decimal; the JSON reader never produces them.)
    """
    try:
        coords = np.frombuffer(array("d", chain.from_iterable(all_boxes)), dtype=np.float64)
    except (TypeError, OverflowError, ValueError):
        return None
    suspects = np.flatnonzero((coords == 0.0) | (coords == 1.0))
    for i, j in strict_zip((suspects // 4).tolist(), (suspects % 4).tolist()):
        if type(all_boxes[i][j]) is bool:
            return None
    return coords


def _is_number(v: Any) -> bool:
    # What JSON Schema's "number" accepts from Python objects (subclasses included, bool not).
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _boxes_ok(boxes: Any, limit: int | None = MAX_BOXES) -> bool:
    """`boxes` satisfies the schema's box list (the slow, per-value test); `limit` None: any
    number of boxes (other tools' formats have no cap)."""
    return (
        isinstance(boxes, list)
        and (limit is None or len(boxes) <= limit)
        and all(isinstance(b, list) and len(b) == 4 and all(map(_is_number, b)) for b in boxes)
    )


def structure_ok(predictions: Any) -> bool:
    """Conservative mirror of predictions.schema.json: True only if the schema accepts."""
    return walk_structure(predictions) is not None


def walk_structure(predictions: Any) -> _Walk | None:
    """`structure_ok`, returning what was learnt (None: the schema may refuse the document).

    Type tests use `type(x) is ...` (JSON Schema's number excludes bool) and keys are checked
    as full matches (Python's `$` would also accept a trailing newline; rejecting more is safe).
    Coordinates are checked while converting them all at once, in C (see `_coordinates`).
    """
    if type(predictions) is not dict:
        return None
    all_boxes: list = []
    counts: list[int] = []
    for image_key, sentences in predictions.items():
        if type(sentences) is not dict or not _digits(image_key, 20):
            return None
        for sentence_key, phrases in sentences.items():
            if type(phrases) is not dict or not _digits(sentence_key, 6):
                return None
            for phrase_key, entry in phrases.items():
                if type(entry) is not dict or not _digits(phrase_key, 6):
                    return None
                if not entry.keys() <= _ENTRY_KEYS:
                    return None
                boxes = entry.get("boxes")
                if type(boxes) is not list or len(boxes) > MAX_BOXES:
                    return None
                all_boxes += boxes
                counts.append(len(boxes))
                if "scores" in entry:
                    scores = entry["scores"]
                    if type(scores) is not list or len(scores) > MAX_BOXES or not _numbers_ok(scores):
                        return None
                if "phrase_id" in entry:
                    pid = entry["phrase_id"]
                    if not _digits(pid, 12):
                        return None
    if all_boxes and not (set(map(type, all_boxes)) == {list} and set(map(len, all_boxes)) == {4}):
        return None
    coords = _coordinates(all_boxes)
    if coords is None:
        return None
    return _Walk(predictions, coords, counts)


def _entry_ok(entry: Any) -> bool:
    """One phrase entry satisfies the schema's `phrase` (the per-value test, for the error path)."""
    return (
        type(entry) is dict
        and "boxes" in entry
        and entry.keys() <= _ENTRY_KEYS
        and _boxes_ok(entry["boxes"])
        and (
            "scores" not in entry
            or (type(entry["scores"]) is list and len(entry["scores"]) <= MAX_BOXES
                and all(map(_is_number, entry["scores"])))
        )
        and ("phrase_id" not in entry or _digits(entry["phrase_id"], 12))
    )


def structure_suspects(predictions: Any, limit: int = 2000) -> tuple[tuple[str, ...], ...] | None:
    """Where a document `walk_structure` refused may break the schema: the paths of the values
    (with the keys leading to them) the schema layer needs to look at, up to `limit` of them;
    everything else certainly conforms. None: the whole document (it is not an object)."""
    if type(predictions) is not dict:
        return None
    found: list[tuple[str, ...]] = []
    for image_key, sentences in predictions.items():
        if len(found) >= limit:
            break
        if type(sentences) is not dict or not _digits(image_key, 20):
            found.append((image_key,))
            continue
        for sentence_key, phrases in sentences.items():
            if type(phrases) is not dict or not _digits(sentence_key, 6):
                found.append((image_key, sentence_key))
                continue
            found.extend(
                (image_key, sentence_key, phrase_key)
                for phrase_key, entry in phrases.items()
                if not (_digits(phrase_key, 6) and _entry_ok(entry))
            )
    return tuple(found[:limit])
