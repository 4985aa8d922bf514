"""The engine never imports its plugins: tasks, baselines and the compat drop-ins depend on
`vlbench`, not the reverse.

The registry finds task packages by walking the `vlbench.tasks` package (`registry.registry`,
`registry.cli_plugins`); no other module under harness/ may name a task or baseline module.
"""

from __future__ import annotations

import ast
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[2] / "harness"
PLUGINS = ("vlbench.tasks", "vlbench.baselines", "vlbench.compat", "tasks", "baselines", "compat")
# The discovery root itself (not a module inside it) may be imported by the registry only.
DISCOVERY = {"registry.py": {"vlbench.tasks"}}


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.lineno, node.module)]
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            found += [(node.lineno, node.args[0].value)]
    return found


def _is_plugin(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in PLUGINS)


def test_no_engine_module_imports_a_task_or_baseline() -> None:
    offenders = []
    modules = sorted(HARNESS.rglob("*.py"))
    assert len(modules) > 10
    for path in modules:
        rel = path.relative_to(HARNESS).as_posix()
        allowed = DISCOVERY.get(rel, set())
        for line, name in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if _is_plugin(name) and name not in allowed:
                offenders.append(f"harness/{rel}:{line} imports {name}")
    assert not offenders, "\n".join(offenders)


def test_the_scan_sees_imports() -> None:
    """The scan itself must catch every spelling (else the test above could never fail)."""
    source = (
        "import vlbench.tasks.grounding\n"
        "from vlbench.tasks.mini import write_mini_benchmark\n"
        "from vlbench.baselines import cli\n"
        "from vlbench.compat.pycocoevalcap.eval import COCOEvalCap\n"
        "import tasks\n"
        "def f():\n"
        "    from vlbench.tasks import grounding\n"
        "    importlib.import_module('vlbench.baselines.run')\n"
    )
    names = [name for _, name in _imports(ast.parse(source)) if _is_plugin(name)]
    assert {"vlbench.tasks.grounding", "vlbench.tasks.mini", "vlbench.baselines.cli", "tasks",
            "vlbench.baselines.run", "vlbench.compat.pycocoevalcap.eval"} <= set(names)


def test_the_statistics_need_only_the_item_tables() -> None:
    """`stats.py` resamples item tables: it imports no record, task interface or discovery (only
    the item tables, and `backports`, the 3.9 stand-ins for 3.10 builtins)."""
    tree = ast.parse((HARNESS / "stats.py").read_text(encoding="utf-8"))
    engine = {name.split(".")[1] for _, name in _imports(tree)
              if name.startswith("vlbench.") and name.count(".") == 1}
    assert engine == {"item_table", "backports"}
