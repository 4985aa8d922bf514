"""A scored pair of coco-5k submissions (perfect and random) on the small prepared data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tasks.retrieval.test_validation import envelope, load_gt, perfect_predictions
from vlbench.registry import registry


@pytest.fixture
def submissions(retrieval_data: Path, write_json) -> tuple[Path, Path]:
    b = registry().benchmark("coco-5k")
    gt = load_gt("coco-5k", retrieval_data)
    good = write_json(envelope(perfect_predictions(gt)), "good.json")
    rand = write_json(envelope(registry().task_of(b).random_predictions(gt, b, seed=0)), "random.json")
    return good, rand
