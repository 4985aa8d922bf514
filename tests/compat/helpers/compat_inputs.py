"""Shared inputs of the compat tests: the caption sets of the captioning fidelity tests, the real
sets of ../shared/realdata and the Flickr30k Entities trees of the grounding tests, loaded from
those test folders under names of their own (their modules are all called conftest)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

TESTS = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


caption_sets = _load("vlbench_test_caption_sets", TESTS / "tasks" / "captioning" / "conftest.py")
caption_realdata = _load("vlbench_test_caption_realdata", TESTS / "tasks" / "captioning" / "realdata.py")
entity_trees = _load("vlbench_test_entity_trees", TESTS / "tasks" / "grounding" / "conftest.py")

HAVE_JAVA = caption_sets.HAVE_JAVA
needs_java = caption_sets.needs_java


def java_missing_reason() -> str:
    return "java is not installed (or VLBENCH_JAVA=none)" if shutil.which("java") else "java is not installed"
