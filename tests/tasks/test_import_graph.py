"""`tasks/` has no import cycle: a static graph of every import statement in its modules (at module
level, inside functions and under `TYPE_CHECKING` alike: a lazy import still ties two modules
together) has no strongly connected component of more than one module.

An edge goes from a module to each `vlbench.tasks` module it names: `import a.b` names `a.b`;
`from a.b import c` names `a.b.c` when that is a module, else `a.b` (relative imports resolved).
Importing a submodule also runs its parent packages' `__init__`, but that is not an edge here: a
package that imports its own submodules is fine, as long as no submodule imports the package back.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def module_names(root: Path, package: str) -> dict[str, Path]:
    """Every module under `root` by its dotted name (`pkg/__init__.py` is `pkg`), C extensions
    (`pkg/_ext.c`, built beside it as `pkg._ext`) included: they import nothing of the package."""
    out = {}
    for path in sorted([*root.rglob("*.py"), *root.rglob("*.c")]):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join((package, *parts))] = path
    return out


def _imported(node: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    """The dotted names one import statement names (both `a.b` and `a.b.c` for `from a.b import c`)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".")
            base = base[: len(base) - node.level + (1 if is_package else 0)]
            source = ".".join([*base, node.module] if node.module else base)
        else:
            source = node.module or ""
        yield source
        yield from (f"{source}.{alias.name}" for alias in node.names)


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """module -> the modules of the package it imports."""
    modules = module_names(root, package)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        if path.suffix != ".py":
            graph[name] = set()
            continue
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            named = list(_imported(node, name, is_package))
            if isinstance(node, ast.ImportFrom):
                source, members = named[0], named[1:]
                submodules = [m for m in members if m in modules]
                # `from pkg import submodule` names the submodule; `from module import name`, the module
                edges.update(submodules)
                if len(submodules) < len(members) and source in modules:
                    edges.add(source)
            else:
                edges.update(n for n in named if n in modules)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_tasks_have_no_import_cycle() -> None:
    graph = import_graph(TASKS, "vlbench.tasks")
    assert len(graph) > 50 and "vlbench.tasks.captioning.ptb.rules" in graph
    assert "vlbench.tasks.captioning.ptb.chunks" in graph["vlbench.tasks.captioning.ptb.rules"]
    found = cycles(graph)
    assert not found, "import cycles in tasks/:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_check_finds_a_cycle(tmp_path: Path) -> None:
    """A lazy import back to a package, a relative import and a TYPE_CHECKING import all close a
    cycle; a package importing its own submodules, and siblings importing each other one way, do not."""
    pkg = tmp_path / "p"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from p.a import f\n")
    (pkg / "a.py").write_text("from p import b\ndef f():\n    return b\n")
    (pkg / "b.py").write_text("import os\n")
    (pkg / "sub" / "__init__.py").write_text("from .x import y\n")
    (pkg / "sub" / "x.py").write_text("from p.sub import _ext\ny = 1\n")
    (pkg / "sub" / "_ext.c").write_text("PyMODINIT_FUNC PyInit__ext(void);\n")  # a C extension
    assert cycles(import_graph(pkg, "p")) == []
    (pkg / "b.py").write_text("def g():\n    from p.a import f\n")  # lazy, inside a function
    assert cycles(import_graph(pkg, "p")) == [["p.a", "p.b"]]
    (pkg / "b.py").write_text("import os\n")
    (pkg / "sub" / "x.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import y\n")
    assert cycles(import_graph(pkg, "p")) == [["p.sub", "p.sub.x"]]  # `from . import y`: the package
    (pkg / "sub" / "x.py").write_text("y = 1\n")
    (pkg / "a.py").write_text("import p\n")  # the package imports a, a imports the package
    assert cycles(import_graph(pkg, "p")) == [["p", "p.a"]]
