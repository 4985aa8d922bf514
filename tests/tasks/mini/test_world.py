"""The world's vocabulary: no shared or substring-trap words, complete entity types, pairs."""

from __future__ import annotations

import numpy as np

from vlbench.tasks.mini.build import iter_scenes, scene_captions
from vlbench.tasks.mini.captions import COUNT_WORDS
from vlbench.tasks.mini.scene import BACKGROUND_COLOURS, OBJECT_COLOURS
from vlbench.tasks.mini.world import (
    CLASS_WORDS,
    CLASSES,
    ENTITY_TYPES,
    PARTNER_PAIRS,
    SCENE_TYPE,
    class_of_word,
    partner_of,
)


def all_words() -> list[tuple[str, str]]:
    return [(w, c) for c, ws in CLASS_WORDS.items() for w in ws]


def test_classes_have_words_and_types() -> None:
    assert len(CLASSES) == len(set(CLASSES)) == 10
    assert set(CLASS_WORDS) == set(CLASSES) == set(ENTITY_TYPES)
    for c in CLASSES:
        words = CLASS_WORDS[c]
        assert len(words) % 2 == 0 and c in words, c  # (singular, plural) pairs, name included
    assert SCENE_TYPE not in ENTITY_TYPES.values()
    assert 2 <= len(set(ENTITY_TYPES.values())) < len(CLASSES)


def test_no_word_is_shared_or_a_substring_of_another_class_word() -> None:
    for w, c in all_words():
        assert w == w.lower() and " " not in w
        assert class_of_word(w) == c
        for w2, c2 in all_words():
            if c2 != c:
                assert w not in w2, (w, w2)


def test_partner_pairs_are_disjoint_classes() -> None:
    flat = [c for pair in PARTNER_PAIRS for c in pair]
    assert len(flat) == len(set(flat)) and set(flat) <= set(CLASSES)
    for a, b in PARTNER_PAIRS:
        assert partner_of(a) == b and partner_of(b) == a
    assert any(partner_of(c) is None for c in CLASSES)


def test_caption_words_outside_phrases_never_contain_a_class_word(small_config) -> None:
    class_words = [w for w, _ in all_words()]
    other = set(COUNT_WORDS.values()) | set(OBJECT_COLOURS)
    other |= {w for name in BACKGROUND_COLOURS for w in name.split()}
    seen_classes: set[str] = set()
    for scene in iter_scenes(small_config):
        present = set(scene.present_classes())
        for cap in scene_captions(small_config, scene):
            for p in cap.phrases:
                other.update(p.words[:-1])
                if p.cls is not None:
                    # The head noun names the phrase's class, and only classes in the image.
                    assert class_of_word(p.words[-1]) == p.cls and p.cls in present
                    seen_classes.add(p.cls)
            other.update(w for s in cap.segments if isinstance(s, str) for w in s.split())
    other -= {w for w, _ in all_words()}
    assert other
    for w in other:
        assert not any(cw in w for cw in class_words), w
    assert len(seen_classes) == len(CLASSES)


def test_every_caption_names_every_class_of_its_image(small_config) -> None:
    for scene in list(iter_scenes(small_config))[:30]:
        caps = scene_captions(small_config, scene)
        assert len(caps) == small_config.captions_per_image
        assert len({c.raw for c in caps}) == len(caps)
        for cap in caps:
            named = {class_of_word(t) for t in cap.tokens} - {None}
            assert named == set(scene.present_classes()), cap.raw
    assert np.all(np.diff([s.image_id for s in iter_scenes(small_config)]) == 1)
