"""Recipes beyond retrieval: each module here calls `vlbench.baselines.recipe.register` on import."""

import importlib
import pkgutil

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
    importlib.import_module(f"{__name__}.{_info.name}")
