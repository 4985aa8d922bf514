from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pytest

from tests.tasks.grounding.conftest import box_object, write_image
from vlbench.tasks.flickr30k_entities import _parse_etree, parse_sentences
from vlbench.tasks.grounding.loaders import (
    GT_FORMAT,
    GT_FORMAT_VERSION,
    build_ground_truth,
    ground_truth_from_doc,
)
from vlbench.tasks.grounding.protocol import TYPES


def test_ground_truth_filtering_as_mdetr(hand_tree):
    doc = json.loads(json.dumps(build_ground_truth(hand_tree, "test")))
    gt = ground_truth_from_doc(doc)
    assert gt.n_phrases == 7
    # Sentence 1 of image 100 (notvisual + box-less scene chain) and the phrase-less caption of
    # image 200 are dropped; chain 1 appears twice in sentence 2.
    assert {k: sorted(v) for k, v in gt.lookup["100"].items()} == {
        "0": ["0", "4"], "2": ["0", "3", "6", "9"]
    }
    assert list(gt.lookup["200"]) == ["0"]
    assert gt.n_sentences_scored == 3
    assert gt.ungradable["100"] == {"0": {"7"}, "1": {"0", "3"}}
    assert gt.n_sentences == [3, 2]
    chain1 = gt.chain_ids.index("1")
    np.testing.assert_array_equal(gt.merged[chain1], [10, 10, 140, 50])
    multi = gt.lookup["100"]["0"]["4"]
    assert gt.p_types[multi] == ["animals", "other"]
    assert gt.type_member[multi].sum() == 2


# --- the one-pass builder against the plain reading it replaced ---------------------------------

REALDATA = Path(os.environ.get("VLBENCH_REALDATA", Path(__file__).resolve().parents[4] / "shared" / "realdata"))
ENTITIES = REALDATA / "flickr30k_entities"


