"""`ground_truth.load_ground_truth`, the one way a benchmark's ground truth is read: located,
verified against its pinned sha256 and parsed by its task, for validation and the recipes alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlbench.errors import UsageError
from vlbench.ground_truth import load_ground_truth, locate_ground_truth
from vlbench.registry import registry


def test_the_task_reads_the_located_files(retrieval_data: Path) -> None:
    benchmark = registry().benchmark("coco-1k")
    task = registry().task_of(benchmark)
    gt, files = load_ground_truth(benchmark, retrieval_data)
    assert files == locate_ground_truth(benchmark, retrieval_data)
    direct = task.load_ground_truth(benchmark, files)
    given, _ = load_ground_truth(benchmark, retrieval_data, task)  # the caller's task: the same
    for other in (direct, given):
        assert other.images == gt.images and other.captions == gt.captions
        assert (other.caption_image == gt.caption_image).all() and other.folds == gt.folds == 5


def test_a_bundled_benchmark_needs_no_data_folder() -> None:
    benchmark = registry().benchmark("mini-captions")
    refs, files = load_ground_truth(benchmark, None)
    assert len(refs.ids) > 0 and files.combined_sha256 == benchmark.files[0].sha256


def test_missing_ground_truth_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="ground truth for coco-5k not found"):
        load_ground_truth(registry().benchmark("coco-5k"), tmp_path)
