"""Building D': which images, removals and captions (`plan`), the fill (`Filler`), and the
cache.

The set is built once per parameter set into `cache_dir/dprime-<digest>/` with a manifest written
last (each image's sha256 in it), so a crash never leaves a cache that looks complete, and a
rerun with the same parameters reuses it. With several processes each rank fills its share.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlbench.atomic_files import atomic_write_bytes, atomic_write_json
from vlbench.errors import UsageError
from vlbench.hashing import sha256_bytes, sha256_file
from vlbench.jsonio import read_trusted_json
from vlbench.progress import bar
from vlbench.tasks.decorrelated.removal import TAU1, TAU2, TAU3, Removal

from ..runtime import barrier, is_distributed
from .captions import CAPTION_MODES, ClassMentions, mentions_for, prompt_caption, synthetic_caption
from .removals import ALL, Pairs, allowed_removals, rule_parts
from .sources import SourceImage

MANIFEST = "manifest.json"
FORMAT = "vlbench-synthetic-pairs"
FILLS = ("inpaint", "blur", "mean", "zero", "rerender")


@dataclass(frozen=True)
class Planned:
    source: SourceImage
    removal: Removal
    caption: str
    file_name: str


def plan(sources: Sequence[SourceImage], *, ratio: float, captions: str, seed: int, n_pairs: int | None = None,
         tau: tuple[float, float, float] = (TAU1, TAU2, TAU3), removals: str = ALL, pairs: Pairs = ()) -> list[Planned]:
    """Which images, which removal, which caption: |D'| = round(ratio * |D|) pairs (|D| = the
    train pairs, or `n_pairs`), chosen with `seed`.

    As in the paper, one pair per source image first (a first pass over the shuffled images);
    only when that falls short of the ratio (the paper's COCO D' of 45,467 pairs is about 0.08 of
    |D|) do later passes add a second, third, ... pair per image, each a different removal or a
    different caption of it. Fewer pairs come out only when every option is used up.

    `removals`: which removals an image offers (`removals.py`: `all`, the paper's;
    `keep-cooccurrence`, which needs the world's (cue, dependent) `pairs`; or `breaking:F`, drawn
    in two parts: the first 1 - F of the pairs exactly as `keep-cooccurrence` draws its first ones,
    then F from the breaking removals, with a seed of their own).
    """
    if captions not in CAPTION_MODES:
        raise UsageError(f"synthetic captions {captions!r}: one of {', '.join(CAPTION_MODES)}")
    parts = rule_parts(removals)
    if removals != ALL and not pairs:
        raise UsageError(f"synthetic removals {removals!r} need the co-occurring class pairs of the world "
                         "(known for the mini world only)")
    total = sum(len(s.captions) for s in sources) if n_pairs is None else n_pairs
    want = round(ratio * total)
    if len(parts) == 1:
        return _plan_part(sources, want, captions, tau, removals, pairs, f"dprime:{seed}")
    (keep_rule, _), (break_rule, share) = parts
    n_breaking = round(share * want)
    # the keeping part's seed is D'-null's: its pairs are the first ones D'-null draws
    return (_plan_part(sources, want - n_breaking, captions, tau, keep_rule, pairs, f"dprime:{seed}")
            + _plan_part(sources, n_breaking, captions, tau, break_rule, pairs, f"dprime-breaking:{seed}"))


def _plan_part(sources: Sequence[SourceImage], want: int, captions: str, tau: tuple[float, float, float],
               removals: str, pairs: Pairs, seed: str) -> list[Planned]:
    """`want` pairs of one removal rule, drawn as `plan` describes."""
    rng = random.Random(seed)
    order = list(sources)
    rng.shuffle(order)
    mentions = mentions_for(sources)
    out: list[Planned] = []
    # Options are drawn lazily: most sets stop within the first pass, long before all images.
    pending = [(src, _options(src, captions, tau, mentions, rng, removals, pairs)) for src in order]
    round_no = 0
    while pending and len(out) < want:
        still: list[tuple[SourceImage, Iterator[tuple[Removal, str]]]] = []
        for src, options in pending:
            if len(out) >= want:
                break
            option = next(options, None)
            if option is None:
                continue
            removal, caption = option
            suffix = f"_{round_no}" if round_no else ""
            name = f"{_safe(src.image_id)}_no_{'_'.join(_safe(c) for c in removal.removed_classes)}{suffix}.png"
            out.append(Planned(src, removal, caption, name))
            still.append((src, options))
        pending = still
        round_no += 1
    return out


def _options(src: SourceImage, captions: str, tau: tuple[float, float, float], mentions: ClassMentions,
             rng: random.Random, rule: str = ALL, pairs: Pairs = ()) -> Iterator[tuple[Removal, str]]:
    """The image's (removal, caption) pairs in a seeded random order: removals shuffled, and for
    each its usable captions shuffled (prompt mode: one prompt per removal)."""
    removals = allowed_removals(src.objects, src.width, src.height, rule, pairs, tau)
    # Runs at the first draw; every pass draws sources in the same order, so a seed fixes the set.
    order = rng.sample(range(len(removals)), len(removals))
    ks = rng.sample(range(len(src.captions)), len(src.captions))
    prompt_seed = rng.random()
    for i in order:
        removal = removals[i]
        if captions == "prompt":
            yield removal, prompt_caption(removal.present_classes, random.Random(f"{prompt_seed}:{i}"))
            continue
        seen: set[str] = set()  # two captions can shrink to the same text: one pair, not two
        for k in ks:
            caption = synthetic_caption(src, k, removal, mentions)
            if caption and caption not in seen:
                seen.add(caption)
                yield removal, caption


def shard(planned: Sequence[Planned], rank: int, world_size: int) -> list[tuple[int, Planned]]:
    """This rank's share of the set (round robin), with each item's index for its fill seed."""
    return [(k, p) for k, p in enumerate(planned) if k % world_size == rank]


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-") or "x"


def _digest(params: dict[str, Any], sources: Sequence[SourceImage]) -> str:
    listed = "".join(f"{s.image_id}\0{s.path}\0{s.width}x{s.height}\0{s.objects}\0{s.captions}\n" for s in sources)
    return sha256_bytes((json.dumps(params, sort_keys=True) + listed).encode())


def read_manifest(folder: Path) -> dict[str, Any]:
    """A built D' set's manifest (params, and per item its caption, removed and present classes)."""
    return read_trusted_json(Path(folder) / MANIFEST)


def _cached(folder: Path) -> list[tuple[Path, str, str]] | None:
    manifest = folder / MANIFEST
    if not manifest.is_file():
        return None
    # Any damage (unreadable manifest, a missing or altered image) means rebuild, never reuse.
    try:
        doc = read_trusted_json(manifest)
        items = doc["items"]
        for item in items:
            f = folder / item["file_name"]
            if not f.is_file() or sha256_file(f) != item["sha256"]:
                return None
        return [(folder / i["file_name"], i["caption"], i["group"]) for i in items]
    except (OSError, ValueError, KeyError, TypeError):
        return None


class Filler:
    """Fills removed regions; the inpainting pipeline is loaded once, on first use."""

    def __init__(self, method: str, device: str, inpaint_model: str, steps: int, resolution: int, batch_size: int):
        if method not in FILLS:
            raise UsageError(f"synthetic fill {method!r}: one of {', '.join(FILLS)}")
        self.method, self.device, self.model = method, device, inpaint_model
        self.steps, self.resolution, self.batch_size = steps, resolution, batch_size
        self.pipe: Any = None
        self.calls = 0

    def __call__(self, batch: Sequence[Planned], seeds: Sequence[int]) -> list[Any]:
        from PIL import Image

        from vlbench.tasks.decorrelated.fill import (
            inpaint_batch,
            load_inpainting_pipeline,
            removal_mask,
            simple_fill,
        )

        self.calls += 1
        if self.method == "rerender":
            return [_rerender(p) for p in batch]
        images = [Image.open(p.source.path).convert("RGB") for p in batch]
        masks = [removal_mask(p.removal.removed_boxes, im.size) for p, im in zip(batch, images, strict=True)]
        if self.method != "inpaint":
            return [simple_fill(im, m, self.method) for im, m in zip(images, masks, strict=True)]
        if self.pipe is None:
            try:
                self.pipe = load_inpainting_pipeline(self.model, self.device)
            except Exception as exc:  # offline with no cached weights: say what to fetch
                raise UsageError(
                    f"the inpainting model {self.model} is not available offline ({type(exc).__name__}); put it in the "
                    "Hugging Face cache, pass --set extra.inpaint_model=/local/folder, or use --set synthetic_fill=blur"
                ) from None
        return inpaint_batch(self.pipe, images, masks, resolution=self.resolution, steps=self.steps, seeds=seeds)


def _rerender(p: Planned) -> Any:
    """The mini world's exact image without the removed shapes (what its test queries use)."""
    from PIL import Image

    from vlbench.tasks.mini.render import render_scene

    world = p.source.mini_world
    scene = _mini_scene(int(p.source.image_id), world) if world and p.source.image_id.isdigit() else None
    if scene is None:
        raise UsageError(f"the rerender fill works only for mini world images, not {p.source.image_id}")
    skip = [i for i, o in enumerate(scene.objects) if o.cls in p.removal.removed_classes]
    return Image.fromarray(render_scene(scene, skip))


