"""Predictors for the two retrieval tasks: ranked id lists from embeddings."""

from __future__ import annotations

from typing import Any

from .data import decorrelated_inputs, retrieval_inputs
from .recipe import RunContext
from .retrieve import embed_images, embed_texts, topk


def _embed(ctx: RunContext, paths: list[Any], texts: list[str]) -> tuple[Any, Any]:
    c = ctx.config
    model = ctx.loaded.model
    images = embed_images(model, ctx.loaded.preprocess, paths, device=ctx.device, precision=c.precision,
                          batch_size=c.embed_batch_size, workers=c.workers, progress=ctx.progress)
    captions = embed_texts(model, ctx.loaded.tokenizer, texts, device=ctx.device, precision=c.precision,
                           batch_size=c.embed_batch_size, progress=ctx.progress)
    return images, captions


def retrieval(ctx: RunContext) -> dict[str, Any]:
    inputs = retrieval_inputs(ctx.benchmark, ctx.source, ctx.data_dir)
    images, captions = _embed(ctx, inputs.image_paths, inputs.captions)
    k, chunk = ctx.config.topk, ctx.config.chunk_size
    i2t = topk(images, captions, k, chunk).tolist()
    t2i = topk(captions, images, k, chunk).tolist()
    return {
        "image_to_text": {iid: [inputs.caption_ids[j] for j in row] for iid, row in zip(inputs.image_ids, i2t, strict=True)},
        "text_to_image": {cid: [inputs.image_ids[j] for j in row] for cid, row in zip(inputs.caption_ids, t2i, strict=True)},
    }


def decorrelated(ctx: RunContext) -> dict[str, Any]:
    inputs = decorrelated_inputs(ctx.benchmark, ctx.source, ctx.data_dir)
    queries, gallery = _embed(ctx, inputs.query_paths, inputs.gallery)
    ranked = topk(queries, gallery, ctx.config.topk, ctx.config.chunk_size).tolist()
    return {"image_to_text": {qid: [inputs.gallery_ids[j] for j in row] for qid, row in zip(inputs.query_ids, ranked, strict=True)}}
