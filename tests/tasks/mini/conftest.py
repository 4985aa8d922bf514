"""A small mini world (90 images), generated once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlbench.tasks.mini import write_mini_benchmark
from vlbench.tasks.mini.build import MiniConfig

SMALL = MiniConfig(n_train=40, n_val=10, n_test=40, n_pool=400)


@pytest.fixture(scope="session")
def small_config() -> MiniConfig:
    return SMALL


@pytest.fixture(scope="session")
def small_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    out = tmp_path_factory.mktemp("mini") / "world"
    written = write_mini_benchmark(out, config=SMALL)
    return out, written
