"""The fast structural check shared by the ranked-list tasks."""

from __future__ import annotations

from vlbench.tasks.ranked_lists import sections_conform


def test_sections_conform_accepts_only_the_exact_shape() -> None:
    ok = {"a": {"q1": [1, "x"], "q2": []}, "b": {}}
    assert sections_conform(ok, ("a", "b"))
    assert not sections_conform({"a": {"q": [1]}}, ("a", "b"))  # a section missing
    assert not sections_conform({**ok, "c": {}}, ("a", "b"))  # one too many
    assert not sections_conform({"a": [], "b": {}}, ("a", "b"))
    assert not sections_conform({"a": {"q": (1,)}, "b": {}}, ("a", "b"))
    assert not sections_conform({"a": {"q": [1.0]}, "b": {}}, ("a", "b"))
    assert not sections_conform({"a": {"q": [True]}, "b": {}}, ("a", "b"))  # JSON true is not an id
    assert not sections_conform([], ("a",))
