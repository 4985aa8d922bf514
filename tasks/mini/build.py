"""Drawing the whole mini world and writing its files (the body of `write_mini_benchmark`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from PIL import Image

from vlbench.backports import strict_zip
from vlbench.progress import progress, stage
from vlbench.tasks.mini.captions import Caption, make_captions
from vlbench.tasks.mini.formats import (
    coco_captions,
    coco_instances,
    entities_annotation,
    entities_sentences,
    karpathy,
)
from vlbench.tasks.mini.queries import choose_queries, manifest
from vlbench.tasks.mini.render import label_map, paint, render
from vlbench.tasks.mini.sampling import sample_scene
from vlbench.tasks.mini.scene import DependentRule, LayoutConfig, Scene, SplitSpec
from vlbench.tasks.mini.world import PARTNER_PAIRS

SPLITS = ("train", "val", "test")


@dataclass(frozen=True)
class MiniConfig:
    seed: int = 0
    n_train: int = 2000
    n_val: int = 250
    n_test: int = 250
    # P(partner present | class present) in images with two or more objects.
    train_partner_prob: float = 0.9
    # Val and test: None = no partner mechanism. A partner is drawn exactly like any other class,
    # so P(partner | class) equals P(any other given class | class) and the pair carries no
    # information. (0.5 here would still make a partner about 4x likelier than another class.)
    eval_partner_prob: float | None = None
    captions_per_image: int = 5
    # Sources of the decorrelated queries: images drawn like train (partner probability
    # train_partner_prob) but disjoint from it, and never shown to a model (no captions, not in
    # any Karpathy split, not in the gallery). Sized for at least 300 matched partner/control
    # pairs (6,000 give 3xx; the tau rules and exact matching keep about 5.6% of the images).
    n_pool: int = 6000
    layout: LayoutConfig = field(default_factory=LayoutConfig)
    # The v3 world (`v3_config`; tasks/mini/README.md, pre-registration). None / False: the v2
    # world. `dependents` replaces the symmetric partner mechanism in train and the pool (val and
    # test stay balanced); `shape_captions` drops colour words and background phrases;
    # `one_query_per_image` lets each pool image give at most one query.
    dependents: DependentRule | None = None
    shape_captions: bool = False
    one_query_per_image: bool = False

    def splits(self) -> list[SplitSpec]:
        counts = (self.n_train, self.n_val, self.n_test)
        probs = (self.train_partner_prob, self.eval_partner_prob, self.eval_partner_prob)
        out, first = [], 1
        for name, n, p in strict_zip(SPLITS, counts, probs):
            out.append(SplitSpec(name, first, n, p, self.dependents if name == "train" else None))
            first += n
        return out

    def pairs(self) -> tuple[tuple[str, str], ...]:
        """The shortcut's class pairs: (cue, dependent) in a v3 world, partners in v2."""
        return self.dependents.pairs if self.dependents is not None else PARTNER_PAIRS


# mini-decorrelated v3's pairs, (cue, dependent): the v2 partner pairs, directed.
CUE_DEPENDENT: tuple[tuple[str, str], ...] = (("star", "ring"), ("heart", "arrow"), ("triangle", "disc"))
V3_SEED = 3


def v3_config(n_pool: int = 36000) -> MiniConfig:
    """The world of mini-decorrelated v3, as pre-registered in tasks/mini/README.md: a cue brings
    its dependent with probability 0.95 in train and the pool, dependents never appear without a
    cue and are drawn at 0.6x size, captions name shapes, counts and relations only, and each pool
    image gives at most one query. Its own seed, so no image is shared with the v2 world."""
    return MiniConfig(
        seed=V3_SEED,
        n_pool=n_pool,
        layout=LayoutConfig(small_classes=tuple(d for _, d in CUE_DEPENDENT), small_scale=0.6),
        dependents=DependentRule(CUE_DEPENDENT, 0.95),
        shape_captions=True,
        one_query_per_image=True,
    )


