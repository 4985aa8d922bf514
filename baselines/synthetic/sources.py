"""The train images D' is made from, per benchmark family, with their objects and captions:
the mini world (its own scenes), COCO (Karpathy split + instances) and Flickr30k (Karpathy split
+ Flickr30k Entities)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from vlbench.errors import UsageError
from vlbench.jsonio import read_trusted_json
from vlbench.tasks.karpathy import KarpathyEntry, read_karpathy

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



def load_sources(benchmark_id: str, data_dir: Path, image_root: Path | None) -> list[SourceImage]:
    """The train images of the benchmark's family with their objects and captions."""
    if benchmark_id.startswith("mini-"):
        from vlbench.registry import registry

        from ..data import mini_world_name

        return _mini_sources(data_dir, mini_world_name(registry().benchmark(benchmark_id)))
    if benchmark_id.startswith("coco"):
        return _coco_sources(data_dir, image_root, benchmark_id)
    if benchmark_id.startswith("flickr30k"):
        return _flickr_sources(data_dir, image_root, benchmark_id)
    raise UsageError(f"no synthetic-pair source for benchmark {benchmark_id}")


def _mini_sources(data_dir: Path, world_name: str = "v2", split: str = "train") -> list[SourceImage]:
    from vlbench.tasks.mini.build import iter_scenes, scene_captions, world_config
    from vlbench.tasks.mini.queries import scene_objects

    from ..data import mini_world

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


def _karpathy(data_dir: Path, name: str, benchmark_id: str) -> list[KarpathyEntry]:
    path = data_dir / "karpathy" / name
    if not path.is_file():
        raise UsageError(
            f"synthetic pairs need the Karpathy split file {path}: copy {name} there (the same file "
            f"`vlbench data prepare {benchmark_id} --source DIR` reads)"
        )
    return read_karpathy(read_trusted_json(path))


def _coco_sources(data_dir: Path, image_root: Path | None, benchmark_id: str) -> list[SourceImage]:
    from pycocotools.coco import COCO

    if image_root is None:
        raise UsageError("synthetic pairs for COCO need --set image_root=DIR (holding train2014/ and val2014/)")
    dataset = _karpathy(data_dir, "dataset_coco.json", benchmark_id)
    # Karpathy train + restval images live in both train2014 and val2014: both instance files.
    ann_dir = data_dir / "coco" / "annotations"
    out = []
    by_file: dict[str, list[KarpathyEntry]] = {}
    for img in dataset:
        if img.split in ("train", "restval"):
            by_file.setdefault(img.filepath, []).append(img)
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
            info = coco.imgs[img.cocoid]
            objects = [(names[a["category_id"]], tuple(a["bbox"])) for a in coco.imgToAnns.get(img.cocoid, [])]
            out.append(SourceImage(str(img.cocoid), image_root / filepath / img.filename, info["width"],
                                   info["height"], [s.raw for s in img.sentences], objects))
    return out


def _flickr_sources(data_dir: Path, image_root: Path | None, benchmark_id: str) -> list[SourceImage]:
    from vlbench.tasks.decorrelated.mentions import FLICKR_CLASSES
    from vlbench.tasks.decorrelated.prepare import flickr_objects

    if image_root is None:
        raise UsageError("synthetic pairs for Flickr30k need --set image_root=DIR (the flickr30k-images folder)")
    dataset = _karpathy(data_dir, "dataset_flickr30k.json", benchmark_id)
    root = data_dir / "flickr30k_entities"
    if not (root / "Annotations").is_dir():
        raise UsageError(
            f"synthetic pairs for Flickr30k need Flickr30k Entities (Annotations/, Sentences/) in {root}: copy the "
            f"folder that `vlbench data prepare flickr30k-1k-decorrelated --source DIR` reads there"
        )
    out = []
    for img in dataset:
        if img.split != "train":
            continue
        stem = Path(img.filename).stem
        found = flickr_objects(root, stem, FLICKR_CLASSES)
        if found is None:
            continue
        spans = [[(p.text, tuple(sorted(found.chain_classes.get(p.phrase_id, ())))) for p in sentence.phrases]
                 for sentence in found.sentences]
        texts = [sentence.text for sentence in found.sentences]
        out.append(SourceImage(stem, image_root / img.filename, found.width, found.height, texts, found.objects, spans))
    return out
