"""The mini world's annotations in the real formats: Karpathy json, COCO instances and captions,
Flickr30k Entities Sentences/Annotations. Builders return plain data (dicts, strings); the writer
in `vlbench.tasks.mini` puts them on disk."""

from __future__ import annotations

from collections.abc import Sequence
from xml.sax.saxutils import escape

import numpy as np
from pycocotools import mask as mask_utils

from vlbench.backports import strict_zip
from vlbench.tasks.mini.captions import Caption, scene_chain
from vlbench.tasks.mini.scene import Scene
from vlbench.tasks.mini.world import CLASSES, ENTITY_TYPES

INFO = {
    "description": "vlbench-mini: procedurally generated shapes with captions",
    "version": "1",
    "year": 2026,
    "contributor": "vlbench",
    "url": "",
    "date_created": "2026-01-01",
}
LICENSES = [
    {"id": 1, "name": "CC0 1.0", "url": "https://creativecommons.org/publicdomain/zero/1.0/"}
]


def category_id(cls: str) -> int:
    return CLASSES.index(cls) + 1


def coco_categories() -> list[dict]:
    return [{"id": category_id(c), "name": c, "supercategory": ENTITY_TYPES[c]} for c in CLASSES]


def _image_entry(scene: Scene) -> dict:
    return {
        "id": scene.image_id,
        "file_name": scene.file_name,
        "width": scene.width,
        "height": scene.height,
        "license": 1,
    }


def rle(mask: np.ndarray) -> dict:
    """Compressed COCO RLE of a boolean mask (pycocotools' own encoder)."""
    enc = mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))
    return {
        "size": [int(enc["size"][0]), int(enc["size"][1])],
        "counts": enc["counts"].decode("ascii"),
    }


def coco_instances(
    scenes: Sequence[Scene], labels: Sequence[np.ndarray], first_ann_id: int
) -> dict:
    """COCO instances: one annotation per object; bbox and area of its visible pixels, and its
    exact visible mask as RLE. `labels[i]` is the label map of `scenes[i]`."""
    anns = []
    ann_id = first_ann_id
    for scene, lab in strict_zip(scenes, labels):
        for i, o in enumerate(scene.objects):
            x, y, w, h = scene.boxes[i]
            anns.append(
                {
                    "id": ann_id,
                    "image_id": scene.image_id,
                    "category_id": category_id(o.cls),
                    "bbox": [float(x), float(y), float(w), float(h)],
                    "area": float(scene.areas[i]),
                    "iscrowd": 0,
                    "segmentation": rle(lab == i),
                }
            )
            ann_id += 1
    return {
        "info": INFO,
        "licenses": LICENSES,
        "images": [_image_entry(s) for s in scenes],
        "annotations": anns,
        "categories": coco_categories(),
    }


def coco_captions(
    scenes: Sequence[Scene], captions: Sequence[Sequence[tuple[int, Caption]]]
) -> dict:
    anns = [
        {"id": sentid, "image_id": scene.image_id, "caption": cap.raw}
        for scene, caps in strict_zip(scenes, captions)
        for sentid, cap in caps
    ]
    return {
        "info": INFO,
        "licenses": LICENSES,
        "images": [_image_entry(s) for s in scenes],
        "annotations": anns,
    }


def karpathy(scenes: Sequence[Scene], captions: Sequence[Sequence[tuple[int, Caption]]]) -> dict:
    """Karpathy's `dataset_*.json`: all splits, `imgid` the index in the list."""
    images = []
    for imgid, (scene, caps) in enumerate(strict_zip(scenes, captions)):
        images.append(
            {
                "filepath": scene.split,
                "sentids": [sentid for sentid, _ in caps],
                "filename": scene.file_name,
                "imgid": imgid,
                "split": scene.split,
                "sentences": [
                    {"tokens": cap.tokens, "raw": cap.raw, "imgid": imgid, "sentid": sentid}
                    for sentid, cap in caps
                ],
                "cocoid": scene.image_id,
            }
        )
    return {"images": images, "dataset": "mini"}


def entities_sentences(captions: Sequence[Caption]) -> str:
    return "".join(c.entities_line() + "\n" for c in captions)


def entities_annotation(scene: Scene, captions: Sequence[Caption]) -> str:
    """`Annotations/<id>.xml`: 1-based inclusive VOC boxes (xmin = x + 1, xmax = x + w), one
    object per box named by its chain; the background chain as a box-less scene object."""
    chain = {cls: k for k, cls in enumerate(scene.present_classes(), start=1)}
    lines = [
        "<annotation>",
        f"\t<filename>{escape(scene.file_name)}</filename>",
        f"\t<size>\n\t\t<width>{scene.width}</width>\n\t\t<height>{scene.height}</height>\n"
        "\t\t<depth>3</depth>\n\t</size>",
    ]
    for i, o in enumerate(scene.objects):
        x, y, w, h = scene.boxes[i]
        lines.append(
            f"\t<object>\n\t\t<name>{chain[o.cls]}</name>\n\t\t<bndbox>\n"
            f"\t\t\t<xmin>{x + 1}</xmin>\n\t\t\t<ymin>{y + 1}</ymin>\n"
            f"\t\t\t<xmax>{x + w}</xmax>\n\t\t\t<ymax>{y + h}</ymax>\n\t\t</bndbox>\n\t</object>"
        )
    if any(p.cls is None for c in captions for p in c.phrases):
        lines.append(
            f"\t<object>\n\t\t<name>{scene_chain(scene)}</name>\n\t\t<scene>1</scene>\n"
            "\t\t<nobndbox>0</nobndbox>\n\t</object>"
        )
    lines.append("</annotation>")
    return "\n".join(lines) + "\n"
