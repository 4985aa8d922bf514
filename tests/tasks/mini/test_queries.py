"""Decorrelated queries: tau1..tau3 checked independently, groups matched, images exact."""

from __future__ import annotations

import json

import numpy as np
from PIL import Image

from vlbench.backports import strict_zip
from vlbench.tasks.decorrelated.removal import plan_removal
from vlbench.tasks.mini.build import MiniConfig, iter_pool, iter_scenes
from vlbench.tasks.mini.queries import choose_queries, scene_objects
from vlbench.tasks.mini.render import render_scene
from vlbench.tasks.mini.world import PARTNER_PAIRS, partner_of

TAU1, TAU2, TAU3 = 0.4, 0.8, 0.7


def union(boxes, width: int, height: int) -> np.ndarray:
    m = np.zeros((height, width), dtype=bool)
    for x, y, w, h in boxes:
        m[int(y) : int(y + h), int(x) : int(x + w)] = True
    return m


def check_rules(scene, removed: set[str], present: set[str]) -> None:
    by_class: dict[str, list] = {}
    for o, b in strict_zip(scene.objects, scene.boxes):
        by_class.setdefault(o.cls, []).append(b)
    assert removed and present and removed | present == set(by_class) and not removed & present
    erased = union([b for c in removed for b in by_class[c]], scene.width, scene.height)
    assert erased.sum() / (scene.width * scene.height) < TAU3
    for c in present:
        mc = union(by_class[c], scene.width, scene.height)
        assert (erased & mc).sum() / mc.sum() < TAU1
    # Removed classes beyond the target are those mostly covered by some removed class's boxes.
    if len(removed) > 1:
        covered = [
            c
            for c in removed
            if any(
                (
                    union(by_class[t], scene.width, scene.height)
                    & union(by_class[c], scene.width, scene.height)
                ).sum()
                / union(by_class[c], scene.width, scene.height).sum()
                > TAU2
                for t in removed
                if t != c
            )
        ]
        assert len(covered) >= len(removed) - 1


def test_every_candidate_of_a_full_size_test_split_obeys_the_rules() -> None:
    cfg = MiniConfig(n_train=0, n_val=0, n_test=250)
    scenes = [s for s in iter_scenes(cfg) if s.split == "test"]
    queries = choose_queries(scenes)
    groups = [q.group for q in queries]
    # Val/test draw partners like any other class (balanced), so both-partner images are rarer
    # than in train: 17 matched pairs on the default 250-image test split.
    assert groups.count("partner") == groups.count("control") >= 15
    by_id = {q.id: q for q in queries}
    assert len({(q.scene.image_id, q.removal.removed_classes) for q in queries}) == len(queries)
    for q in queries:
        removed, present = set(q.removal.removed_classes), set(q.removal.present_classes)
        check_rules(q.scene, removed, present)
        link = any(partner_of(c) in removed for c in present)
        assert link == (q.group == "partner")
        other = by_id[q.matched_to]
        assert other.matched_to == q.id and other.group != q.group
        assert other.removal.present_classes == q.removal.present_classes


def test_the_rules_bite_on_the_test_split() -> None:
    """Nested objects make tau2 removals (a covered class goes too); some removals are refused.
    (1,000 test images: the balanced 250-image split happens to refuse none.)"""
    cfg = MiniConfig(n_train=0, n_val=0, n_test=1000)
    multi = refused = 0
    for s in iter_scenes(cfg):
        objects = scene_objects(s)
        classes = sorted({c for c, _ in objects})
        if len(classes) < 2:
            continue
        for c in classes:
            r = plan_removal(objects, s.width, s.height, c)
            if r is None:
                refused += 1
            else:
                check_rules(s, set(r.removed_classes), set(r.present_classes))
                multi += len(r.removed_classes) > 1
    assert multi > 0 and refused > 0


def test_manifest_and_exact_images(small_world, small_config) -> None:
    out, _ = small_world
    doc = json.loads((out / "decorrelated" / "queries.json").read_text())
    assert doc["format"] == "vlbench-mini-removals" and doc["version"] == 1
    assert doc["params"] == {"tau1": TAU1, "tau2": TAU2, "tau3": TAU3, "fill": "exact"}
    assert [tuple(p) for p in doc["partner_pairs"]] == list(PARTNER_PAIRS)
    assert doc["queries"], "the small world should have at least one matched pair"
    scenes = {s.image_id: s for s in iter_pool(small_config)}
    first_pool_id = 1 + sum(s.count for s in small_config.splits())
    for q in doc["queries"]:
        scene = scenes[q["source_image_id"]]
        assert scene.split == "pool" and scene.image_id >= first_pool_id and q["group"] in ("partner", "control")
        removed = set(q["removed_classes"])
        check_rules(scene, removed, set(q["present_classes"]))
        want = sorted(
            b for o, b in strict_zip(scene.objects, scene.boxes) if o.cls in removed
        )
        assert sorted(tuple(b) for b in q["removed_boxes"]) == [
            tuple(float(v) for v in b) for b in want
        ]
        got = np.asarray(Image.open(out / "decorrelated" / "images" / q["file_name"]))
        source = render_scene(scene)
        skip = [i for i, o in enumerate(scene.objects) if o.cls in removed]
        assert (got == render_scene(scene, skip=skip)).all()
        # Only pixels inside the removed boxes change, and every removed object's pixels do.
        changed = (got != source).any(axis=2)
        inside = union(want, scene.width, scene.height)
        assert not (changed & ~inside).any()
        assert changed.sum() >= sum(scene.areas[i] for i in skip) * 0.5
