"""The v3 world as pre-registered (tasks/mini/README.md): the cue -> dependent shortcut, a twin
with the same class statistics, smaller dependents, shape-only captions, one query per image."""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np

from tests.conftest import deviation_expected
from vlbench.tasks.decorrelated.prepare import prepare_mini
from vlbench.tasks.mini import write_mini_benchmark
from vlbench.tasks.mini.build import (
    CUE_DEPENDENT,
    iter_pool,
    iter_scenes,
    iter_unbiased_train,
    scene_captions,
    unbiased_train_captions,
    v3_config,
)
from vlbench.tasks.mini.queries import choose_queries
from vlbench.tasks.mini.scene import BACKGROUND_COLOURS, OBJECT_COLOURS

CUES = {c for c, _ in CUE_DEPENDENT}
DEPENDENTS = {d for _, d in CUE_DEPENDENT}
DEPENDENT_OF = dict(CUE_DEPENDENT)


@cache
def worlds() -> tuple[tuple, tuple]:
    """Biased train and its twin, enlarged for tight statistics."""
    config = replace(v3_config(), n_train=3000, n_val=0, n_test=0)
    train = tuple(s for s in iter_scenes(config) if s.split == "train")
    return train, tuple(iter_unbiased_train(config))


def test_dependents_never_appear_without_their_cue_and_follow_it_at_095() -> None:
    train, _ = worlds()
    with_room = brought = 0
    for s in train:
        present = set(s.present_classes())
        for d in DEPENDENTS & present:
            assert any(DEPENDENT_OF[c] == d and c in present for c in CUES), s
        assert not (len(present) == 1 and present & DEPENDENTS)  # no single-class dependent image
        for c in CUES & present:
            if len(s.objects) >= 2:
                with_room += 1
                brought += DEPENDENT_OF[c] in present
    rate = brought / with_room
    # a cue can be the last class drawn only when there was room for its coin: rate <= 0.95
    assert 0.85 <= rate <= 0.95 + 4 * math.sqrt(0.95 * 0.05 / with_room)


def test_the_twin_has_the_same_class_statistics_without_the_cue_specific_link() -> None:
    train, twin = worlds()

    def stats(scenes):
        per_image = Counter(len(s.present_classes()) for s in scenes)
        freq = Counter(c for s in scenes for c in s.present_classes())
        return per_image, freq

    (pi_a, fr_a), (pi_b, fr_b) = stats(train), stats(twin)
    n = len(train)
    for k in set(pi_a) | set(pi_b):
        p = (pi_a[k] + pi_b[k]) / (2 * n)
        assert abs(pi_a[k] - pi_b[k]) / n <= 4 * math.sqrt(2 * p * (1 - p) / n) + 1e-9, k
    for c in set(fr_a) | set(fr_b):
        p = (fr_a[c] + fr_b[c]) / (2 * n)
        assert abs(fr_a[c] - fr_b[c]) / n <= 4 * math.sqrt(2 * p * (1 - p) / n) + 1e-9, c

    def own_rate(scenes):  # images with two or more objects (a cue may appear alone)
        hits = total = 0
        for s in scenes:
            if len(s.objects) < 2:
                continue
            present = set(s.present_classes())
            for c in CUES & present:
                total += 1
                hits += DEPENDENT_OF[c] in present
        return hits / total

    assert own_rate(train) > 0.85 and own_rate(twin) < 0.5


def test_dependents_are_drawn_smaller_than_their_cues() -> None:
    train, _ = worlds()
    extent: dict[str, list[float]] = {}
    for s in train:
        for o in s.objects:
            extent.setdefault(o.cls, []).append(o.sx + o.sy)
    for cue, dep in CUE_DEPENDENT:
        ratio = np.median(extent[dep]) / np.median(extent[cue])
        assert 0.5 < ratio < 0.7, (cue, dep, ratio)


def test_captions_name_shapes_counts_and_relations_only() -> None:
    config = replace(v3_config(), n_train=200, n_val=0, n_test=0)
    colour_words = {w for name in [*OBJECT_COLOURS, *BACKGROUND_COLOURS] for w in name.split()}
    colour_words |= {"background", "gradient", "noisy", "speckled", "grainy"}
    for s in iter_scenes(config):
        caps = scene_captions(config, s)
        assert len({c.raw for c in caps}) == 5
        for c in caps:
            assert not set(c.tokens) & colour_words, c.raw
            assert {p.cls for p in c.phrases if p.cls} == set(s.present_classes())
    s = next(iter(iter_unbiased_train(config)))
    assert not set(unbiased_train_captions(config, s)[0].tokens) & colour_words


def test_one_query_per_pool_image_and_partner_means_a_removed_dependent() -> None:
    config = v3_config(n_pool=3000)
    queries = choose_queries(list(iter_pool(config)), pairs=config.pairs(), directed=True, one_per_image=True)
    assert queries and len(queries) % 2 == 0
    images = [q.scene.image_id for q in queries]
    assert len(images) == len(set(images))
    by_id = {q.id: q for q in queries}
    for q in queries:
        m = by_id[q.matched_to]
        assert m.matched_to == q.id and m.group != q.group
        assert m.removal.present_classes == q.removal.present_classes
        removes_dependent = any(DEPENDENT_OF[c] in q.removal.removed_classes
                                for c in CUES & set(q.removal.present_classes))
        assert removes_dependent == (q.group == "partner")
        if q.group == "control":  # a control removes free classes only: no cue, no dependent
            assert not (CUES | set(DEPENDENT_OF.values())) & set(q.removal.removed_classes)


def test_prepare_keeps_the_matched_pairs_and_the_direction(tmp_path: Path) -> None:
    config = replace(v3_config(n_pool=1500), n_train=30, n_val=5, n_test=20)
    write_mini_benchmark(tmp_path, config=config, images=False)
    doc = json.loads((tmp_path / "decorrelated" / "queries.json").read_text())
    assert doc["version"] == 2 and doc["params"]["directed"] is True
    with deviation_expected():  # a toy source, forced: the warning is expected
        manifest = prepare_mini("mini-decorrelated", tmp_path, force=True)  # a smaller world than shipped
    assert manifest["params"]["directed"] is True
    assert manifest["params"]["partner_pairs"] == [list(p) for p in CUE_DEPENDENT]
    ids = {q["id"] for q in manifest["queries"]}
    assert manifest["queries"] and all(q["matched_query_id"] in ids for q in manifest["queries"])
