"""vlbench.backports: on Python 3.9 `zip` takes 3.10's `strict` keyword, with 3.10's meaning."""

from __future__ import annotations

import builtins
import sys

import pytest

from vlbench import backports

CASES = [([1, 2], [3, 4]), ([1], [1, 2]), ([1, 2], [1]), ([1, 2], [1, 2], [1]), ([], []), ([1, 2],)]


def outcome(function, *iterables):
    try:
        return list(function(*iterables))
    except ValueError as exc:
        return str(exc)


@pytest.mark.parametrize("iterables", CASES)
def test_strict_zip_is_the_310_builtin(iterables) -> None:
    ours = outcome(backports._zip_strict, *iterables)
    assert ours == outcome(lambda *its: zip(*its, strict=True), *iterables)  # the builtin on 3.10+
    if len({len(it) for it in iterables}) > 1:
        assert "argument" in ours
    assert outcome(backports._zip, *iterables) == outcome(backports._builtin_zip, *iterables)


def test_install_changes_zip_only_on_39() -> None:
    backports.install()
    if sys.version_info >= (3, 10):
        assert builtins.zip is backports._builtin_zip
    else:
        assert builtins.zip is backports._zip
    assert list(zip("ab", "cd", strict=True)) == [("a", "c"), ("b", "d")]
    with pytest.raises(ValueError, match="argument 2 is shorter than argument 1"):
        list(zip("ab", "c", strict=True))
