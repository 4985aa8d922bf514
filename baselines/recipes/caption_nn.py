"""`caption-nn`: nearest-neighbour captioning with open_clip, optionally with consensus re-ranking.

Default: each test image gets the train caption whose text embedding is most similar to the
image's embedding. With `--set extra.consensus=K` (Devlin et al. 2015): the captions of the K
train images nearest to the test image (image-image similarity) form a pool, and the caption with
the highest mean CIDEr-D to the rest of the pool wins (`vlbench.baselines.consensus`).
With `--coco-results FILE` (`extra.coco_results`) the same captions are also written as the COCO
results list that pycocoevalcap's `COCO.loadRes` reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlbench.atomic_files import atomic_write_json
from vlbench.errors import UsageError
from vlbench.ground_truth import load_ground_truth

from ..consensus import DocumentFrequency, consensus_index, tokenize
from ..data import _require_files
from ..provenance import weights_label
from ..recipe import Recipe, RunContext
from ..retrieve import embed_images, embed_texts, topk


@dataclass(frozen=True)
class CaptionPool:
    """The train captions a captioner may return, with the train image each belongs to."""

    captions: list[str]
    owner: list[int]  # index into image_paths
    image_paths: list[Path]


def caption_pool(ctx: RunContext) -> CaptionPool:
    splits = set(ctx.config.train_split)
    captions: list[str] = []
    owner: list[int] = []
    paths: list[Path] = []
    for img in ctx.source.karpathy:
        if img.split not in splits or not img.captions:
            continue
        for cap in img.captions:
            captions.append(cap.raw)
            owner.append(len(paths))
        paths.append(ctx.source.image_path(img.id))
    if not captions:
        found = sorted({img.split for img in ctx.source.karpathy})
        raise UsageError(f"the train caption pool is empty: the Karpathy file has no captions in split(s) "
                         f"{sorted(splits)} (it has {found}); set train_split")
    return CaptionPool(captions, owner, paths)


def consensus_k(ctx: RunContext) -> int:
    k = ctx.config.extra.get("consensus", 0)
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise UsageError(f"setting extra.consensus={k!r}: expected a whole number of neighbours (0 = off)")
    return k


def predict(ctx: RunContext) -> list[dict[str, Any]]:
    c = ctx.config
    k = consensus_k(ctx)
    coco_results = str(ctx.config.extra.get("coco_results", "") or "")  # checked by run.check_outputs
    refs, _ = load_ground_truth(ctx.benchmark, ctx.data_dir)
    known = {img.id for img in ctx.source.karpathy}
    unknown = [i for i in refs.ids if str(i) not in known]
    if unknown:
        raise UsageError(f"the Karpathy file does not match {ctx.benchmark.id}'s ground truth: {len(unknown)} "
                         f"test images missing from it, e.g. {unknown[0]}")
    test_paths = [ctx.source.image_path(str(i)) for i in refs.ids]
    _require_files(test_paths, "test images", "image_root")
    pool = caption_pool(ctx)
    model = ctx.loaded.model
    images = embed_images(model, ctx.loaded.preprocess, test_paths, device=ctx.device, precision=c.precision,
                          batch_size=c.embed_batch_size, workers=c.workers, progress=ctx.progress)
    if k == 0:
        texts = embed_texts(model, ctx.loaded.tokenizer, pool.captions, device=ctx.device, precision=c.precision,
                            batch_size=c.embed_batch_size, progress=ctx.progress)
        best = topk(images, texts, 1, c.chunk_size)[:, 0].tolist()
        chosen = [pool.captions[j] for j in best]
        ctx.notes["caption_nn"] = {"mode": "nearest caption (image-text similarity)", "pool_captions": len(pool.captions)}
    else:
        _require_files(pool.image_paths, "train images", "image_root")
        train_images = embed_images(model, ctx.loaded.preprocess, pool.image_paths, device=ctx.device,
                                    precision=c.precision, batch_size=c.embed_batch_size, workers=c.workers, progress=ctx.progress)
        neighbours = topk(images, train_images, k, c.chunk_size).tolist()
        tokens = tokenize(pool.captions)
        by_image: list[list[int]] = [[] for _ in pool.image_paths]
        for j, owner in enumerate(pool.owner):
            by_image[owner].append(j)
        df = DocumentFrequency.of([[tokens[j] for j in caps] for caps in by_image])
        chosen = []
        for row in neighbours:
            candidates = [j for img in row for j in by_image[img]]
            chosen.append(pool.captions[candidates[consensus_index([tokens[j] for j in candidates], df)]])
        ctx.notes["method"] = f"NN caption, consensus of {k} (Devlin et al.) {c.model} {weights_label(c.pretrained)}"
        ctx.notes["caption_nn"] = {
            "mode": f"consensus re-ranking over the captions of the {k} nearest train images (Devlin et al. 2015)",
            "pool_captions": len(pool.captions),
            "cider_d_document_frequency": f"train captions, one document per train image (N = {df.n_documents})",
        }
    predictions = [{"image_id": iid, "caption": cap} for iid, cap in zip(refs.ids, chosen, strict=True)]
    if coco_results:
        atomic_write_json(Path(coco_results), predictions, indent=None)
    return predictions


RECIPES = (Recipe(
    name="caption-nn",
    description="nearest-neighbour captioning: the train caption nearest to the image embedding "
                "(extra.consensus=K: Devlin et al. 2015 consensus re-ranking by CIDEr-D)",
    predictors={"captioning": "vlbench.baselines.recipes.caption_nn:predict"},
    sources={"extra.consensus": "Devlin et al. 2015, 'Exploring Nearest Neighbor Approaches for Image Captioning'"},
    method="NN caption {model} {pretrained}",
),)