_SCENES: dict[str, dict[int, Any]] = {}  # world name -> image id -> scene


def _mini_scene(image_id: int, world: str) -> Any:
    if world not in _SCENES:
        from vlbench.tasks.mini.build import iter_scenes, world_config

        _SCENES[world] = {s.image_id: s for s in iter_scenes(world_config(world))}
    return _SCENES[world].get(image_id)


def _fill(filler: Filler, todo: Sequence[tuple[int, Planned]], staging: Path, seed: int, batch_size: int,
          fill: str, progress: bool) -> None:
    mine = [(k, p) for k, p in todo if not (staging / p.file_name).is_file()]
    with bar(len(mine), f"D' ({fill})", unit="img", show=progress) as shown:
        for lo in range(0, len(mine), batch_size):
            chunk = mine[lo : lo + batch_size]
            # The item's index, not its batch, seeds its noise: any sharding fills it the same way.
            images = filler([p for _, p in chunk], [seed * 1_000_003 + k for k, _ in chunk])
            for (_, p), im in zip(chunk, images, strict=True):
                buf = io.BytesIO()
                im.save(buf, format="PNG")
                atomic_write_bytes(staging / p.file_name, buf.getvalue())
            shown.update(len(chunk))


def build_synthetic_pairs(
    sources: Sequence[SourceImage], *, ratio: float, fill: str, captions: str, seed: int, cache_dir: Path,
    rank: int = 0, world_size: int = 1, device: str = "cpu", progress: bool = True,
    inpaint_model: str = "stable-diffusion-v1-5/stable-diffusion-inpainting", inpaint_steps: int = 25,
    inpaint_resolution: int = 512, batch_size: int = 8, n_pairs: int | None = None,
    tau: tuple[float, float, float] = (TAU1, TAU2, TAU3), filler: Filler | None = None,
    removals: str = ALL, pairs: Pairs = (),
) -> list[tuple[Path, str, str]]:
    """D' as (image path, caption, group = source image id), cached under `cache_dir`.

    Each rank fills its round-robin share into a staging folder. Under torch.distributed, rank 0
    publishes the set after a barrier and every rank returns it. Without it, ranks may run as
    separate jobs sharing `cache_dir`: a rank > 0 fills its share and returns its own pairs (staging
    paths), and the rank-0 call fills whatever is still missing, then publishes the whole set.
    `removals` and `pairs`: which removals are allowed (`plan`).
    """
    if fill not in FILLS:
        raise UsageError(f"synthetic fill {fill!r}: one of {', '.join(FILLS)}")
    params = {"format": FORMAT, "ratio": ratio, "fill": fill, "captions": captions, "seed": seed, "tau": list(tau),
              "n_pairs": n_pairs}
    if fill == "inpaint":
        params.update(inpaint_model=inpaint_model, inpaint_steps=inpaint_steps, inpaint_resolution=inpaint_resolution)
    if removals != ALL:  # the paper's rule keeps the cache key it always had
        params.update(removals=removals, pairs=[list(p) for p in pairs])
    digest = _digest(params, sources)
    folder = Path(cache_dir) / f"dprime-{digest[:16]}"
    done = _cached(folder)
    if done is not None:
        return done
    planned = plan(sources, ratio=ratio, captions=captions, seed=seed, n_pairs=n_pairs, tau=tau, removals=removals,
                   pairs=pairs)
    staging = Path(cache_dir) / f".dprime-{digest[:16]}.partial"
    staging.mkdir(parents=True, exist_ok=True)
    filler = filler or Filler(fill, device, inpaint_model, inpaint_steps, inpaint_resolution, batch_size)
    if not 0 <= rank < world_size:
        raise UsageError(f"rank {rank} is not in 0..{world_size - 1}")
    distributed = is_distributed()
    # Images already in the staging folder come from an interrupted run (each written atomically).
    _fill(filler, shard(planned, rank, world_size), staging, seed, batch_size, fill, progress)
    barrier()
    if not distributed and rank != 0:
        return [(staging / p.file_name, p.caption, p.source.image_id) for _, p in shard(planned, rank, world_size)]
    if not distributed and world_size > 1:
        _fill(filler, list(enumerate(planned)), staging, seed, batch_size, fill, progress)
    if rank == 0:
        items = [{"file_name": p.file_name, "caption": p.caption, "group": p.source.image_id,
                  "source_image": str(p.source.path), "source_sha256": sha256_file(p.source.path)
                  if p.source.path.is_file() else None, "removed_classes": list(p.removal.removed_classes),
                  "present_classes": list(p.removal.present_classes),
                  "removed_boxes": [list(b) for b in p.removal.removed_boxes],
                  "sha256": sha256_file(staging / p.file_name)} for p in planned]
        atomic_write_json(staging / MANIFEST, {
            "format": FORMAT, "params": params, "digest": digest, "sources": len(sources),
            "source_pairs": sum(len(s.captions) for s in sources), "requested": round(ratio * (n_pairs or sum(len(s.captions) for s in sources))),
            "pairs": len(items), "items": items,
        })
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(staging, folder)
    barrier()
    built = _cached(folder)
    if built is None:
        raise UsageError(f"the synthetic set in {folder} is incomplete after building; delete it and rerun")
    return built