def plain_ground_truth(tree: Path, split: str, types: tuple[str, ...] = TYPES) -> dict:
    """The document read the plain way: each file through pathlib, the XML through ElementTree,
    the captions into Sentence objects, then the derived indexes in passes over the rows."""
    image_ids = [i for i in (line.strip() for line in (tree / f"{split}.txt").read_text().splitlines()) if i]
    images: dict[str, list] = {"id": [], "width": [], "height": [], "n_sentences": []}
    phrases: dict[str, list] = {"image": [], "sentence": [], "first_word": [], "chain": [], "types": [], "text": []}
    chains: dict[str, list] = {"image": [], "id": [], "box_start": [], "box_count": []}
    ungradable: dict[str, list] = {"image": [], "sentence": [], "first_word": []}
    boxes: list[int] = []
    for ii, image_id in enumerate(image_ids):
        ann = _parse_etree((tree / "Annotations" / f"{image_id}.xml").read_bytes())
        sentences = parse_sentences((tree / "Sentences" / f"{image_id}.txt").read_text(encoding="utf-8"))
        for key, value in zip(images, (image_id, ann.width, ann.height, len(sentences))):
            images[key].append(value)
        chain_index = {}
        for chain_id, chain_boxes in ann.boxes.items():
            chain_index[chain_id] = len(chains["id"])
            for key, value in zip(chains, (ii, chain_id, len(boxes) // 4, len(chain_boxes))):
                chains[key].append(value)
            for box in chain_boxes:
                boxes.extend(box)
        for si, sentence in enumerate(sentences):
            for p in sentence.phrases:
                if p.phrase_id in chain_index:
                    values = (ii, si, p.first_word_index, chain_index[p.phrase_id], list(p.types), p.text)
                    for key, value in zip(phrases, values):
                        phrases[key].append(value)
                else:
                    for key, value in zip(ungradable, (ii, si, p.first_word_index)):
                        ungradable[key].append(value)
    rows = list(zip(phrases["image"], phrases["sentence"], phrases["first_word"]))
    lookup: dict = {i: {} for i in image_ids}
    for row, (ii, si, fw) in enumerate(rows):
        lookup[image_ids[ii]].setdefault(str(si), {})[str(fw)] = row
    ungradable_index: dict = {i: {} for i in image_ids}
    for ii, si, fw in zip(ungradable["image"], ungradable["sentence"], ungradable["first_word"]):
        ungradable_index[image_ids[ii]].setdefault(str(si), []).append(str(fw))
    phrases["type_mask"] = [sum(1 << j for j, t in enumerate(types) if t in pt) for pt in phrases["types"]]
    phrases["type_repeats"] = [[row, j, pt.count(t) - 1] for row, pt in enumerate(phrases["types"])
                               for j, t in enumerate(types) if pt.count(t) > 1]
    phrases["id"] = [f"{image_ids[ii]}/{si}/{fw}" for ii, si, fw in rows]
    return {"format": GT_FORMAT, "types": list(types), "lookup": lookup, "ungradable_index": ungradable_index,
            "format_version": GT_FORMAT_VERSION, "split": split,
            "coordinates": "raw XML integers (1-based), as MDETR's evaluator", "images": images,
            "chains": chains, "boxes": boxes, "phrases": phrases, "ungradable": ungradable}


def serialised(doc: dict) -> tuple[bytes, bytes]:
    """The document as the compat cache writes it (insertion order) and as `prepare` does (sorted)."""
    return (json.dumps(doc, separators=(",", ":")).encode(),
            json.dumps(doc, sort_keys=True, separators=(",", ":")).encode())


def test_the_builder_equals_the_plain_reading_on_fixture_trees(tmp_path, hand_tree, random_tree):
    trees = [(hand_tree, "test"), (hand_tree, "val")]
    for seed in range(4):
        tree = tmp_path / f"random{seed}"
        random_tree(tree, 30, seed=seed)
        trees.append((tree, "test"))
    # an image listed twice, CRLF and CR captions, a document off the release's shape, repeated types
    odd = tmp_path / "odd"
    random_tree(odd, 6, seed=9)
    write_image(odd, "77", 90, 90, [box_object(["1", "2"], [1, 2, 30, 40]), box_object(["1"], [5, 5, 9, 9])],
                ["[/EN#1/people/people/other A man] and [/EN#2/people/clothing/clothing a hat] [/EN#3/other x]",
                 "", "[ a] [/EN#2/people b] [/EN#1/people never closed"])
    ids = (odd / "test.txt").read_text().split()
    (odd / "test.txt").write_text("\n".join([*ids, "77", ids[2], ""]) + "\n\n")
    for image_id, newline in ((ids[0], b"\r\n"), (ids[3], b"\r")):
        sentences = odd / "Sentences" / f"{image_id}.txt"
        sentences.write_bytes(sentences.read_bytes().replace(b"\n", newline))
    xml = odd / "Annotations" / f"{ids[1]}.xml"
    xml.write_text('<?xml version="1.0"?>\n' + xml.read_text().replace("<object>", "<object  >"))
    trees.append((odd, "test"))
    for tree, split in trees:
        assert serialised(build_ground_truth(tree, split)) == serialised(plain_ground_truth(tree, split)), tree
    mini_types = ("polygons", "curves")
    assert serialised(build_ground_truth(hand_tree, "test", types=mini_types)) == \
        serialised(plain_ground_truth(hand_tree, "test", mini_types))


@pytest.fixture(scope="module")
def real_tree(tmp_path_factory):
    if not (ENTITIES / "sentences_annotations_test_val.tar.gz").is_file():
        pytest.skip(f"real data not found in {REALDATA}")
    tree = tmp_path_factory.mktemp("entities")
    with tarfile.open(ENTITIES / "sentences_annotations_test_val.tar.gz") as tar:
        tar.extractall(tree, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(tree)
    for split in ("test", "val"):
        shutil.copy(ENTITIES / f"{split}.txt", tree / f"{split}.txt")
    return tree


# sha256 of the real documents as the plain reading wrote them (insertion order, sorted keys)
REAL_DOCUMENTS = {
    "test": ("b46004dc2308147865da7a33e8feac5d5bc95ee7fac8f00a157a27420c1314a5",
             "7bf376bb26054028371a8bf39b83b0343341e46ce57bce4eb51742e1d3f4c42b"),
    "val": ("d398a599209bc5be131706d3423140b8f9538883218bcef4896e6fb88e487e23",
            "a83f3c6921ec48f6df3b34b64c678b4ae55906da380d02e72642c37c013900d9"),
}


@pytest.mark.parametrize("split", ["test", "val"])
def test_the_builder_equals_the_plain_reading_on_the_real_sets(real_tree, split):
    built = serialised(build_ground_truth(real_tree, split))
    assert built == serialised(plain_ground_truth(real_tree, split))
    assert tuple(hashlib.sha256(b).hexdigest() for b in built) == REAL_DOCUMENTS[split]
