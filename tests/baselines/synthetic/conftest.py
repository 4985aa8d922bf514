"""The mini world's train images, shared by the D' tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlbench.baselines.synthetic.sources import SourceImage, load_sources


@pytest.fixture(scope="module")
def sources(data_dir: Path) -> list[SourceImage]:
    return load_sources("mini-retrieval", data_dir, None)[:120]
