"""Recipes are data: a name, the settings they change, where those come from, and their steps.

Adding a recipe means adding a `Recipe` record to `RECIPES` (and, for a new task type, a predictor
function `ctx -> predictions` named by "module:function"); the loop, the configuration, the
provenance and the submission writing are shared (`baselines/run.py`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlbench.benchmark import Benchmark
from vlbench.errors import UsageError

from .config import RecipeConfig

PAPER = "ODmAP paper Sec. 4 (CLIP: 10 epochs, batch 256, Adam, lr 2e-6 halved every 2 epochs)"


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


RETRIEVAL = {
    "retrieval": "vlbench.baselines.predict:retrieval",
    "decorrelated_retrieval": "vlbench.baselines.predict:decorrelated",
}

RECIPES: tuple[Recipe, ...] = (
    Recipe(
        name="clip-zeroshot",
        description="open_clip model as it is: embeddings once, similarity on the device, chunked top-K",
        predictors=RETRIEVAL,
        sources={"model": "CLIP paper / ODmAP paper Table 1 (CLIP zero-shot, ViT-B/32)", "pretrained": "OpenAI weights"},
        method="CLIP {model} {pretrained} zero-shot",
    ),
    Recipe(
        name="clip-finetune",
        description="contrastive fine-tuning on the benchmark's train split, then zero-shot ranking",
        predictors=RETRIEVAL,
        sources={k: PAPER for k in ("epochs", "batch_size", "optimizer", "lr", "lr_halve_every_epochs")},
        train=True,
        method="CLIP {model} {pretrained} fine-tuned",
    ),
    Recipe(
        name="clip-finetune-synthetic",
        description="fine-tuning on D plus object-removed pairs D' (the ODmAP paper's mitigation)",
        predictors=RETRIEVAL,
        defaults={"synthetic_ratio": 0.1},
        sources={
            **{k: PAPER for k in ("epochs", "batch_size", "optimizer", "lr", "lr_halve_every_epochs")},
            "synthetic_ratio": "ODmAP paper Sec. 4: |D'|/|D| of about 0.1 is enough",
            "synthetic_fill": "ODmAP paper Sec. 4: inpainting fills best (blur, mean, zero compared)",
            "synthetic_captions": "ODmAP paper Sec. 3.3: noun-phrase removal is the default and best",
        },
        train=True,
        synthetic=True,
        method="CLIP {model} {pretrained} + synthetic pairs",
    ),
)

# Training from random initialisation: the mini world's small models (the ODmAP experiment's arms
# 1 and 4). Settings chosen for two CPU cores; why, in baselines/README.md.
MINI = "vlbench: chosen for the mini world on a CPU (baselines/README.md, The ODmAP result in miniature)"
RECIPES = (
    *RECIPES,
    Recipe(
        name="clip-scratch",
        description="contrastive training of a small open_clip model from random initialisation (mini world)",
        predictors=RETRIEVAL,
        defaults={"model": "mini-vit-p8", "pretrained": "none", "steps": 1000, "batch_size": 128, "optimizer": "adamw",
                  "lr": 1e-3, "lr_schedule": "cosine", "warmup_steps": 50, "weight_decay": 0.1, "workers": 0,
                  "cache_images": True},
        sources={k: MINI for k in ("model", "steps", "batch_size", "optimizer", "lr", "lr_schedule", "warmup_steps",
                                   "weight_decay")},
        train=True,
        method="CLIP {model} trained from scratch ({mini_train} train)",
    ),
)

_EXTRA: list[Recipe] = []


def register(recipe: Recipe) -> None:
    """Add a recipe defined elsewhere in the baselines package (e.g. caption or grounding)."""
    if any(r.name == recipe.name for r in (*RECIPES, *_EXTRA)):
        raise RuntimeError(f"recipe {recipe.name} registered twice")
    _EXTRA.append(recipe)


def all_recipes() -> tuple[Recipe, ...]:
    importlib.import_module("vlbench.baselines.recipes")  # modules that call register()
    return (*RECIPES, *_EXTRA)


def get(name: str) -> Recipe:
    for r in all_recipes():
        if r.name == name:
            return r
    known = ", ".join(r.name for r in all_recipes())
    raise UsageError(f"unknown recipe {name!r}; known recipes: {known} (vlbench baseline list)")
