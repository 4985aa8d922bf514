"""Install the repository's folders under the single import name `vlbench`.

The engine (`harness/`) is the `vlbench` package itself; `tasks/` and `baselines/` become
`vlbench.tasks` and `vlbench.baselines`. Declarative metadata stays in pyproject.toml; only the
package mapping lives here, because it is computed from the folders (new subpackages need no edit).
"""

from pathlib import Path

from setuptools import setup

ROOTS = {"vlbench": "harness", "vlbench.tasks": "tasks", "vlbench.baselines": "baselines"}


def packages() -> list[str]:
    found = []
    for name, folder in ROOTS.items():
        for init in sorted(Path(folder).rglob("__init__.py")):
            rel = init.parent.relative_to(folder).parts
            found.append(".".join((name, *rel)))
    return found


setup(packages=packages(), package_dir=ROOTS)
