"""`recipe.py`: recipes are records, found in `baselines/recipes/` the way task packages are found."""

from __future__ import annotations

import importlib

import pytest

import vlbench.baselines.recipes as catalogue
from vlbench.baselines.recipe import Recipe, all_recipes, get
from vlbench.errors import UsageError
from vlbench.registry import registry


def test_every_recipe_is_found_once_in_catalogue_order() -> None:
    names = [r.name for r in all_recipes()]
    assert names == ["clip-zeroshot", "clip-finetune", "clip-finetune-synthetic", "clip-scratch", "caption-nn",
                     "grounding-clip-regions"]
    assert all(isinstance(r, Recipe) for r in all_recipes())
    assert [r.name for r in catalogue.RECIPES] == names[:4]


def test_recipes_are_declared_not_registered() -> None:
    """Each module's records are its own `RECIPES`; collecting them twice changes nothing."""
    caption = importlib.import_module("vlbench.baselines.recipes.caption_nn")
    regions = importlib.import_module("vlbench.baselines.recipes.grounding_regions")
    assert [r.name for r in caption.RECIPES] == ["caption-nn"]
    assert [r.name for r in regions.RECIPES] == ["grounding-clip-regions"]
    all_recipes.cache_clear()
    assert [r.name for r in all_recipes()] == [r.name for r in (*catalogue.RECIPES, *caption.RECIPES,
                                                                *regions.RECIPES)]


def test_every_predictor_names_a_registered_task_and_a_function() -> None:
    tasks = set(registry().tasks)
    for recipe in all_recipes():
        assert set(recipe.predictors) <= tasks
        for task in recipe.predictors:
            assert callable(recipe.predictor(task))


def test_an_unknown_recipe_names_the_known_ones() -> None:
    with pytest.raises(UsageError) as exc:
        get("clip-zero")
    assert "unknown recipe 'clip-zero'" in str(exc.value) and "grounding-clip-regions" in str(exc.value)
