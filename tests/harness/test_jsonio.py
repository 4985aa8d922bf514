"""Strict JSON reading: duplicate keys at any depth, escaped spellings of one key."""

from __future__ import annotations

import pytest

from vlbench.errors import IssueList
from vlbench.jsonio import loads_strict


@pytest.mark.parametrize(
    ("text", "duplicate"),
    [
        (b'{"a": 1, "b": {"a": 2}, "c": [{"a": 1}, {"a": 1}]}', False),
        (b'{"a": 1, "x": ["a", {"a": 1}], "a" : 3}', True),
        (b'{"x": "{\\"a\\": 1, \\"a\\": 2}", "a": 1}', False),
        (b'{"\\u0061": 1, "a": 2}', True),
        (b'{"a": [{"b": 1, "b": 2}]}', True),
        (b'[{"k": 1}, {"k": 1}]', False),
    ],
)
def test_duplicate_keys_at_any_depth(text: bytes, duplicate: bool) -> None:
    issues = IssueList()
    loads_strict(text, issues)
    assert ("duplicate_key" in issues.codes()) == duplicate


def test_bom_is_accepted_and_position_is_reported() -> None:
    issues = IssueList()
    assert loads_strict("\ufeff[1]".encode(), issues) == [1] and not issues
    loads_strict(b'{\n "a": 1,\n "a": 2}', issues)
    assert "line 3" in next(iter(issues)).message
