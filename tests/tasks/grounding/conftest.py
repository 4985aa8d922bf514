"""Small Flickr30k Entities trees in the official format, built by the tests."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from vlbench.backports import strict_zip

XML_HEAD = "<annotation><filename>{id}.jpg</filename><size><width>{w}</width><height>{h}</height><depth>3</depth></size>"


def box_object(names: list[str], box: list[int]) -> str:
    n = "".join(f"<name>{x}</name>" for x in names)
    b = "".join(f"<{k}>{v}</{k}>" for k, v in strict_zip(("xmin", "ymin", "xmax", "ymax"), box))
    return f"<object>{n}<bndbox>{b}</bndbox></object>"


def flag_object(name: str, scene: int, nobndbox: int) -> str:
    return f"<object><name>{name}</name><scene>{scene}</scene><nobndbox>{nobndbox}</nobndbox></object>"


def write_image(tree: Path, image_id: str, w: int, h: int, objects: list[str], lines: list[str]) -> None:
    (tree / "Annotations").mkdir(parents=True, exist_ok=True)
    (tree / "Sentences").mkdir(parents=True, exist_ok=True)
    xml = XML_HEAD.format(id=image_id, w=w, h=h) + "".join(objects) + "</annotation>"
    (tree / "Annotations" / f"{image_id}.xml").write_text(xml)
    (tree / "Sentences" / f"{image_id}.txt").write_text("\n".join(lines) + "\n")


def write_hand_tree(tree: Path) -> Path:
    """The hand-computed fixture (see test_task.py for the expected recalls)."""
    write_image(
        tree, "100", 200, 100,
        [
            box_object(["1"], [10, 10, 50, 50]),
            box_object(["1"], [100, 10, 140, 50]),
            box_object(["2", "3"], [60, 60, 100, 100]),  # one box shared by chains 2 and 3
            flag_object("4", 0, 1),  # nobndbox chain
            flag_object("5", 1, 0),  # scene chain without a box
            box_object(["6"], [1, 1, 200, 100]),
        ],
        [
            "[/EN#1/people Two men] stand near [/EN#2/animals/other a dog] and [/EN#4/other something] .",
            "[/EN#0/notvisual Nobody] is in [/EN#5/scene the park] .",
            "[/EN#1/people A man] and [/EN#1/people another man] with [/EN#3/animals the pet] in "
            "[/EN#6/scene the field] .",
        ],
    )
    write_image(
        tree, "200", 100, 100,
        [box_object(["7"], [20, 20, 60, 60])],
        ["[/EN#7/vehicles A car] .", "A plain caption ."],
    )
    (tree / "test.txt").write_text("100\n200\n")
    (tree / "val.txt").write_text("200\n")
    (tree / "train.txt").write_text("")
    return tree


TYPES = ["people", "clothing", "bodyparts", "animals", "vehicles", "instruments", "scene", "other"]


def write_random_tree(tree: Path, n_images: int, seed: int) -> list[str]:
    """A random tree exercising multi-box chains, shared boxes, flags and multi-type phrases."""
    rng = random.Random(seed)
    ids = []
    for i in range(n_images):
        image_id = str(1000 + i)
        ids.append(image_id)
        w, h = rng.randint(50, 500), rng.randint(50, 500)
        objects, chains = [], [str(10 * i + c) for c in range(1, rng.randint(2, 7))]
        boxed = []
        for c in chains:
            kind = rng.random()
            if kind < 0.15:
                objects.append(flag_object(c, int(rng.random() < 0.5), 1))
                continue
            boxed.append(c)
            for _ in range(rng.choice([1, 1, 2, 3])):
                x1, y1 = rng.randint(1, w - 5), rng.randint(1, h - 5)
                x2, y2 = rng.randint(x1 + 1, w), rng.randint(y1 + 1, h)
                names = [c] + ([rng.choice(chains)] if rng.random() < 0.1 else [])
                objects.append(box_object(sorted(set(names)), [x1, y1, x2, y2]))
        lines = []
        for _ in range(5):
            words = []
            for _ in range(rng.randint(0, 4)):
                words += ["the"] * rng.randint(0, 2)
                c = rng.choice(chains + ["0"])
                types = "notvisual" if c == "0" else "/".join(rng.sample(TYPES, rng.choice([1, 1, 2])))
                n = rng.randint(1, 3)
                words.append(f"[/EN#{c}/{types} " + " ".join(["w"] * n) + "]")
            lines.append(" ".join(words + ["."]))
        write_image(tree, image_id, w, h, objects, lines)
    (tree / "test.txt").write_text("\n".join(ids) + "\n")
    return ids


@pytest.fixture
def hand_tree(tmp_path: Path) -> Path:
    return write_hand_tree(tmp_path / "f30k")


@pytest.fixture
def random_tree():
    return write_random_tree


@pytest.fixture(scope="session")
def hand_ground_truth(tmp_path_factory):
    import json

    from vlbench.tasks.grounding.loaders import build_ground_truth, ground_truth_from_doc

    tree = write_hand_tree(tmp_path_factory.mktemp("hand") / "f30k")
    return ground_truth_from_doc(json.loads(json.dumps(build_ground_truth(tree, "test"))))
