"""Class mentions of captions: plurals, multi-word names, ambiguous words, both kinds of class."""

from __future__ import annotations

import pytest

from vlbench.tasks.decorrelated.mentions import (
    COCO_CLASSES,
    MentionMatcher,
    coco_class_words,
    coco_matcher,
    plural,
    tokens,
)

M = coco_matcher()


def names(text: str) -> set[str]:
    return {M.classes[i] for i in M.mentions(text)}


def test_eighty_classes_each_named_by_itself() -> None:
    table = coco_class_words()
    assert len(COCO_CLASSES) == 80 == len(table)
    for cls in COCO_CLASSES:
        assert cls in table[cls]
        assert names(f"there is a {cls} here") >= {cls}


@pytest.mark.parametrize(
    ("word", "expected"),
    [("dog", "dogs"), ("bus", "buses"), ("glass", "glasses"), ("knife", "knives"), ("puppy", "puppies"),
     ("person", "people"), ("sheep", "sheep"), ("traffic light", "traffic lights"), ("wine glass", "wine glasses"),
     ("boys", "boys"), ("toy", "toys")],
)  # fmt: skip
def test_plural(word: str, expected: str) -> None:
    assert plural(word) == expected


@pytest.mark.parametrize(
    ("caption", "expected"),
    [
        ("Two dogs play in the park.", {"dog"}),
        ("Some puppies and a kitten.", {"dog", "cat"}),
        ("Children near traffic lights.", {"person", "traffic light"}),
        ("A TEDDY BEAR on a bed", {"teddy bear", "bed"}),
        ("Knives and forks on the dining tables", {"knife", "fork", "dining table"}),
        ("people with wine glasses", {"person", "wine glass"}),
    ],
)
def test_plurals_and_multi_word_names(caption: str, expected: set[str]) -> None:
    assert names(caption) == expected


def test_hot_dog_is_not_a_dog() -> None:
    assert names("A man eating a hot dog.") == {"person", "hot dog"}
    assert names("A dog eating a hot dog.") == {"dog", "hot dog"}
    assert names("hot dogs and dogs") == {"hot dog", "dog"}


def test_board_inside_a_compound_word_is_not_board() -> None:
    # "skateboard" is one token: it names skateboard only, never surfboard or snowboard.
    assert names("A boy riding a skateboard.") == {"person", "skateboard"}
    # A bare "board" is listed for all three board classes in Table 4: it mentions all of them.
    assert names("A boy on a board.") == {"person", "skateboard", "surfboard", "snowboard"}


def test_other_class_names_are_not_synonyms() -> None:
    # Table 4 lists "truck" under car and "bear" under teddy bear; both are COCO classes themselves.
    assert names("a truck parked on a street") == {"truck"}
    assert names("a brown bear in the woods") == {"bear"}
    assert names("a van and a truck") == {"car", "truck"}


def test_words_do_not_match_inside_other_words() -> None:
    assert names("a catalogue of scattered items") == set()  # cat, cattle
    assert names("a bench in a cattle field") == {"bench", "cow"}


def test_caption_with_present_and_removed_class() -> None:
    # Both are reported; the metric (rule 1) then makes the caption incorrect for a dog-removed query.
    assert names("A man throws a frisbee to his dog.") == {"person", "frisbee", "dog"}


def test_tokens_split_on_punctuation_and_digits() -> None:
    assert tokens("A dog's frisbee, 2 cats-and-bikes!") == ["a", "dog", "s", "frisbee", "cats", "and", "bikes"]


def test_custom_table_longest_match_and_shared_words() -> None:
    m = MentionMatcher(("a", "b", "c"), {"a": ("red ball",), "b": ("ball", "thing"), "c": ("thing",)})
    assert [(text, sorted(cls)) for text, cls in m.spans("a red ball and a ball and a thing")] == [
        ("red ball", [0]),
        ("ball", [1]),
        ("thing", [1, 2]),
    ]
