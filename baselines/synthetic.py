"""D': object-removed training pairs, the ODmAP paper's mitigation (Sec. 3.3).

For a train image, a removal is chosen by the decorrelated task's own tau rules
(`vlbench.tasks.decorrelated.removal`), the region is filled by the task's fill (diffusers
inpainting by default; blur, mean, zero; or, in the mini world, an exact re-render without the
removed shapes), and the caption is one of the image's captions with the noun phrases of the
removed classes deleted (default) or a prompt listing the classes that remain.

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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlbench.atomic_files import atomic_write_bytes, atomic_write_json
from vlbench.errors import UsageError
from vlbench.hashing import sha256_bytes, sha256_file
from vlbench.jsonio import read_trusted_json
from vlbench.progress import bar
from vlbench.tasks.decorrelated.removal import TAU1, TAU2, TAU3, Removal, candidate_removals

from .runtime import barrier, is_distributed

MANIFEST = "manifest.json"
FORMAT = "vlbench-synthetic-pairs"
FILLS = ("inpaint", "blur", "mean", "zero", "rerender")
CAPTION_MODES = ("noun-phrase", "prompt")

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class SourceImage:
    """One train image with its object annotations (COCO xywh boxes)."""

    image_id: str
    path: Path
    width: int
    height: int
    captions: list[str]
    objects: list[tuple[str, Box]]
    # Per caption, annotated noun phrases and the classes each names (Flickr30k Entities, mini).
    # Empty: phrases are found with the class-word matcher (COCO).
    phrases: list[list[tuple[str, tuple[str, ...]]]] = field(default_factory=list)
    # The mini world the image was drawn in (`tasks/mini/build.py: WORLDS`), which the rerender
    # fill draws again; None outside the mini world.
    mini_world: str | None = None


# --- captions ------------------------------------------------------------------------------

# Words that end a noun phrase on its left: a phrase never extends over them.
_CONJUNCTIONS = {"and", "or", "with", "&", "while"}
_PREPOSITIONS = {
    "on", "in", "at", "near", "by", "under", "underneath", "above", "below", "behind", "beside",
    "besides", "over", "from", "of", "into", "onto", "inside", "along", "across", "around",
    "against", "to", "toward", "towards", "between", "among", "beneath", "through", "holding",
    "carrying", "riding", "eating", "watching", "using", "wearing",
}
_COMPOUND_PREPS = (
    ("on", "the", "left", "of"), ("on", "the", "right", "of"), ("to", "the", "left", "of"),
    ("to", "the", "right", "of"), ("in", "front", "of"), ("on", "top", "of"), ("next", "to"),
    ("close", "to"),
)
_OPENERS = {
    ("a", "picture", "of"), ("a", "photo", "of"), ("an", "image", "of"), ("a", "drawing", "of"),
    ("a", "simple", "drawing", "of"), ("an", "image", "showing"), ("a", "picture", "showing"),
    ("an", "image", "with"), ("a", "scene", "with"), ("there", "is"), ("there", "are"),
}
_BREAK = _CONJUNCTIONS | _PREPOSITIONS | {"is", "are", "was", "were", "there", "this", "that", "which", "who", "the"}
_DETERMINERS = {"a", "an", "the", "some", "two", "three", "four", "five", "several", "many", "his", "her", "their", "its", "one"}
_WORD = re.compile(r"[A-Za-z]+")


def _bare(word: str) -> str:
    return "".join(_WORD.findall(word.lower()))


def _find_span(bare: list[str], phrase: list[str], taken: set[int]) -> tuple[int, int] | None:
    n = len(phrase)
    for s in range(len(bare) - n + 1):
        if bare[s : s + n] == phrase and not taken.intersection(range(s, s + n)):
            return s, s + n
    return None


def remove_noun_phrases(caption: str, spans: Sequence[str], expand_left: bool) -> str:
    """`caption` without the noun phrases `spans` (each a phrase's words) and the words tying
    them to the rest: a preposition before it ("over a frisbee"), or a conjunction before or
    after it ("a dog and a cat"). With `expand_left`, a span that is only the class word grows
    over its modifiers ("two small *dogs*") up to a determiner or a phrase boundary."""
    words = caption.split()
    bare = [_bare(w) for w in words]
    drop: set[int] = set()
    for span in spans:
        target = [t for t in (_bare(w) for w in span.split()) if t]
        hit = _find_span(bare, target, drop) if target else None
        if hit is None:
            continue
        s, e = hit
        if expand_left:
            k = s
            while k > 0 and s - k < 3 and bare[k - 1] and bare[k - 1] not in _BREAK and not words[k - 1].endswith(","):
                k -= 1
                if bare[k] in _DETERMINERS:
                    break
            if k > 0 and bare[k - 1] in _DETERMINERS:
                k -= 1
            s = k
        before = s - 1
        while before >= 0 and not bare[before]:
            before -= 1
        # A phrase that opens the sentence, or follows an opener ("A picture of ..."), is not tied
        # to what comes before: the opener stays, the relation after the phrase goes.
        lead = s == 0 or tuple(bare[:s]) in _OPENERS
        tied = False
        for compound in () if lead else _COMPOUND_PREPS:
            n = len(compound)
            if s - n >= 0 and tuple(bare[s - n : s]) == compound:
                s -= n
                tied = True
                break
        if not tied and not lead and before >= 0 and bare[before] in (_CONJUNCTIONS | _PREPOSITIONS):
            s = before
            tied = True
            if bare[before] in ("and", "or"):
                # the last item of a list: "a triangle, a ball and a moon" minus moon must read
                # "a triangle and a ball", so the list's last comma takes the conjunction
                comma = next((j for j in range(before - 1, -1, -1) if j not in drop and (
                    words[j].endswith(",") or bare[j] in _CONJUNCTIONS)), None)
                if comma is not None and comma < before - 1 and words[comma].endswith(","):
                    words[comma] = f"{words[comma][:-1]} {words[before]}"
        if not tied and e < len(words):
            after = next((c for c in _COMPOUND_PREPS if tuple(bare[e : e + len(c)]) == c), None)
            if bare[e] in _CONJUNCTIONS and before >= 0 and words[before].endswith(","):
                # "a heart, a moon and an arrow" minus moon: "a heart and an arrow"
                words[before] = words[before][:-1]
            elif lead and after is not None:
                # drop the words that related it to what follows: "a dog next to a cat" -> "a cat"
                e += len(after)
            elif lead and bare[e] in (_CONJUNCTIONS | _PREPOSITIONS):
                e += 1
        drop.update(range(s, e))
    if not drop:
        return caption
    kept = [w for i, w in enumerate(words) if i not in drop]
    text = " ".join(kept)
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r",(\s*,)+", ",", text)
    text = re.sub(r"^[\s,;:]+|[\s,;:]+(?=[.!?]?$)", "", text)
    if text and caption[:1].isupper():
        text = text[0].upper() + text[1:]
    if caption.rstrip().endswith(".") and text and not text.endswith("."):
        text += "."
    return text


def prompt_caption(present: Sequence[str], rng: random.Random) -> str:
    """The paper's prompt alternative: 'a photo of a dog and a frisbee'."""
    names = list(present)
    rng.shuffle(names)
    listed = [f"{'an' if n[0] in 'aeiou' else 'a'} {n}" for n in names]
    body = listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]
    return f"a photo of {body}"


