"""Pixel filling of the removed regions: diffusers inpainting (default) or blur, mean, zero fills.

Run after `vlbench data prepare` (the manifest lists each query's source image and boxes):

    python -m vlbench.tasks.decorrelated.fill MANIFEST --source COCO_DIR --out DIR [--method inpaint]
        [--model MODEL_ID] [--device cuda|cpu] [--batch-size 8] [--steps 25] [--seed 0]

It is resumable (queries whose output file exists are skipped), batched, and shows a progress
bar on a terminal (`vlbench.progress`). torch and diffusers are imported only for `inpaint`, so scoring never needs them.

The paper inpaints with Yu et al. 2018 (contextual attention, not packaged anywhere we may
install from); vlbench uses a diffusers inpainting pipeline instead, with an empty prompt, and
pastes generated pixels only inside the mask so everything outside it is the original image.
The blur, mean and zero fills are the paper's ablation (Table 3).
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageFilter

from vlbench.atomic_files import atomic_write_bytes
from vlbench.backports import strict_zip
from vlbench.errors import UsageError
from vlbench.jsonio import read_trusted_json
from vlbench.progress import bar
from vlbench.tasks.decorrelated.removal import box_mask

METHODS = ("inpaint", "blur", "mean", "zero")
DEFAULT_MODEL = "stable-diffusion-v1-5/stable-diffusion-inpainting"
BLUR_RADIUS = 20.0


def removal_mask(boxes: Sequence[Sequence[float]], size: tuple[int, int]) -> Image.Image:
    """'L' mask, 255 where pixels are removed (the same pixel rule as the tau computations)."""
    width, height = size
    mask = box_mask([tuple(b) for b in boxes], width, height)  # type: ignore[misc]
    return Image.fromarray(mask.astype(np.uint8) * 255)  # (h, w) uint8: mode L


def simple_fill(image: Image.Image, mask: Image.Image, method: str) -> Image.Image:
    """Blur: the image blurred with a Gaussian of radius BLUR_RADIUS; mean: the image's own
    per-channel mean colour; zero: black. Each replaces the masked pixels only."""
    image = image.convert("RGB")
    if method == "blur":
        filler = image.filter(ImageFilter.GaussianBlur(BLUR_RADIUS))
    elif method == "mean":
        colour = tuple(int(round(c)) for c in np.asarray(image, dtype=np.float64).reshape(-1, 3).mean(axis=0))
        filler = Image.new("RGB", image.size, colour)
    elif method == "zero":
        filler = Image.new("RGB", image.size, (0, 0, 0))
    else:
        raise ValueError(f"unknown fill method {method!r}; one of {', '.join(METHODS)}")
    return Image.composite(filler, image, mask)


def load_inpainting_pipeline(model_id: str, device: str | None = None) -> Any:
    import torch
    from diffusers import AutoPipelineForInpainting

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.float16 if device.startswith("cuda") else torch.float32
    pipe = AutoPipelineForInpainting.from_pretrained(model_id, torch_dtype=dtype)
    pipe.set_progress_bar_config(disable=True)
    return pipe.to(device)


def inpaint_batch(
    pipe: Any,
    images: Sequence[Image.Image],
    masks: Sequence[Image.Image],
    *,
    resolution: int = 512,
    steps: int = 25,
    seeds: Sequence[int] | None = None,
) -> list[Image.Image]:
    """Inpaint at `resolution` x `resolution`, resize back, keep original pixels outside the mask.

    One generator per image (seeded by `seeds`), so an image's noise does not depend on which
    batch it falls in: a resumed run fills images as an uninterrupted one would.
    """
    import torch

    work = [im.convert("RGB").resize((resolution, resolution), Image.BICUBIC) for im in images]
    work_masks = [m.resize((resolution, resolution), Image.NEAREST) for m in masks]
    seeds = list(range(len(work))) if seeds is None else list(seeds)
    generator = [torch.Generator(device="cpu").manual_seed(s) for s in seeds]
    out = pipe(
        prompt=[""] * len(work),
        image=work,
        mask_image=work_masks,
        height=resolution,
        width=resolution,
        num_inference_steps=steps,
        generator=generator,
    ).images
    return [
        Image.composite(gen.resize(im.size, Image.BICUBIC), im.convert("RGB"), m)
        for gen, im, m in strict_zip(out, images, masks)
    ]


def _png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def fill_queries(
    manifest: Path,
    source: Path,
    out: Path,
    method: str = "inpaint",
    *,
    pipe: Any = None,
    model_id: str = DEFAULT_MODEL,
    device: str | None = None,
    batch_size: int = 8,
    resolution: int = 512,
    steps: int = 25,
    seed: int = 0,
    progress: bool = True,
) -> list[Path]:
    """Write `<out>/<query file_name>` for every query not done yet; returns the files written."""
    if method not in METHODS:
        raise ValueError(f"unknown fill method {method!r}; one of {', '.join(METHODS)}")
    queries = read_trusted_json(manifest)["queries"]
    todo = [(i, q) for i, q in enumerate(queries) if not (out / q["file_name"]).exists()]
    if method == "inpaint" and todo and pipe is None:
        pipe = load_inpainting_pipeline(model_id, device)
    written: list[Path] = []
    with bar(len(todo), f"fill ({method})", unit="img", show=progress) as shown:
        for start in range(0, len(todo), batch_size):
            numbered = todo[start : start + batch_size]
            batch = [q for _, q in numbered]
            images = [Image.open(source / q["source_file"]).convert("RGB") for q in batch]
            masks = [removal_mask(q["removed_boxes"], im.size) for q, im in strict_zip(batch, images)]
            if method == "inpaint":
                seeds = [seed + i for i, _ in numbered]
                filled = inpaint_batch(pipe, images, masks, resolution=resolution, steps=steps, seeds=seeds)
            else:
                filled = [simple_fill(im, m, method) for im, m in strict_zip(images, masks)]
            for q, im in strict_zip(batch, filled):
                target = out / q["file_name"]
                atomic_write_bytes(target, _png(im))  # atomic: an interrupted run never leaves half a file
                written.append(target)
            shown.update(len(batch))
    return written


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m vlbench.tasks.decorrelated.fill", description=__doc__.split("\n")[0])
    p.add_argument("manifest", type=Path)
    p.add_argument("--source", type=Path, required=True, help="folder the queries' source_file paths are relative to")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--method", choices=METHODS, default="inpaint")
    p.add_argument("--model", default=DEFAULT_MODEL, help="diffusers inpainting model id or local folder")
    p.add_argument("--device", default=None, help="cuda or cpu (default: cuda when available)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--resolution", type=int, default=512)
    p.add_argument("--steps", type=int, default=25)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    from vlbench.output_rule import check_folder_to_fill

    try:  # the output rule: the folder is made only inside an existing one; existing images are kept
        check_folder_to_fill(a.out, "--out")
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    written = fill_queries(
        a.manifest, a.source, a.out, a.method, model_id=a.model, device=a.device,
        batch_size=a.batch_size, resolution=a.resolution, steps=a.steps, seed=a.seed,
    )  # fmt: skip
    print(f"wrote {len(written)} images to {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
