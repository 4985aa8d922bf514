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


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (b"", "the file is empty: there is no JSON document in it"),
        (b"  \n\t", "the file is only whitespace"),
        (b"image_id,caption\n1,a dog\n", 'the file is not JSON (it looks like CSV; it starts with "image_id,caption")'),
        (b"<!doctype html><html>", "it looks like HTML or XML"),
        (b"hello there", "it looks like text"),
        (b'{"vlbench": 1, "benchmark": "mini-ret', "the file ends in the middle of the JSON document (line 1, column 29"),
        (b'{"a": [1, 2,', "it looks truncated"),
        (b'{"a": 1,,}', "not valid JSON at line 1, column 9: Expecting property name"),
    ],
)
def test_syntax_errors_in_the_users_terms(text: bytes, says: str) -> None:
    issues = IssueList()
    assert loads_strict(text, issues) is None
    [issue] = list(issues)
    assert issue.code == "json_syntax" and says in issue.message, issue.message
    assert "at at" not in issue.message and issue.hint
