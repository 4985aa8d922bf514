"""What a recipe reads: train pairs, test images and captions, decorrelated queries and gallery.

Everything comes from the benchmark's Karpathy-format file (captions, splits, file names) and an
image folder. The mini world is generated on demand into the data folder (it is deterministic),
so the mini recipes need nothing but vlbench; the real benchmarks name the files they need.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from vlbench.atomic_files import staged_folder
from vlbench.benchmark import Benchmark
from vlbench.errors import UsageError
from vlbench.ground_truth import default_data_dir, load_ground_truth
from vlbench.hashing import sha256_bytes
from vlbench.tasks.karpathy import KarpathyImage, karpathy_images, load_karpathy, read_karpathy

from .config import RecipeConfig

# Which Karpathy file each benchmark family is built from.
KARPATHY_FILE = {"coco": "dataset_coco.json", "flickr30k": "dataset_flickr30k.json", "mini": "dataset_mini.json"}


@dataclass(frozen=True)
class Pair:
    """One training example; `group` ties an image to its edited copies (hard negatives)."""

    image: Path
    caption: str
    group: str


@dataclass(frozen=True)
class Source:
    """The files a recipe reads for one benchmark."""

    family: str  # coco | flickr30k | mini
    karpathy: list[KarpathyImage]
    image_root: Path
    query_image_root: Path | None  # decorrelated query images
    world_root: Path | None  # the generated mini world (annotations, entities, images)
    relative_paths: dict[str, str]  # image id -> Karpathy `filepath/filename`
    world_name: str = "v2"  # which mini world `world_root` holds (`tasks/mini/build.py: WORLDS`)

    def image_path(self, image_id: str) -> Path:
        return self.image_root / self.relative_paths[image_id]


def family_of(benchmark: Benchmark) -> str:
    if benchmark.id.startswith("mini-"):
        return "mini"
    if benchmark.id.startswith("coco"):
        return "coco"
    if benchmark.id.startswith("flickr30k"):
        return "flickr30k"
    raise UsageError(f"benchmark {benchmark.id} has no baseline data source")


def mini_world_name(benchmark: Benchmark) -> str:
    """The mini world a benchmark is made from (its record's `mini_world` option; default v2)."""
    return str(benchmark.option("mini_world", "v2"))


def mini_world(data_dir: Path | None = None, progress: bool = True, world: str = "v2") -> Path:
    """The full mini world `world` (`tasks/mini/build.py: world_config`) with images, generated
    once per data folder and kept (generating it takes a while: the v3 world's query pool alone is
    36,000 scenes).

    A stamp holds the shipped ground truth's sha256s: when vlbench ships a new mini world, the
    cached one is regenerated rather than silently mixed with the new ground truth.
    """
    from vlbench.tasks.mini.build import world_config
    from vlbench.tasks.mini.files import SHA256

    config = world_config(world)  # an unknown name fails here, before anything is written
    # v2's folder has no world suffix, so that mini worlds already generated for it are found
    root = (data_dir or default_data_dir()) / ("mini-world" if world == "v2" else f"mini-world-{world}")
    stamp = sha256_bytes(json.dumps(SHA256, sort_keys=True).encode())
    marker = root / ".vlbench-mini-stamp"
    if marker.is_file() and marker.read_text().strip() == stamp:
        return root
    from vlbench.tasks.mini import write_mini_benchmark

    root.parent.mkdir(parents=True, exist_ok=True)
    if progress:
        print(f"generating the mini world {world} with images into {root} (once, about 30 s or more)")
    with staged_folder(root) as tmp:
        write_mini_benchmark(tmp, config=config)
        (tmp / marker.name).write_text(stamp + "\n")
    return root


def mini_unbiased_train(world: Path, progress: bool = True, name: str = "v2") -> Path:
    """The unbiased train twin of the mini world `name` (`tasks/mini/build.py:
    write_unbiased_train`), written once inside that world's folder `world` (so a regenerated world
    drops it too); returns its captions file."""
    folder = world / "unbiased-train"
    captions = folder / "captions.json"
    if captions.is_file():
        return captions
    from vlbench.tasks.mini.build import world_config, write_unbiased_train

    if progress:
        print(f"generating the mini world's unbiased train twin into {folder} (once, about 10 s)")
    with staged_folder(folder) as tmp:
        write_unbiased_train(tmp, world_config(name))
    return captions


def load_source(benchmark: Benchmark, config: RecipeConfig, data_dir: Path | None) -> Source:
    family = family_of(benchmark)
    name = KARPATHY_FILE[family]
    world = None
    if family == "mini" and not config.karpathy:
        world = mini_world(data_dir, world=mini_world_name(benchmark))
        karpathy_path: Path = world / name
        image_root = Path(config.image_root) if config.image_root else world / "images"
        query_root = Path(config.query_image_root) if config.query_image_root else world / "decorrelated" / "images"
    else:
        base = data_dir or default_data_dir()
        karpathy_path = Path(config.karpathy) if config.karpathy else base / "karpathy" / name
        if not karpathy_path.exists():
            raise UsageError(
                f"{benchmark.id} baselines need the Karpathy split file with captions ({name}): pass "
                f"--set karpathy=/path/to/{name} (or put it in {base / 'karpathy'}); the ground truth "
                f"itself comes from `vlbench data prepare {benchmark.id} --source /path/to/{name}`"
            )
        if not config.image_root:
            raise UsageError(
                f"{benchmark.id} baselines need the images: pass --set image_root=DIR, the folder that "
                "the Karpathy file's filepath/filename paths are relative to"
                + (" (COCO: holding train2014/ and val2014/)" if family == "coco" else " (Flickr30k: flickr30k-images/)")
            )
        image_root = Path(config.image_root)
        query_root = Path(config.query_image_root) if config.query_image_root else None
    entries = read_karpathy(load_karpathy(karpathy_path, name))
    images = karpathy_images(entries)
    relative = {
        img.id: str(Path(str("" if entry.filepath is None else entry.filepath)) / img.filename)
        for img, entry in zip(images, entries, strict=True)
    }
    return Source(family, images, image_root, query_root, world, relative, mini_world_name(benchmark))


def train_pairs(source: Source, config: RecipeConfig) -> list[Pair]:
    """Every (image, caption) pair of the train split(s), in file order."""
    if config.mini_train == "unbiased":
        if source.world_root is None:
            raise UsageError("mini_train=unbiased is a setting of the generated mini world's benchmarks (mini-*)")
        return _limit(_unbiased_pairs(source.world_root, source.world_name), config)
    splits = set(config.train_split)
    pairs = [
        Pair(source.image_path(img.id), cap.raw, img.id)
        for img in source.karpathy
        if img.split in splits
        for cap in img.captions
    ]
    if not pairs:
        found = sorted({img.split for img in source.karpathy})
        raise UsageError(f"no training pairs: the Karpathy file has no split in {sorted(splits)} (it has {found}); set train_split")
    return _limit(pairs, config)


def _unbiased_pairs(world: Path, name: str) -> list[Pair]:
    doc = json.loads(mini_unbiased_train(world, name=name).read_text(encoding="utf-8"))
    images = world / "unbiased-train" / "images"
    # groups are prefixed: the twin reuses train's image ids for different pictures
    return [Pair(images / row["file_name"], caption, f"unbiased:{row['id']}") for row in doc["images"]
            for caption in row["captions"]]


def _limit(pairs: list[Pair], config: RecipeConfig) -> list[Pair]:
    if config.max_train_pairs:
        pairs = pairs[: config.max_train_pairs]
    missing = [p.image for p in pairs[:1000] if not p.image.is_file()]
    if missing:
        raise UsageError(f"{len(missing)} train images are missing, e.g. {missing[0]}; check image_root")
    return pairs


@dataclass(frozen=True)
class RetrievalInputs:
    image_ids: list[str]
    image_paths: list[Path]
    caption_ids: list[str]
    captions: list[str]


def retrieval_inputs(benchmark: Benchmark, source: Source, data_dir: Path | None) -> RetrievalInputs:
    """The test images and captions, in the ground truth's order."""
    gt, _ = load_ground_truth(benchmark, data_dir)
    by_image = {img.id: img for img in source.karpathy}
    text = _caption_texts(source)
    image_ids, caption_ids = list(gt.images), list(gt.captions)
    unknown = [i for i in image_ids if i not in by_image] + [c for c in caption_ids if c not in text]
    if unknown:
        raise UsageError(f"the Karpathy file does not match {benchmark.id}'s ground truth: {len(unknown)} ids missing, e.g. {unknown[0]}")
    paths = [source.image_path(i) for i in image_ids]
    _require_files(paths, "test images", "image_root")
    return RetrievalInputs(image_ids, paths, caption_ids, [text[c] for c in caption_ids])


@dataclass(frozen=True)
class DecorrelatedInputs:
    query_ids: list[str]
    query_paths: list[Path]
    gallery_ids: list[str]
    gallery: list[str]


def decorrelated_inputs(benchmark: Benchmark, source: Source, data_dir: Path | None) -> DecorrelatedInputs:
    gt, _ = load_ground_truth(benchmark, data_dir)
    if source.query_image_root is None:
        raise UsageError(
            f"{benchmark.id} needs its query images (the test images with classes removed): make them with "
            "`python -m vlbench.tasks.decorrelated.fill MANIFEST --source IMAGES --out DIR` and pass "
            "--set query_image_root=DIR"
        )
    text = _caption_texts(source)
    gallery_ids = gt.caption_index.ids()
    missing = [c for c in gallery_ids if c not in text]
    if missing:
        raise UsageError(f"the Karpathy file lacks {len(missing)} gallery captions of {benchmark.id}, e.g. {missing[0]}")
    paths = [source.query_image_root / name for name in gt.query_files]
    _require_files(paths, "query images", "query_image_root")
    return DecorrelatedInputs([str(q) for q in gt.query_ids], paths, gallery_ids, [text[c] for c in gallery_ids])


def _caption_texts(source: Source) -> dict[str, str]:
    return {c.id: c.raw for img in source.karpathy for c in img.captions}


def _require_files(paths: list[Path], what: str, key: str) -> None:
    missing = [p for p in paths if not p.is_file()]
    if missing:
        raise UsageError(f"{len(missing)} of {len(paths)} {what} are missing, e.g. {missing[0]}; check --set {key}=DIR")
