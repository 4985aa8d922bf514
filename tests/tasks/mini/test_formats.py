"""Every mini annotation file loads through the real loaders, and the formats agree."""

from __future__ import annotations

import contextlib
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from pycocotools import mask as mask_utils
from pycocotools.coco import COCO

from vlbench.backports import strict_zip
from vlbench.tasks.flickr30k_entities import parse_annotation, parse_sentences
from vlbench.tasks.grounding.loaders import build_ground_truth
from vlbench.tasks.karpathy import parse_karpathy
from vlbench.tasks.mini.build import SPLITS, iter_scenes
from vlbench.tasks.mini.render import render
from vlbench.tasks.mini.scene import OBJECT_COLOURS
from vlbench.tasks.mini.world import CLASS_WORDS, CLASSES, ENTITY_TYPES, SCENE_TYPE, class_of_word


def coco(path: Path) -> COCO:
    with contextlib.redirect_stdout(io.StringIO()):
        return COCO(str(path))


def test_layout(small_world, small_config) -> None:
    out, written = small_world
    n = small_config.n_train + small_config.n_val + small_config.n_test
    assert all(p.exists() for p in written) and len(set(written)) == len(written)
    for split, count in strict_zip(
        SPLITS, (small_config.n_train, small_config.n_val, small_config.n_test)
    ):
        assert len(list((out / "images" / split).glob("mini_*.png"))) == count
        assert (out / "annotations" / f"instances_{split}.json").exists()
        assert (out / "annotations" / f"captions_{split}.json").exists()
    ent = out / "flickr30k_entities"
    assert len(list((ent / "Sentences").glob("*.txt"))) == n
    assert len(list((ent / "Annotations").glob("*.xml"))) == n
    img = Image.open(next((out / "images" / "train").glob("*.png")))
    assert img.mode == "RGB" and img.size == (128, 128)


# pycocotools' own Cython decoder (2.0.11) passes copy=False to numpy 2 and gets a DeprecationWarning
# for each mask it decodes: nothing of vlbench's input, so this test does not repeat it 225 times.
@pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept a copy keyword:DeprecationWarning")
def test_coco_instances_load_with_pycocotools(small_world, small_config) -> None:
    out, _ = small_world
    scenes = {s.image_id: s for s in iter_scenes(small_config)}
    ann_ids: set[int] = set()
    for split in SPLITS:
        c = coco(out / "annotations" / f"instances_{split}.json")
        assert [cat["name"] for cat in c.loadCats(c.getCatIds())] == list(CLASSES)
        assert all(
            cat["supercategory"] == ENTITY_TYPES[cat["name"]] for cat in c.dataset["categories"]
        )
        ids = sorted(c.getImgIds())
        assert ids == sorted(i for i, s in scenes.items() if s.split == split)
        for iid in ids:
            scene = scenes[iid]
            info = c.loadImgs(iid)[0]
            assert info["file_name"] == scene.file_name
            label = np.asarray(Image.open(out / "images" / split / scene.file_name))
            anns = c.loadAnns(c.getAnnIds(imgIds=iid))
            assert len(anns) == len(scene.objects)
            for ann in anns:
                ann_ids.add(ann["id"])
                m = c.annToMask(ann).astype(bool)
                assert int(m.sum()) == ann["area"] > 0
                assert list(mask_utils.toBbox(c.annToRLE(ann))) == ann["bbox"]
                # Every mask pixel has a saturated object colour (backgrounds are pale).
                assert (label[m].min(axis=1) <= 130).all()
                assert c.loadCats(ann["category_id"])[0]["name"] in set(scene.present_classes())
    assert len(ann_ids) == sum(len(s.objects) for s in scenes.values())


def test_coco_captions_and_karpathy_agree(small_world, small_config) -> None:
    out, _ = small_world
    doc = json.loads((out / "dataset_mini.json").read_text())
    images = parse_karpathy(doc)
    assert [im.id for im in images] == [str(s.image_id) for s in iter_scenes(small_config)]
    sentids = [int(c.id) for im in images for c in im.captions]
    assert len(sentids) == len(set(sentids)) == 5 * len(images)
    by_split: dict[str, dict[str, list[str]]] = {}
    for im in images:
        assert im.filename.startswith("mini_") and len(im.captions) == 5
        by_split.setdefault(im.split, {})[im.id] = [c.raw for c in im.captions]
    for entry in doc["images"]:
        for s in entry["sentences"]:
            assert s["tokens"] == s["raw"].lower().rstrip(".").replace(",", "").split()
    for split in SPLITS:
        c = coco(out / "annotations" / f"captions_{split}.json")
        got = {
            str(i): [a["caption"] for a in c.loadAnns(c.getAnnIds(imgIds=i))] for i in c.getImgIds()
        }
        assert got == by_split[split]
        ids = c.getAnnIds()
        assert set(ids) <= set(sentids)
        # pycocoevalcap loads results against these files with loadRes.
        res = [{"image_id": int(i), "caption": caps[0]} for i, caps in got.items()]
        with contextlib.redirect_stdout(io.StringIO()):
            assert len(c.loadRes(res).getImgIds()) == len(got)