def synthetic_caption(src: SourceImage, k: int, removal: Removal, mentions: Callable[[str], set[str]]) -> str | None:
    """Caption k with the removed classes' noun phrases deleted, or None when the result still
    names a removed class or names no class that remains (the pair would teach the bias)."""
    removed = set(removal.removed_classes)
    if src.phrases:
        spans = [text for text, classes in src.phrases[k] if removed.intersection(classes)]
        out = remove_noun_phrases(src.captions[k], spans, expand_left=False)
        left = {c for text, classes in src.phrases[k] if text not in spans for c in classes}
        named = (mentions(out) | left) if out else set()
    else:
        spans = [text for text, classes in _matched_spans(src.captions[k], mentions) if removed.intersection(classes)]
        out = remove_noun_phrases(src.captions[k], spans, expand_left=True)
        named = mentions(out)
    if not out or not spans or named & removed or not named & set(removal.present_classes):
        return None
    return out


def _matched_spans(caption: str, mentions: Callable[[str], set[str]]) -> list[tuple[str, set[str]]]:
    spans = getattr(mentions, "spans", None)
    return spans(caption) if spans else []


class ClassMentions:
    """Class names a text mentions, through the decorrelated task's word matcher."""

    def __init__(self, matcher: Any) -> None:
        self.matcher = matcher

    def __call__(self, text: str) -> set[str]:
        return {self.matcher.classes[i] for i in self.matcher.mentions(text)}

    def spans(self, text: str) -> list[tuple[str, set[str]]]:
        return [(words, {self.matcher.classes[i] for i in idx}) for words, idx in self.matcher.spans(text)]


# --- sources -------------------------------------------------------------------------------