# The worlds benchmark records name in their `mini_world` option (default "v2": the world every
# mini benchmark but mini-decorrelated v3 is made from).
WORLDS = ("v2", "v3")


def world_config(name: str) -> MiniConfig:
    """The configuration of a named mini world."""
    if name == "v2":
        return MiniConfig()
    if name == "v3":
        return v3_config()
    raise ValueError(f"unknown mini world {name!r}; known: {', '.join(WORLDS)}")


# Random-stream keys of the splits that are not Karpathy splits: the removal-source pool and the
# unbiased train twin (same size and ids as train, no partner mechanism: the mini ODmAP
# experiment's reference arm). Keys 0-2 are train/val/test; new keys never move the old streams.
POOL_KEY = 3
UNBIASED_TRAIN_KEY = 4


def iter_pool(config: MiniConfig) -> Iterator[Scene]:
    """The query-source pool: ids after the test split, drawn with the train partner rule."""
    first = sum(s.count for s in config.splits()) + 1
    spec = SplitSpec("pool", first, config.n_pool, config.train_partner_prob, config.dependents)
    for i in range(config.n_pool):
        yield sample_scene(np.random.default_rng([config.seed, POOL_KEY, i, 0]), first + i, spec, config.layout)


def iter_unbiased_train(config: MiniConfig) -> Iterator[Scene]:
    """Train's twin without the shortcut: same ids, count and layout, eval partner rule."""
    twin = replace(config.dependents, twin=True) if config.dependents is not None else None
    spec = SplitSpec("train", 1, config.n_train, config.eval_partner_prob, twin)
    for i in range(config.n_train):
        yield sample_scene(np.random.default_rng([config.seed, UNBIASED_TRAIN_KEY, i, 0]), 1 + i, spec, config.layout)


def unbiased_train_captions(config: MiniConfig, scene: Scene) -> list[Caption]:
    """Captions of a twin scene, from the twin's own stream (same templates as train)."""
    rng = np.random.default_rng([config.seed, UNBIASED_TRAIN_KEY, scene.image_id - 1, 1])
    return make_captions(rng, scene, config.captions_per_image, config.shape_captions)


def write_unbiased_train(out: Path, config: MiniConfig | None = None) -> Path:
    """Write the unbiased train twin under `out`: `images/mini_<id>.png` and `captions.json`
    (`{"images": [{"id", "file_name", "captions": [...]}]}`); returns the captions file.

    Not a benchmark split: it exists to train the reference arm of the mini ODmAP experiment,
    a model of the same size and steps as the biased one that never saw the shortcut."""
    config = config or MiniConfig()
    out = Path(out)
    rows = []
    for scene in iter_unbiased_train(config):
        lab, _ = label_map(scene.objects, scene.width, scene.height)
        _write_png(out / "images" / scene.file_name, paint(scene.background, scene.objects, lab))
        caps = unbiased_train_captions(config, scene)
        rows.append({"id": scene.image_id, "file_name": scene.file_name, "captions": [c.raw for c in caps]})
    return _write_json(out / "captions.json", {"format": "vlbench-mini-unbiased-train", "seed": config.seed,
                                               "images": rows})


def iter_scenes(config: MiniConfig) -> Iterator[Scene]:
    """Every scene, in id order. Each image has its own random stream keyed by (seed, split,
    index), so the first images of a smaller world are the first images of the full one."""
    for k, split in enumerate(config.splits()):
        for i in range(split.count):
            rng = np.random.default_rng([config.seed, k, i, 0])
            yield sample_scene(rng, split.first_id + i, split, config.layout)


def scene_captions(config: MiniConfig, scene: Scene) -> list[Caption]:
    k = SPLITS.index(scene.split)
    i = scene.image_id - config.splits()[k].first_id
    rng = np.random.default_rng([config.seed, k, i, 1])
    return make_captions(rng, scene, config.captions_per_image, config.shape_captions)


