"""`grounding-clip-regions`: phrase grounding by ranking candidate regions with open_clip.

Candidates per image: a multi-scale sliding window (`extra.scales`, `extra.stride`) plus, with
`extra.proposals=FILE`, the user's boxes (`vlbench.baselines.regions.load_proposals`). Each
region is rendered as a crop, or (`extra.masked=true`) as the whole image with the outside of the
box painted the CLIP mean colour, and encoded once; every phrase of the image is scored against
those embeddings (cosine similarity), greedy NMS at `extra.nms_iou` removes near-duplicates and
the best `topk` (10) boxes are written, best first, with their similarities as scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from vlbench.errors import UsageError
from vlbench.ground_truth import load_ground_truth
from vlbench.progress import bar

from ..data import _require_files
from ..recipe import Recipe, RunContext
from ..regions import load_proposals, nms_topk, render_region, sliding_windows
from ..retrieve import embed_texts
from ..runtime import autocast

# open_clip's image mean (OPENAI_DATASET_MEAN) in 0-255: masked pixels normalise to about zero
MASK_FILL = (122, 116, 104)


@dataclass(frozen=True)
class RegionSettings:
    scales: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)
    stride: float = 0.5  # fraction of the window's own size
    nms_iou: float = 0.5
    masked: bool = False
    proposals: str = ""

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any]) -> RegionSettings:
        known = {"scales", "stride", "nms_iou", "masked", "proposals"}
        problems = [f"unknown setting extra.{k} (known: {', '.join(sorted(known))})" for k in extra if k not in known]
        scales = cls.scales
        if "scales" in extra:
            try:
                scales = tuple(float(s) for s in str(extra["scales"]).split(",") if s.strip())
            except ValueError:
                problems.append(f"extra.scales={extra['scales']!r}: expected comma-separated numbers such as 0.25,0.5,1")
        values: dict[str, Any] = {}
        for key, kind in (("stride", float), ("nms_iou", float)):
            if key in extra:
                v = extra[key]
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    problems.append(f"extra.{key}={v!r}: expected a number")
                else:
                    values[key] = kind(v)
        if "masked" in extra:
            if not isinstance(extra["masked"], bool):
                problems.append(f"extra.masked={extra['masked']!r}: expected true or false")
            else:
                values["masked"] = extra["masked"]
        if "proposals" in extra:
            values["proposals"] = str(extra["proposals"])
        out = cls(scales=scales, **values)
        if not out.scales or any(not 0 < s <= 1 for s in out.scales):
            problems.append(f"extra.scales must be fractions of the image side in (0, 1], got {extra.get('scales')!r}")
        if not 0 < out.stride <= 1:
            problems.append(f"extra.stride must be in (0, 1] (a fraction of the window size), got {out.stride}")
        if not 0 < out.nms_iou <= 1:
            problems.append(f"extra.nms_iou must be in (0, 1], got {out.nms_iou}")
        if problems:
            raise UsageError("invalid grounding-clip-regions settings: " + "; ".join(problems))
        return out


def candidate_boxes(width: float, height: float, settings: RegionSettings, proposals: np.ndarray | None) -> np.ndarray:
    boxes = sliding_windows(width, height, settings.scales, settings.stride)
    if proposals is not None and len(proposals):
        boxes = np.unique(np.concatenate([boxes, proposals]), axis=0)
    return boxes


class RegionCrops:
    """Dataset of images -> (stacked preprocessed regions); a DataLoader spreads the rendering
    over `workers` processes while the device encodes."""

    def __init__(self, paths: list[Any], boxes: list[np.ndarray], preprocess: Any, masked: bool) -> None:
        self.paths, self.boxes, self.preprocess, self.masked = paths, boxes, preprocess, masked

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int) -> Any:
        import torch
        from PIL import Image

        with Image.open(self.paths[i]) as im:
            rgb = im.convert("RGB")
        return torch.stack([self.preprocess(render_region(rgb, b, self.masked, MASK_FILL)) for b in self.boxes[i]])


def encode_regions(model: Any, dataset: RegionCrops, *, device: str, precision: str, batch_size: int, workers: int,
                   progress: bool) -> list[Any]:
    """Per image, the L2-normalised embedding of each of its regions: every region once, in
    device batches of up to `batch_size` regions that may span images."""
    import torch
    from torch.utils.data import DataLoader

    loader = DataLoader(dataset, batch_size=None, num_workers=workers)
    out: list[Any] = []
    pending: list[Any] = []  # (image index, regions) not yet encoded

    def flush(shown: Any) -> None:
        if not pending:
            return
        batch = torch.cat(pending).to(device, non_blocking=True)
        sizes = [len(p) for p in pending]
        pending.clear()
        with torch.no_grad(), autocast(precision, device):
            emb = torch.cat([model.encode_image(batch[lo : lo + batch_size], normalize=True).float()
                             for lo in range(0, len(batch), batch_size)])
        out.extend(emb.split(sizes))
        shown.update(len(batch))

    with bar(sum(len(b) for b in dataset.boxes), "regions", "item", show=progress) as shown:
        queued = 0
        for regions in loader:
            pending.append(regions)
            queued += len(regions)
            if queued >= batch_size:
                flush(shown)
                queued = 0
        flush(shown)
    return out


def predict(ctx: RunContext) -> dict[str, Any]:
    settings = RegionSettings.from_extra(ctx.config.extra)
    gt, _ = load_ground_truth(ctx.benchmark, ctx.data_dir)
    image_rows = sorted(set(gt.p_image.tolist()))
    image_ids = [gt.image_ids[i] for i in image_rows]
    sizes = {iid: (float(gt.width[i]), float(gt.height[i])) for i, iid in enumerate(gt.image_ids)}
    known = set(ctx.source.relative_paths)
    absent = [i for i in image_ids if i not in known]
    if absent:
        raise UsageError(f"the Karpathy file does not list {len(absent)} of {ctx.benchmark.id}'s images, e.g. {absent[0]}")
    paths = [ctx.source.image_path(i) for i in image_ids]
    _require_files(paths, "images", "image_root")
    proposals = load_proposals(settings.proposals, sizes) if settings.proposals else {}
    boxes = [candidate_boxes(*sizes[i], settings, proposals.get(i)) for i in image_ids]

    c = ctx.config
    texts = sorted(set(gt.p_text))
    text_index = {t: j for j, t in enumerate(texts)}
    phrase_emb = embed_texts(ctx.loaded.model, ctx.loaded.tokenizer, texts, device=ctx.device, precision=c.precision,
                             batch_size=c.embed_batch_size, progress=ctx.progress)
    region_emb = encode_regions(ctx.loaded.model, RegionCrops(paths, boxes, ctx.loaded.preprocess, settings.masked),
                                device=ctx.device, precision=c.precision, batch_size=c.embed_batch_size,
                                workers=c.workers, progress=ctx.progress)
    phrases_of: dict[int, list[int]] = {}
    for row, img in enumerate(gt.p_image.tolist()):
        phrases_of.setdefault(img, []).append(row)
    predictions: dict[str, Any] = {}
    for img, image_id, regions, cand in zip(image_rows, image_ids, region_emb, boxes, strict=True):
        rows = phrases_of[img]
        queries = phrase_emb[[text_index[gt.p_text[r]] for r in rows]]
        scores = (queries @ regions.T).double().cpu().numpy()
        for r, s in zip(rows, scores, strict=True):
            keep = nms_topk(cand, s, settings.nms_iou, c.topk)
            sentence = predictions.setdefault(image_id, {}).setdefault(str(int(gt.p_sentence[r])), {})
            sentence[str(int(gt.p_first_word[r]))] = {
                "boxes": [[round(float(v), 2) for v in cand[k]] for k in keep],
                "scores": [round(float(s[k]), 6) for k in keep],
            }
    ctx.notes["grounding_regions"] = {
        "regions": int(sum(len(b) for b in boxes)), "images": len(image_ids), "phrases": int(gt.n_phrases),
        "scales": list(settings.scales), "stride": settings.stride, "nms_iou": settings.nms_iou,
        "masked": settings.masked, "proposals": settings.proposals or None,
    }
    return predictions


RECIPES = (Recipe(
    name="grounding-clip-regions",
    description="phrase grounding: sliding-window (+ proposal) regions ranked by open_clip similarity to the phrase, NMS, top 10",
    predictors={"grounding": "vlbench.baselines.recipes.grounding_regions:predict"},
    sources={"extra.scales": "multi-scale sliding window (vlbench default 0.25,0.5,0.75,1 of each side)",
             "extra.nms_iou": "greedy NMS at IoU 0.5, the usual detection setting"},
    method="CLIP regions {model} {pretrained}",
),)