def test_entities_tree_loads_with_the_grounding_parser(small_world, small_config) -> None:
    out, _ = small_world
    ent = out / "flickr30k_entities"
    doc = json.loads((out / "dataset_mini.json").read_text())
    karpathy = {str(e["cocoid"]): e for e in doc["images"]}
    for split in SPLITS:
        ids = (ent / f"{split}.txt").read_text().split()
        assert ids == [i for i, e in karpathy.items() if e["split"] == split]
    for scene in iter_scenes(small_config):
        sid = str(scene.image_id)
        sentences = parse_sentences((ent / "Sentences" / f"{sid}.txt").read_text())
        assert [s.text for s in sentences] == [
            " ".join(x["raw"].rstrip(".").replace(",", " ,").split()) + " ."
            for x in karpathy[sid]["sentences"]
        ]
        xml = (ent / "Annotations" / f"{sid}.xml").read_text()
        ET.fromstring(xml)
        ann = parse_annotation(xml)
        assert (ann.width, ann.height) == (scene.width, scene.height)
        chains = {c: str(k) for k, c in enumerate(scene.present_classes(), start=1)}
        for k, o in enumerate(scene.objects):
            x, y, w, h = scene.boxes[k]
            assert [x + 1, y + 1, x + w, y + h] in ann.boxes[chains[o.cls]]
        assert sum(len(b) for b in ann.boxes.values()) == len(scene.objects)
        for s in sentences:
            for p in s.phrases:
                assert len(p.types) == 1
                head = p.text.split()[-1].lower()
                if p.types[0] == SCENE_TYPE:
                    assert p.phrase_id in ann.scene and p.phrase_id not in ann.boxes
                else:
                    cls = class_of_word(head)
                    assert head in CLASS_WORDS[cls] and p.types[0] == ENTITY_TYPES[cls]
                    assert chains[cls] == p.phrase_id
                    words = s.text.split()
                    assert words[p.first_word_index].lower() == p.text.split()[0].lower()
    gt = build_ground_truth(ent, "test", ent / "test.txt")
    assert gt


def test_boxes_are_the_tight_boxes_of_visible_drawn_pixels(small_world, small_config) -> None:
    """Independent of the label map: render each object alone, subtract what is drawn over it."""
    out, _ = small_world
    for scene in list(iter_scenes(small_config))[:60]:
        n = len(scene.objects)
        bg, _ = render(scene.background, scene.objects, scene.width, scene.height, skip=range(n))
        alone = []
        for i in range(n):
            img, _ = render(
                scene.background,
                scene.objects,
                scene.width,
                scene.height,
                skip=[j for j in range(n) if j != i],
            )
            alone.append((img != bg).any(axis=2))
        full = np.asarray(Image.open(out / "images" / scene.split / scene.file_name))
        for i in range(n):
            above = np.zeros_like(alone[i])
            for j in range(i + 1, n):
                above |= alone[j]
            visible = alone[i] & ~above
            ys, xs = np.nonzero(visible)
            x, y, w, h = scene.boxes[i]
            assert (x, y, x + w - 1, y + h - 1) == (xs.min(), ys.min(), xs.max(), ys.max())
            assert int(visible.sum()) == scene.areas[i]
            # The written image shows the object's colour on exactly those pixels.
            assert (full[visible] == OBJECT_COLOURS[scene.objects[i].colour]).all()
        # No object pixel outside the union of boxes.
        inside = np.zeros((scene.height, scene.width), dtype=bool)
        for x, y, w, h in scene.boxes:
            inside[y : y + h, x : x + w] = True
        assert ((full != np.asarray(bg)).any(axis=2) & ~inside).sum() == 0


def test_entities_tree_loads_with_the_decorrelated_flickr_parser(small_world, small_config) -> None:
    from vlbench.tasks.decorrelated.prepare import parse_entities_boxes, parse_entities_sentence

    out, _ = small_world
    ent = out / "flickr30k_entities"
    for scene in list(iter_scenes(small_config))[:30]:
        width, height, boxes = parse_entities_boxes(
            (ent / "Annotations" / f"{scene.image_id}.xml").read_text()
        )
        assert (width, height) == (scene.width, scene.height)
        chains = {c: str(k) for k, c in enumerate(scene.present_classes(), start=1)}
        # 1-based VOC corners read back as [xmin, ymin, w, h]: our box shifted by one pixel.
        want = sorted(
            (chains[o.cls], (x + 1.0, y + 1.0, float(w), float(h)))
            for o, (x, y, w, h) in strict_zip(scene.objects, scene.boxes)
        )
        assert sorted(boxes) == want
        for line in (ent / "Sentences" / f"{scene.image_id}.txt").read_text().splitlines():
            text, phrases = parse_entities_sentence(line)
            assert "[" not in text and "/EN#" not in text
            assert {p for p, _ in phrases} >= set(chains.values())
