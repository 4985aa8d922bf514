"""The drop-ins reach vlbench's captioning and grounding code only through the two adapter
modules (`compat/_captioning.py`, `compat/_grounding.py`), so that when those packages move their
modules, only the adapters' imports change; and nothing in compat/ imports the libraries it
replaces."""

from __future__ import annotations

import ast
from pathlib import Path

COMPAT = Path(__file__).resolve().parents[2] / "compat"
ADAPTERS = {"_captioning.py": "vlbench.tasks.captioning", "_grounding.py": "vlbench.tasks.grounding"}


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_only_the_adapters_import_task_code() -> None:
    offenders = []
    modules = sorted(COMPAT.rglob("*.py"))
    assert len(modules) >= 15
    for path in modules:
        rel = path.relative_to(COMPAT).as_posix()
        for name in _imported(path):
            if name.startswith(("vlbench.tasks", "tasks")) and rel not in ADAPTERS:
                offenders.append(f"compat/{rel} imports {name}")
            if name.split(".")[0] in ("pycocoevalcap", "datasets", "util", "torch", "prettytable") and \
                    "prettytable" not in name:
                offenders.append(f"compat/{rel} imports {name}")
    assert not offenders, "\n".join(offenders)


def test_each_adapter_reaches_only_its_own_task() -> None:
    for name, package in ADAPTERS.items():
        tasks = {m for m in _imported(COMPAT / name) if m.startswith("vlbench.tasks")}
        assert tasks and all(m.startswith(package) or m == "vlbench.tasks.flickr30k_entities" for m in tasks), tasks
