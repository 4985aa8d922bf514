"""The compat tests import their helpers (`compat_inputs`, `compat_drivers`, `compat_compare`)
from helpers/, and keep the grounding cache in the session's temporary folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# helpers/, not this folder: its pycocoevalcap/ would shadow the real package (a namespace package)
sys.path.insert(0, str(Path(__file__).parent / "helpers"))


@pytest.fixture(autouse=True)
def _own_caches(tmp_path_factory, monkeypatch):
    """The grounding cache in a folder of the session (never the user's); METEOR's index stays
    where the captioning tests keep it (building it takes seconds)."""
    monkeypatch.setenv("VLBENCH_COMPAT_CACHE", str(tmp_path_factory.getbasetemp() / "compat-cache"))