def _write_json(path: Path, obj: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Fixed separators and insertion order: identical bytes on every run and platform.
    path.write_text(
        json.dumps(obj, ensure_ascii=True, separators=(",", ":")) + "\n", encoding="utf-8"
    )
    return path


def _write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def _write_png(path: Path, rgb: np.ndarray) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    # an (h, w, 3) uint8 array is RGB (Pillow 11.3+ deprecates naming the mode)
    Image.fromarray(np.ascontiguousarray(rgb, dtype=np.uint8)).save(path, format="PNG", compress_level=6)
    return path


def write_mini_benchmark(
    out: Path, seed: int = 0, config: MiniConfig | None = None, images: bool = True
) -> list[Path]:
    """Write the mini world into the folder `out` (layout in tasks/mini/README.md); returns the
    paths. `vlbench.tasks.mini.write_mini_benchmark` calls this on a fresh folder and puts it in
    place under the output rule.

    `config` overrides the defaults (its seed wins over `seed` only when `seed` is 0 and the
    config's is not); `images=False` writes the annotation files only (what scoring needs).
    """
    if config is None:
        config = MiniConfig(seed=seed)
    elif seed != 0 and config.seed != seed:
        raise ValueError(f"seed {seed} conflicts with config.seed {config.seed}")
    out = Path(out)
    written: list[Path] = []
    scenes = list(iter_scenes(config))
    caps: list[list[tuple[int, Caption]]] = []
    sentid = 1
    # every step that takes seconds shows progress on a terminal
    for scene in progress(scenes, desc="mini world captions", unit="img"):
        row = []
        for cap in scene_captions(config, scene):
            row.append((sentid, cap))
            sentid += 1
        caps.append(row)

    labels: dict[int, np.ndarray] = {}
    for scene in progress(scenes, desc="mini world images" if images else "mini world labels", unit="img"):
        lab, _ = label_map(scene.objects, scene.width, scene.height)
        labels[scene.image_id] = lab
        if images:
            rgb = paint(scene.background, scene.objects, lab)
            written.append(_write_png(out / "images" / scene.split / scene.file_name, rgb))

    written.append(_write_json(out / "dataset_mini.json", karpathy(scenes, caps)))
    ann_id = 1
    for split in SPLITS:
        idx = [k for k, s in enumerate(scenes) if s.split == split]
        split_scenes = [scenes[k] for k in idx]
        inst = coco_instances(split_scenes, [labels[s.image_id] for s in split_scenes], ann_id)
        ann_id += len(inst["annotations"])
        written.append(_write_json(out / "annotations" / f"instances_{split}.json", inst))
        written.append(
            _write_json(
                out / "annotations" / f"captions_{split}.json",
                coco_captions(split_scenes, [caps[k] for k in idx]),
            )
        )
        written.append(
            _write_text(
                out / "flickr30k_entities" / f"{split}.txt",
                "".join(f"{s.image_id}\n" for s in split_scenes),
            )
        )
    ent = out / "flickr30k_entities"
    for scene, row in progress(list(strict_zip(scenes, caps)), desc="Flickr30k Entities files", unit="img"):
        lines = [c for _, c in row]
        written.append(
            _write_text(ent / "Sentences" / f"{scene.image_id}.txt", entities_sentences(lines))
        )
        written.append(
            _write_text(
                ent / "Annotations" / f"{scene.image_id}.xml", entities_annotation(scene, lines)
            )
        )

    directed = config.dependents is not None
    with stage("choosing the decorrelated queries"):
        queries = choose_queries(list(iter_pool(config)), pairs=config.pairs(), directed=directed,
                                 one_per_image=config.one_query_per_image)
    written.append(
        _write_json(out / "decorrelated" / "queries.json", manifest(queries, config.pairs(), directed=directed))
    )
    if images:
        for q in progress(queries, desc="decorrelated query images", unit="img"):
            rgb = render(
                q.scene.background,
                q.scene.objects,
                q.scene.width,
                q.scene.height,
                skip=q.skip_indices(),
            )[0]
            written.append(_write_png(out / "decorrelated" / "images" / q.file_name, rgb))
    return written
