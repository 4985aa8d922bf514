"""The recipe catalogue: this package and each module in it export `RECIPES`, a tuple of `Recipe`
records (`vlbench.baselines.recipe.all_recipes` collects them, this package's first, then its
modules' by name). Here: the CLIP retrieval recipes, whose predictors are `baselines/predict.py`'s."""

from __future__ import annotations

from ..recipe import Recipe

PAPER = "ODmAP paper Sec. 4 (CLIP: 10 epochs, batch 256, Adam, lr 2e-6 halved every 2 epochs)"
# Training from random initialisation: the mini world's small models (the ODmAP experiment's arms
# 1 and 4). Settings chosen for two CPU cores; why, in baselines/README.md.
MINI = "vlbench: chosen for the mini world on a CPU (baselines/README.md, The ODmAP result in miniature)"

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
