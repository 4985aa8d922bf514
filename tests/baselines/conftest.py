"""The generated mini world (with images) once per test session, and tiny-model settings."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("open_clip")

# A tiny randomly initialised CLIP (baselines/model_configs/tiny-vit-p8.json): seconds on a CPU.
TINY = ["model=tiny-vit-p8", "pretrained=none", "workers=0", "batch_size=16", "embed_batch_size=128"]


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vlbench.baselines.data import mini_world

    root = tmp_path_factory.mktemp("vldata")
    mini_world(root, progress=False)
    return root


@pytest.fixture(scope="session")
def mini_pairs(data_dir: Path) -> list:
    from vlbench.baselines.config import resolve
    from vlbench.baselines.data import load_source, train_pairs
    from vlbench.registry import registry

    source = load_source(registry().benchmark("mini-retrieval"), resolve(), data_dir)
    return train_pairs(source, resolve({"max_train_pairs": 64}))
