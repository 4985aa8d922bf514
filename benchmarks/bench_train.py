"""Training-step and inpainting-fill throughput of the baselines (issue 10's GPU goals).

1. A contrastive training step of open_clip ViT-B/32 at batch 256 in bf16 autocast on synthetic
   inputs (224 px images, 77-token texts), the step `baselines/train.py` runs: autocast forward,
   open_clip's ClipLoss, backward, Adam, the logit-scale clamp. Synthetic tensors on the device, so
   the figure is the model's, not JPEG decoding's. Reports pairs/s, MFU and peak GPU memory.
   MFU = pairs/s x 44.34 GFLOP (3 x the 14.78 GFLOP forward of a B/32 pair, open_clip's profiler)
   / the GPU's dense bf16 peak: on an H100 SXM or H200 (989.4 TFLOP/s) that is pairs/s / 22,314.
   Goals on one H100: at least 3,300 pairs/s (NVIDIA NeMo's CLIP B/32 figure per H100), stretch
   4,500 (about 20% MFU). Sources: ../shared/reference/gpu_anchors.md.
2. The decorrelated task's inpainting fill (`tasks/decorrelated/fill.py: inpaint_batch`, the fill
   `baselines/synthetic/build.py` uses for D') at 512 px: images/s in the default mode (25 steps) and in a
   fast mode (fewer steps, larger batches). Goals: at least 5 images/s, fast mode 20.

    python benchmarks/bench_train.py                       # GPU: the figures the goals are about
    python benchmarks/bench_train.py --compile             # the same step under torch.compile
    OMP_NUM_THREADS=1 python benchmarks/bench_train.py --device cpu --batch 8 --steps 2 \\
        --inpaint-images 2 --inpaint-batch 2               # CPU smoke run (labelled CPU figures)

The inpainting weights (stable-diffusion-v1-5/stable-diffusion-inpainting by default) come from the
Hugging Face cache or a local folder (`--inpaint-model`); nothing is downloaded unless
`--allow-download`. Without them the script says so, and (unless `--no-tiny-inpaint`) times a tiny
randomly initialised pipeline of the same classes at the same resolution, labelled NOT
REPRESENTATIVE: it exercises the code path, not the real model's cost.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# ViT-B/32 at 224 px with 77 text tokens: forward FLOPs per pair (open_clip docs/model_profile.csv)
B32_FORWARD_FLOPS = 14.78e9
TRAIN_FLOPS_PER_PAIR = 3 * B32_FORWARD_FLOPS  # forward + backward (2x forward)
# Dense bf16 tensor peaks in TFLOP/s, by a piece of the name torch reports (first match wins).
PEAKS = (("H200", 989.4), ("H100 PCIe", 756.0), ("H100", 989.4), ("A100", 312.0))
GOALS = {"pairs_per_s": 3300, "pairs_per_s_stretch": 4500, "inpaint_images_per_s": 5, "inpaint_fast_images_per_s": 20}


def peak_tflops(gpu_name: str) -> float | None:
    for key, peak in PEAKS:
        if key.lower() in gpu_name.lower():
            return peak
    return None


def device_label(device: str) -> str:
    import torch

    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    return f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def bench_step(args: argparse.Namespace) -> dict[str, Any]:
    import math

    import torch
    from open_clip.loss import ClipLoss

    from vlbench.baselines.models import load_model

    torch.manual_seed(0)
    loaded = load_model(args.model, "none", args.device)
    model = loaded.model
    model.train()
    if args.grad_checkpointing:
        model.set_grad_checkpointing(True)
    step_model = torch.compile(model) if args.compile else model
    size = model.visual.image_size
    size = size[0] if isinstance(size, (tuple, list)) else size
    context = model.context_length
    images = torch.randn(args.batch, 3, size, size, device=args.device)
    texts = torch.randint(1, model.vocab_size - 1, (args.batch, context), device=args.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-6, fused=args.device.startswith("cuda"))
    loss_fn = ClipLoss()
    use_bf16 = args.precision == "bf16"
    device_type = "cuda" if args.device.startswith("cuda") else "cpu"

    def step() -> float:
        with torch.autocast(device_type=device_type, dtype=torch.bfloat16, enabled=use_bf16):
            out = step_model(images, texts)
            loss = loss_fn(out["image_features"], out["text_features"], out["logit_scale"])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            model.logit_scale.clamp_(0, math.log(100))
        return float(loss.detach()) if args.device == "cpu" else 0.0

    if args.device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    for _ in range(args.warmup):  # compilation, cuDNN/cuBLAS autotuning, allocator warm-up
        step()
    _sync(args.device)
    t0 = time.perf_counter()
    for _ in range(args.steps):
        step()
    _sync(args.device)
    elapsed = time.perf_counter() - t0
    pairs_per_s = args.batch * args.steps / elapsed
    out: dict[str, Any] = {
        "model": args.model, "image_size": size, "text_tokens": context, "batch": args.batch, "steps": args.steps,
        "warmup_steps": args.warmup, "precision": args.precision, "compile": args.compile,
        "grad_checkpointing": args.grad_checkpointing, "seconds": round(elapsed, 3),
        "pairs_per_s": round(pairs_per_s, 1), "step_ms": round(1000 * elapsed / args.steps, 1),
    }
    name = device_label(args.device)
    peak = peak_tflops(name) if args.device.startswith("cuda") else None
    if args.device.startswith("cuda"):
        out["peak_gpu_memory_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    else:
        out["peak_process_rss_gib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)
    if peak is not None and args.model == "ViT-B-32" and size == 224 and context == 77:
        out["peak_bf16_tflops"] = peak
        out["mfu"] = round(pairs_per_s * TRAIN_FLOPS_PER_PAIR / (peak * 1e12), 4)
    return out


def tiny_inpainting_pipeline(device: str) -> Any:
    """A randomly initialised StableDiffusionInpaintPipeline with small blocks: the same classes and
    code path as the real one at the same resolution, a tiny fraction of its cost. Its timings say
    nothing about the real model."""
    import torch
    from diffusers import (
        AutoencoderKL,
        DDIMScheduler,
        StableDiffusionInpaintPipeline,
        UNet2DConditionModel,
    )
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

    torch.manual_seed(0)
    unet = UNet2DConditionModel(
        block_out_channels=(32, 64), layers_per_block=1, sample_size=64, in_channels=9, out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=32, attention_head_dim=8,
    )
    # four blocks: the real VAE's 8x downsampling, so the UNet runs on 64 x 64 latents at 512 px as the real one does
    vae = AutoencoderKL(block_out_channels=(16, 16, 32, 32), in_channels=3, out_channels=3, latent_channels=4,
                        norm_num_groups=8, down_block_types=("DownEncoderBlock2D",) * 4,
                        up_block_types=("UpDecoderBlock2D",) * 4)
    text = CLIPTextModel(CLIPTextConfig(bos_token_id=0, eos_token_id=1, pad_token_id=1, hidden_size=32,
                                        intermediate_size=37, num_attention_heads=4, num_hidden_layers=2,
                                        vocab_size=100, max_position_embeddings=77))
    # a tokenizer needs vocabulary files: a minimal one (the benchmark's prompts are empty)
    folder = Path(tempfile.mkdtemp(prefix="vlbench-tiny-tokenizer-"))
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1, **{f"{c}</w>": i + 2 for i, c in enumerate("abcdefghij")}}
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    tokenizer = CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"), model_max_length=77)
    pipe = StableDiffusionInpaintPipeline(vae=vae, text_encoder=text, tokenizer=tokenizer, unet=unet,
                                          scheduler=DDIMScheduler(steps_offset=1), safety_checker=None, feature_extractor=None,
                                          requires_safety_checker=False)
    pipe.set_progress_bar_config(disable=True)
    return pipe.to(device)


def bench_inpaint(args: argparse.Namespace) -> dict[str, Any]:
    from PIL import Image

    from vlbench.tasks.decorrelated.fill import (
        DEFAULT_MODEL,
        inpaint_batch,
        load_inpainting_pipeline,
        removal_mask,
    )

    model_id = args.inpaint_model or DEFAULT_MODEL
    out: dict[str, Any] = {"resolution": 512, "model": model_id}
    try:
        pipe = load_inpainting_pipeline(model_id, args.device)
        out["representative"] = True
    except Exception as exc:  # offline, not cached, or a partial cache: all mean "not here"
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        print(f"inpainting: the real weights ({model_id}) are not available on this machine ({type(exc).__name__}: "
              f"{reason}). Put them in the Hugging Face cache (`huggingface-cli download {model_id}` on a machine "
              "with network), pass --inpaint-model /local/folder, or run with --allow-download.", file=sys.stderr)
        out["representative"] = False
        out["missing_weights"] = model_id
        if args.no_tiny_inpaint:
            return out
        print("inpainting: timing a TINY RANDOM pipeline instead; its figures are NOT REPRESENTATIVE of the real "
              "model (same code path, a tiny fraction of the compute)", file=sys.stderr)
        pipe = tiny_inpainting_pipeline(args.device)
        out["model"] = "tiny random StableDiffusionInpaintPipeline"
    import numpy as np

    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)) for _ in range(args.inpaint_images)]
    masks = [removal_mask([[100 + 10 * i, 80, 300 + 10 * i, 260]], im.size) for i, im in enumerate(images)]
    for mode, steps, batch in (("default", args.inpaint_steps, args.inpaint_batch),
                               ("fast", args.fast_steps, args.fast_batch)):
        inpaint_batch(pipe, images[:1], masks[:1], resolution=512, steps=min(steps, 2), seeds=[0])  # warm-up
        _sync(args.device)
        t0 = time.perf_counter()
        for lo in range(0, len(images), batch):
            inpaint_batch(pipe, images[lo : lo + batch], masks[lo : lo + batch], resolution=512, steps=steps,
                          seeds=list(range(lo, lo + len(images[lo : lo + batch]))))
        _sync(args.device)
        elapsed = time.perf_counter() - t0
        out[mode] = {"steps": steps, "batch": batch, "images": len(images), "seconds": round(elapsed, 3),
                     "images_per_s": round(len(images) / elapsed, 3)}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default=None, help="cuda, cuda:N or cpu (default: cuda when available)")
    p.add_argument("--model", default="ViT-B-32", help="open_clip architecture (random weights; MFU only for ViT-B-32)")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--steps", type=int, default=20, help="timed steps")
    p.add_argument("--warmup", type=int, default=None, help="untimed steps first (default 3, 1 on CPU)")
    p.add_argument("--precision", choices=("bf16", "fp32"), default="bf16")
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    p.add_argument("--grad-checkpointing", action="store_true")
    p.add_argument("--no-train", action="store_true", help="skip the training step")
    p.add_argument("--no-inpaint", action="store_true", help="skip the inpainting fill")
    p.add_argument("--inpaint-model", help="diffusers inpainting model id or local folder (default: the fill's)")
    p.add_argument("--inpaint-images", type=int, default=64)
    p.add_argument("--inpaint-steps", type=int, default=25, help="default mode: the fill's default steps")
    p.add_argument("--inpaint-batch", type=int, default=8, help="default mode: the fill's default batch")
    p.add_argument("--fast-steps", type=int, default=8)
    p.add_argument("--fast-batch", type=int, default=16)
    p.add_argument("--allow-download", action="store_true", help="let diffusers download missing weights")
    p.add_argument("--no-tiny-inpaint", action="store_true",
                   help="without the real weights, report them missing and time nothing")
    p.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = p.parse_args(argv)
    if not args.allow_download:
        # never wait on a network this script was not allowed to use (read when the hub client is
        # first imported, so before torch / open_clip / diffusers)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import torch

    args.device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        p.error("--device cuda: torch sees no CUDA device; use --device cpu")
    if min(args.batch, args.steps, args.inpaint_images, args.inpaint_steps, args.inpaint_batch, args.fast_steps,
           args.fast_batch) < 1:
        p.error("batch sizes, step counts and image counts must be at least 1")
    if args.warmup is None:
        args.warmup = 3 if args.device.startswith("cuda") else 1
    cpu = not args.device.startswith("cuda")
    name = device_label(args.device)
    label = "CPU figures (not the GPU goals)" if cpu else "GPU"
    print(f"device: {name}  [{label}]   torch {torch.__version__}")
    report: dict[str, Any] = {"device": name, "cpu": cpu, "torch": torch.__version__, "goals": GOALS}
    if not args.no_train:
        r = bench_step(args)
        report["train_step"] = r
        print(f"\ntraining step: {r['model']} {r['image_size']} px, {r['text_tokens']} tokens, batch {r['batch']}, "
              f"{r['precision']}{', compiled' if r['compile'] else ''}{', grad checkpointing' if r['grad_checkpointing'] else ''}")
        print(f"  {'CPU ' if cpu else ''}pairs/s       {r['pairs_per_s']:,.1f}   ({r['step_ms']:,.1f} ms/step over {r['steps']} steps)")
        if "mfu" in r:
            print(f"  MFU           {100 * r['mfu']:.1f}%   (pairs/s x 44.34 GFLOP / {r['peak_bf16_tflops']} TFLOP/s dense bf16 "
                  f"peak of {name}; = pairs/s / {r['peak_bf16_tflops'] * 1e12 / TRAIN_FLOPS_PER_PAIR:,.0f})")
        elif cpu:
            print("  MFU           n/a on a CPU (the goal is a GPU figure)")
        else:
            print(f"  MFU           n/a: no dense bf16 peak known for {name} or not ViT-B-32 at 224 px / 77 tokens")
        if "peak_gpu_memory_gib" in r:
            print(f"  peak GPU mem  {r['peak_gpu_memory_gib']} GiB (torch.cuda.max_memory_allocated)")
        else:
            print(f"  peak RSS      {r['peak_process_rss_gib']} GiB (whole process; no GPU)")
        if not cpu:
            print(f"  goal          >= {GOALS['pairs_per_s']:,} pairs/s on one H100 (stretch {GOALS['pairs_per_s_stretch']:,})")
    if not args.no_inpaint:
        r = bench_inpaint(args)
        report["inpaint"] = r
        tag = "" if r.get("representative") else "  [NOT REPRESENTATIVE: tiny random pipeline]"
        print(f"\ninpainting fill at 512 px: {r['model']}{tag}")
        for mode in ("default", "fast"):
            if mode in r:
                m = r[mode]
                print(f"  {mode:8s} {'CPU ' if cpu else ''}images/s {m['images_per_s']:,.2f}   ({m['steps']} steps, batch {m['batch']}, "
                      f"{m['images']} images, {m['seconds']} s)")
        if "default" not in r:
            print("  not measured: real weights missing (see above)")
        if not cpu:
            print(f"  goal     >= {GOALS['inpaint_images_per_s']} images/s, fast mode >= {GOALS['inpaint_fast_images_per_s']}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