def load_sources(benchmark_id: str, data_dir: Path, image_root: Path | None) -> list[SourceImage]:
    """The train images of the benchmark's family with their objects and captions."""
    if benchmark_id.startswith("mini-"):
        from vlbench.registry import registry

        from .data import mini_world_name

        return _mini_sources(data_dir, mini_world_name(registry().benchmark(benchmark_id)))
    if benchmark_id.startswith("coco"):
        return _coco_sources(data_dir, image_root, benchmark_id)
    if benchmark_id.startswith("flickr30k"):
        return _flickr_sources(data_dir, image_root, benchmark_id)
    raise UsageError(f"no synthetic-pair source for benchmark {benchmark_id}")


def _mini_sources(data_dir: Path, world_name: str = "v2", split: str = "train") -> list[SourceImage]:
    from vlbench.tasks.mini.build import iter_scenes, scene_captions, world_config
    from vlbench.tasks.mini.queries import scene_objects

    from .data import mini_world

    world = mini_world(data_dir, world=world_name)
    config = world_config(world_name)
    out = []
    for scene in iter_scenes(config):
        if scene.split != split:
            continue
        caps = scene_captions(config, scene)
        out.append(SourceImage(
            image_id=str(scene.image_id), path=world / "images" / split / scene.file_name,
            width=scene.width, height=scene.height, captions=[c.raw for c in caps],
            objects=scene_objects(scene),
            phrases=[[(" ".join(p.words), (p.cls,) if p.cls else ()) for p in c.phrases] for c in caps],
            mini_world=world_name,
        ))
    return out


def _karpathy(data_dir: Path, name: str, benchmark_id: str) -> dict[str, Any]:
    path = data_dir / "karpathy" / name
    if not path.is_file():
        raise UsageError(
            f"synthetic pairs need the Karpathy split file {path}: copy {name} there (the same file "
            f"`vlbench data prepare {benchmark_id} --source DIR` reads)"
        )
    return read_trusted_json(path)


def _coco_sources(data_dir: Path, image_root: Path | None, benchmark_id: str) -> list[SourceImage]:
    from pycocotools.coco import COCO

    if image_root is None:
        raise UsageError("synthetic pairs for COCO need --set image_root=DIR (holding train2014/ and val2014/)")
    dataset = _karpathy(data_dir, "dataset_coco.json", benchmark_id)
    # Karpathy train + restval images live in both train2014 and val2014: both instance files.
    ann_dir = data_dir / "coco" / "annotations"
    out = []
    by_file: dict[str, list[dict[str, Any]]] = {}
    for img in dataset["images"]:
        if img["split"] in ("train", "restval"):
            by_file.setdefault(img["filepath"], []).append(img)
    for filepath, images in sorted(by_file.items()):
        ann = ann_dir / f"instances_{filepath}.json"
        if not ann.is_file():
            raise UsageError(
                f"synthetic pairs for COCO need the instance annotations {ann}: copy the official "
                f"annotations/ folder (the one `vlbench data prepare coco-5k-decorrelated --source DIR` "
                f"reads) to {ann_dir}"
            )
        coco = COCO(str(ann))
        names = {c["id"]: c["name"] for c in coco.loadCats(coco.getCatIds())}
        for img in images:
            info = coco.imgs[img["cocoid"]]
            objects = [(names[a["category_id"]], tuple(a["bbox"])) for a in coco.imgToAnns.get(img["cocoid"], [])]
            out.append(SourceImage(str(img["cocoid"]), image_root / filepath / img["filename"], info["width"],
                                   info["height"], [s["raw"] for s in img["sentences"]], objects))
    return out


def _flickr_sources(data_dir: Path, image_root: Path | None, benchmark_id: str) -> list[SourceImage]:
    from vlbench.tasks.decorrelated.mentions import FLICKR_CLASSES
    from vlbench.tasks.decorrelated.prepare import flickr_sentences, parse_entities_boxes

    if image_root is None:
        raise UsageError("synthetic pairs for Flickr30k need --set image_root=DIR (the flickr30k-images folder)")
    dataset = _karpathy(data_dir, "dataset_flickr30k.json", benchmark_id)
    root = data_dir / "flickr30k_entities"
    if not (root / "Annotations").is_dir():
        raise UsageError(
            f"synthetic pairs for Flickr30k need Flickr30k Entities (Annotations/, Sentences/) in {root}: copy the "
            f"folder that `vlbench data prepare flickr30k-1k-decorrelated --source DIR` reads there"
        )
    wanted = set(FLICKR_CLASSES)
    out = []
    for img in dataset["images"]:
        if img["split"] != "train":
            continue
        stem = Path(img["filename"]).stem
        xml = root / "Annotations" / f"{stem}.xml"
        if not xml.exists():
            continue
        sentences = flickr_sentences(root, stem)
        types: dict[str, set[str]] = {}
        for _, entity_phrases in sentences:
            for eid, ts in entity_phrases:
                types.setdefault(eid, set()).update(t for t in ts if t in wanted)
        width, height, boxes = parse_entities_boxes(xml.read_text(encoding="utf-8"))
        objects = [(t, box) for eid, box in boxes for t in sorted(types.get(eid, ()))]
        spans = [_entity_spans(line_phrases, types) for line_phrases in _raw_entity_phrases(root, stem)]
        texts = [text for text, _ in sentences]
        out.append(SourceImage(stem, image_root / img["filename"], width, height, texts, objects, spans))
    return out


