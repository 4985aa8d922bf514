"""`vlbench.source_check`: a prepare source that is not the benchmark's is refused with every
difference, or, forced, recorded and reported as a warning (never printed from here)."""

from __future__ import annotations

import warnings

import pytest

from vlbench.errors import UsageError
from vlbench.source_check import SourceDeviation, SourceMismatch, check_source

MISMATCHES = [SourceMismatch("images in split 'test'", "5,000", "4,999"),
              SourceMismatch("the 'dataset' field", "'coco'", "'flickr8k'")]


def test_the_expected_source_leaves_no_record() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_source("coco-5k", "src", [], force=True, expected_source="x") is None


def test_another_source_is_refused_with_every_difference(capsys) -> None:
    with pytest.raises(UsageError) as exc:
        check_source("coco-5k", "src", MISMATCHES, force=False, expected_source="the Karpathy file")
    text = str(exc.value)
    assert "--source src is not the source of coco-5k (expected the Karpathy file)" in text
    assert all(str(m) in text for m in MISMATCHES) and "--force" in text
    assert capsys.readouterr() == ("", "")


def test_a_forced_source_is_recorded_and_warned_about_not_printed(capsys) -> None:
    with pytest.warns(SourceDeviation, match="--force: preparing coco-5k from a source that differs"):
        record = check_source("coco-5k", "src", MISMATCHES, force=True, expected_source="the Karpathy file")
    assert record == {
        "forced": True, "source": "src", "expected": "the Karpathy file",
        "deviations": [{"what": m.what, "expected": m.expected, "found": m.found} for m in MISMATCHES],
    }
    assert capsys.readouterr() == ("", "")
