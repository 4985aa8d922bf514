"""Compare two outputs of a driver: the same structure (dict keys in the same order, list lengths,
the types the caller sees) and the same numbers, to a tolerance picked by the metric's name."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

TOL = {"METEOR": 1e-9}  # the others: 1e-12
DEFAULT_TOL = 1e-12


def tolerance(path: str) -> float:
    return next((t for name, t in TOL.items() if name in path), DEFAULT_TOL)


def max_difference(a: Any, b: Any, path: str = "") -> float:
    """Largest numeric difference; AssertionError on any difference of structure or type."""
    assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{path}: keys {list(a)[:5]}... != {list(b)[:5]}..."
        return max((max_difference(a[k], b[k], f"{path}/{k}") for k in a), default=0.0)
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{path}: length {len(a)} != {len(b)}"
        return max((max_difference(x, y, f"{path}/{i}") for i, (x, y) in enumerate(zip(a, b))), default=0.0)
    if isinstance(a, np.ndarray):
        assert a.shape == b.shape and a.dtype == b.dtype, f"{path}: {a.shape} {a.dtype} != {b.shape} {b.dtype}"
        if a.size == 0:
            return 0.0
        assert np.array_equal(np.isnan(a), np.isnan(b)), path
        d = float(np.max(np.abs(np.nan_to_num(a) - np.nan_to_num(b))))
        assert d <= tolerance(path), f"{path}: differs by {d}"
        return d
    if isinstance(a, (float, np.floating)):
        if math.isnan(a) or math.isnan(b):
            assert math.isnan(a) and math.isnan(b), path
            return 0.0
        d = abs(float(a) - float(b))
        assert d <= tolerance(path), f"{path}: {a!r} != {b!r} (differs by {d})"
        return d
    assert a == b, f"{path}: {a!r} != {b!r}"
    return 0.0
