"""D' captions: the removed classes' noun phrases deleted, or a prompt of the classes that remain."""

from __future__ import annotations

from pathlib import Path

from vlbench.baselines.synthetic.build import plan
from vlbench.baselines.synthetic.captions import (
    ClassMentions,
    remove_noun_phrases,
    synthetic_caption,
)
from vlbench.baselines.synthetic.sources import SourceImage
from vlbench.tasks.decorrelated.mentions import coco_matcher
from vlbench.tasks.decorrelated.prepare import mini_matcher
from vlbench.tasks.decorrelated.removal import Removal


def test_noun_phrase_captions_drop_the_removed_class_and_keep_a_present_one(sources: list[SourceImage]) -> None:
    mentions = ClassMentions(mini_matcher())
    planned = plan(sources, ratio=0.15, captions="noun-phrase", seed=0)
    for p in planned:
        named = mentions(p.caption)
        assert not named & set(p.removal.removed_classes), p.caption
        assert named & set(p.removal.present_classes), p.caption
        assert p.caption[0].isupper() and p.caption.endswith(".") and ",." not in p.caption
        assert " and and " not in p.caption and not p.caption.rstrip(".").endswith((" and", " of", ","))


def test_prompt_captions_list_only_present_classes(sources: list[SourceImage]) -> None:
    mentions = ClassMentions(mini_matcher())
    for p in plan(sources, ratio=0.05, captions="prompt", seed=0):
        assert p.caption.startswith("a photo of ")
        assert mentions(p.caption) == set(p.removal.present_classes)


def test_noun_phrase_removal_on_coco_style_captions() -> None:
    # Without annotated spans (COCO) the class-word matcher finds the phrase, grown over its modifiers.
    assert remove_noun_phrases("Two dogs fighting over a frisbee.", ["frisbee"], True) == "Two dogs fighting."
    assert remove_noun_phrases("A heart, a moon and an arrow.", ["a moon"], False) == "A heart and an arrow."
    assert remove_noun_phrases("A heart, a moon and an arrow.", ["an arrow"], False) == "A heart and a moon."
    assert remove_noun_phrases("A small brown dog next to a cat", ["dog"], True) == "A cat"
    src = SourceImage("1", Path("x.jpg"), 100, 100, ["A man throwing a red frisbee to his dog.", "A frisbee."],
                      [("person", (0, 0, 40, 90)), ("frisbee", (50, 10, 10, 5)), ("dog", (60, 60, 30, 30))])
    removal = Removal("frisbee", ("frisbee",), ("dog", "person"), ((50, 10, 10, 5),), 0.005)
    mentions = ClassMentions(coco_matcher())
    assert synthetic_caption(src, 0, removal, mentions) == "A man throwing to his dog."
    assert synthetic_caption(src, 1, removal, mentions) is None  # nothing present would remain named