_ENTITY = re.compile(r"\[/EN#(\d+)((?:/[^\s\]]+)*)\s+([^\]]*)\]")


def _raw_entity_phrases(root: Path, stem: str) -> list[list[tuple[str, str]]]:
    path = root / "Sentences" / f"{stem}.txt"
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()] if path.exists() else []
    return [[(m.group(1), m.group(3)) for m in _ENTITY.finditer(ln)] for ln in lines]


def _entity_spans(phrases: list[tuple[str, str]], types: dict[str, set[str]]) -> list[tuple[str, tuple[str, ...]]]:
    return [(text, tuple(sorted(types.get(eid, ())))) for eid, text in phrases]


def _mentions_for(sources: Sequence[SourceImage]) -> ClassMentions:
    from vlbench.tasks.decorrelated.mentions import coco_matcher
    from vlbench.tasks.decorrelated.prepare import mini_matcher
    from vlbench.tasks.mini.world import CLASSES

    names = {c for s in sources for c, _ in s.objects}
    return ClassMentions(mini_matcher() if names <= set(CLASSES) else coco_matcher())


# --- the set -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Planned:
    source: SourceImage
    removal: Removal
    caption: str
    file_name: str


def plan(sources: Sequence[SourceImage], *, ratio: float, captions: str, seed: int, n_pairs: int | None = None,
         tau: tuple[float, float, float] = (TAU1, TAU2, TAU3)) -> list[Planned]:
    """Which images, which removal, which caption: |D'| = round(ratio * |D|) pairs (|D| = the
    train pairs, or `n_pairs`), chosen with `seed`.

    As in the paper, one pair per source image first (a first pass over the shuffled images);
    only when that falls short of the ratio (the paper's COCO D' of 45,467 pairs is about 0.08 of
    |D|) do later passes add a second, third, ... pair per image, each a different removal or a
    different caption of it. Fewer pairs come out only when every option is used up.
    """
    if captions not in CAPTION_MODES:
        raise UsageError(f"synthetic captions {captions!r}: one of {', '.join(CAPTION_MODES)}")
    total = sum(len(s.captions) for s in sources) if n_pairs is None else n_pairs
    want = round(ratio * total)
    rng = random.Random(f"dprime:{seed}")
    order = list(sources)
    rng.shuffle(order)
    mentions = _mentions_for(sources)
    out: list[Planned] = []
    # Options are drawn lazily: most sets stop within the first pass, long before all images.
    pending = [(src, _options(src, captions, tau, mentions, rng)) for src in order]
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
             rng: random.Random) -> Iterator[tuple[Removal, str]]:
    """The image's (removal, caption) pairs in a seeded random order: removals shuffled, and for
    each its usable captions shuffled (prompt mode: one prompt per removal)."""
    removals = candidate_removals(src.objects, src.width, src.height, *tau)
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

    from vlbench.tasks.mini.scene import render_scene

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
) -> list[tuple[Path, str, str]]:
    """D' as (image path, caption, group = source image id), cached under `cache_dir`.

    Each rank fills its round-robin share into a staging folder. Under torch.distributed, rank 0
    publishes the set after a barrier and every rank returns it. Without it, ranks may run as
    separate jobs sharing `cache_dir`: a rank > 0 fills its share and returns its own pairs (staging
    paths), and the rank-0 call fills whatever is still missing, then publishes the whole set.
    """
    if fill not in FILLS:
        raise UsageError(f"synthetic fill {fill!r}: one of {', '.join(FILLS)}")
    params = {"format": FORMAT, "ratio": ratio, "fill": fill, "captions": captions, "seed": seed, "tau": list(tau),
              "n_pairs": n_pairs}
    if fill == "inpaint":
        params.update(inpaint_model=inpaint_model, inpaint_steps=inpaint_steps, inpaint_resolution=inpaint_resolution)
    digest = _digest(params, sources)
    folder = Path(cache_dir) / f"dprime-{digest[:16]}"
    done = _cached(folder)
    if done is not None:
        return done
    planned = plan(sources, ratio=ratio, captions=captions, seed=seed, n_pairs=n_pairs, tau=tau)
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
