"""vlbench.backports: `strict_zip` is 3.10's `zip(..., strict=True)` on every version, and no
builtin is replaced; the core (harness/, tasks/) and the tests that run on 3.9 call it, never
`zip` with `strict`."""

from __future__ import annotations

import ast
import builtins
import sys
from pathlib import Path

import pytest

import vlbench
from vlbench import backports

ROOT = Path(__file__).resolve().parents[2]

# (iterables, what 3.10's zip(..., strict=True) gives: the tuples or its error message)
CASES = [
    (([1, 2], [3, 4]), [(1, 3), (2, 4)]),
    (([1], [1, 2]), "zip() argument 2 is longer than argument 1"),
    (([1, 2], [1]), "zip() argument 2 is shorter than argument 1"),
    (([1, 2], [1, 2], [1]), "zip() argument 3 is shorter than arguments 1-2"),
    (([1], [1], [1, 2]), "zip() argument 3 is longer than arguments 1-2"),
    (([1], [1, 2], [1, 2]), "zip() argument 2 is longer than argument 1"),
    (([], []), []),
    (([1, 2],), [(1,), (2,)]),
    ((), []),
]


def outcome(function, *iterables):
    try:
        return list(function(*iterables))
    except ValueError as exc:
        return str(exc)


@pytest.mark.parametrize(("iterables", "expected"), CASES)
def test_strict_zip_is_the_310_builtin(iterables, expected) -> None:
    assert outcome(backports.strict_zip, *iterables) == expected
    assert outcome(backports._zip_strict, *iterables) == expected  # what 3.9 runs
    if sys.version_info >= (3, 10):
        assert outcome(lambda *its: zip(*its, strict=True), *iterables) == expected


def test_strict_zip_is_lazy_and_stops_at_the_first_difference() -> None:
    pairs = backports.strict_zip(iter([1, 2, 3]), iter("ab"))
    assert next(pairs) == (1, "a") and next(pairs) == (2, "b")
    with pytest.raises(ValueError, match="argument 2 is shorter"):
        next(pairs)


def test_importing_vlbench_changes_no_builtin() -> None:
    assert vlbench.__version__
    assert builtins.zip.__module__ == "builtins"
    assert not hasattr(backports, "install")


def _zip_with_strict(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "zip"
            and any(k.arg == "strict" for k in node.keywords)]


def test_the_core_and_its_tests_call_strict_zip() -> None:
    """`zip(..., strict=...)` is a TypeError on Python 3.9, where the core runs (EvalAI): harness/,
    tasks/ and the tests that run there (all but tests/baselines, which need torch) use
    `strict_zip`. A line that CI's 3.9 run does not reach would otherwise fail only for users."""
    files = [p for folder in ("harness", "tasks", "tests") for p in sorted((ROOT / folder).rglob("*.py"))
             if "baselines" not in p.relative_to(ROOT).parts and p.name not in ("backports.py", "test_backports.py")]
    assert len(files) > 100
    offenders = [f"{p.relative_to(ROOT)}:{line}" for p in files for line in _zip_with_strict(p)]
    assert not offenders, "zip(..., strict=...) on Python 3.9: use vlbench.backports.strict_zip\n" + "\n".join(offenders)


def test_the_scan_sees_zip_with_strict(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("a = zip(x, y)\nb = zip(x,\n        y, strict=True)\ndef f():\n    return zip(*z, strict=False)\n")
    assert _zip_with_strict(source) == [2, 5]
