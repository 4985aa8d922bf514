"""Install the repository's folders under the single import name `vlbench`.

The engine (`harness/`) is the `vlbench` package itself; `tasks/`, `baselines/` and `compat/` become
`vlbench.tasks`, `vlbench.baselines` and `vlbench.compat` (the drop-ins for pycocoevalcap and MDETR). Declarative metadata stays in pyproject.toml; only the
package mapping lives here, because it is computed from the folders (new subpackages need no edit).

Two optional C extensions: METEOR's aligner (`tasks/captioning/meteor/_meteor_align.c`) and the pass
over its paraphrase table (`tasks/captioning/meteor/_paraphrase_scan.c`). Without a C compiler the install
still succeeds and METEOR runs the same algorithms in Python and numpy, slower.
"""

from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOTS = {
    "vlbench": "harness",
    "vlbench.tasks": "tasks",
    "vlbench.baselines": "baselines",
    "vlbench.compat": "compat",
}


def packages() -> list[str]:
    found = []
    for name, folder in ROOTS.items():
        for init in sorted(Path(folder).rglob("__init__.py")):
            rel = init.parent.relative_to(folder).parts
            found.append(".".join((name, *rel)))
    return found


class BuildExt(build_ext):
    """Compiler flags that keep the aligner's floating point bit-equal to Python's: no fused
    multiply-add contraction, no fast-math (the score that picks the best reference must round
    exactly as `meteor.aligner.segment_score` does)."""

    def build_extensions(self) -> None:
        msvc = self.compiler.compiler_type == "msvc"
        flags = ["/O2", "/fp:precise"] if msvc else ["-O2", "-ffp-contract=off", "-fno-fast-math"]
        for ext in self.extensions:
            ext.extra_compile_args = [*flags, *ext.extra_compile_args]
        super().build_extensions()


METEOR_ALIGN = Extension(
    "vlbench.tasks.captioning.meteor._meteor_align",
    sources=["tasks/captioning/meteor/_meteor_align.c"],
    optional=True,  # no compiler: the pure-Python aligner (meteor/aligner.py) runs instead
)
PARAPHRASE_SCAN = Extension(
    "vlbench.tasks.captioning.meteor._paraphrase_scan",
    sources=["tasks/captioning/meteor/_paraphrase_scan.c"],
    optional=True,  # no compiler: meteor/paraphrase_table.py keys the table with numpy instead
)

setup(packages=packages(), package_dir=ROOTS, ext_modules=[METEOR_ALIGN, PARAPHRASE_SCAN], cmdclass={"build_ext": BuildExt})
