"""The fast structural check shared by the ranked-list tasks."""

from __future__ import annotations

import numpy as np
import pytest

from vlbench.tasks.ranked_lists import _has_repeats, sections_conform


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


def _lists(lengths: list[int], seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    items = np.concatenate([rng.choice(50, n, replace=False) for n in lengths]).astype(np.int64)
    lens = np.asarray(lengths)
    return items, lens, np.repeat(np.arange(len(lengths)), lens)


def _repeats_directly(items: np.ndarray, lengths: np.ndarray) -> bool:
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    return any(len(set(items[s : s + n].tolist())) < n for s, n in zip(starts, lengths))


@pytest.mark.parametrize("lengths", [[10] * 7, [3, 10, 1, 7, 10], [1], [5] * 40, [0, 4, 4]])
def test_has_repeats_finds_a_repeat_in_any_list_of_equal_or_ragged_lengths(lengths: list[int]) -> None:
    for seed in range(20):
        items, lens, rows = _lists(lengths, seed)
        assert not _has_repeats(items, lens, rows)
        for row in np.flatnonzero(lens >= 2):
            start = int(lens[:row].sum())
            broken = items.copy()
            broken[start + lens[row] - 1] = broken[start]  # the row's last id repeats its first
            assert _has_repeats(broken, lens, rows) == _repeats_directly(broken, lens) is True
        # an id repeated across two lists is no repeat
        if len(lens) >= 2 and lens[0] and lens[1]:
            across = items.copy()
            across[lens[0]] = across[0]
            assert _has_repeats(across, lens, rows) == _repeats_directly(across, lens)
