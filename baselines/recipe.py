"""Recipes are data: a name, the settings they change, where those come from, and their steps.

Adding a recipe means adding a `Recipe` record to a module's `RECIPES` in `baselines/recipes/`
(and, for a new task type, a predictor function `ctx -> predictions` named by "module:function");
the loop, the configuration, the provenance and the submission writing are shared
(`baselines/run.py`).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from vlbench.benchmark import Benchmark
from vlbench.errors import UsageError

from .config import RecipeConfig


@dataclass
class RunContext:
    """What a predictor gets: the trained (or zero-shot) model and the benchmark's inputs."""

    benchmark: Benchmark
    config: RecipeConfig
    device: str
    data_dir: Path | None
    loaded: Any  # baselines.models.LoadedModel
    source: Any  # baselines.data.Source
    progress: bool = True
    notes: dict[str, Any] = field(default_factory=dict)  # predictor facts for meta.extra


@dataclass(frozen=True)
class Recipe:
    name: str
    description: str
    # task name -> "module:function" taking a RunContext and returning the predictions object
    predictors: Mapping[str, str]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)  # setting -> where its default comes from
    train: bool = False
    synthetic: bool = False
    method: str = "{model} {pretrained}"  # meta.method, formatted with the resolved settings

    def predictor(self, task: str) -> Callable[[RunContext], Any]:
        module, _, func = self.predictors[task].partition(":")
        return getattr(importlib.import_module(module), func)


@cache
def all_recipes() -> tuple[Recipe, ...]:
    """Every recipe, found the way the engine finds task packages: `vlbench.baselines.recipes`
    and each module in it export `RECIPES`, a tuple of records; nothing registers itself."""
    package = importlib.import_module("vlbench.baselines.recipes")
    found: dict[str, Recipe] = {}
    modules = [package] + [importlib.import_module(f"{package.__name__}.{info.name}")
                           for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name)]
    for module in modules:
        for recipe in getattr(module, "RECIPES", ()):
            if recipe.name in found:
                raise RuntimeError(f"recipe {recipe.name} is defined twice (in {module.__name__})")
            found[recipe.name] = recipe
    return tuple(found.values())


def get(name: str) -> Recipe:
    for r in all_recipes():
        if r.name == name:
            return r
    known = ", ".join(r.name for r in all_recipes())
    raise UsageError(f"unknown recipe {name!r}; known recipes: {known} (vlbench baseline list)")
