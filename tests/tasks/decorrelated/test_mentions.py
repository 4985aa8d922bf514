"""Class mentions of captions: plurals, multi-word names, ambiguous words, both kinds of class."""

from __future__ import annotations

import pytest

from vlbench.tasks.decorrelated.mentions import (
    COCO_CLASSES,
    MentionMatcher,
    coco_class_words,
    coco_matcher,
    phrase_runs,
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


@pytest.mark.parametrize(
    ("caption", "expected"),
    [
        # the two bugs of coco-5k-decorrelated 1.0: a phrase across a sentence end, across a comma
        ("The grill is hot. Dog sleeps on the porch.", {"dog"}),
        ("A bottle of red wine, glass of water.", {"bottle", "wine glass", "cup"}),  # wine; glass
        # every mark that ends a phrase, between the two words of a two-word class
        ("the grill is hot; dog on the porch", {"dog"}),
        ("it is hot: dog days", {"dog"}),
        ("so hot! dog asleep", {"dog"}),
        ("too hot? dog says yes", {"dog"}),
        ('a "hot" dog', {"dog"}),
        ("a 'hot' dog", {"dog"}),
        ("the \u201chot\u201d dog", {"dog"}),
        ("a hot (dog) bun", {"dog"}),
        ("a hot [dog]", {"dog"}),
        ("hot {dog}", {"dog"}),
        ("it is hot - dog in the shade", {"dog"}),  # a spaced hyphen is a dash
        ("it is hot -- dog in the shade", {"dog"}),
        ("it is hot--dog in the shade", {"dog"}),
        ("it is hot \u2013 dog in the shade", {"dog"}),
        ("it is hot\u2014dog in the shade", {"dog"}),
        ("so hot... dog asleep", {"dog"}),
        ("so hot\u2026dog asleep", {"dog"}),
        ("hot/dog", {"dog"}),
        ("hot & dog", {"dog"}),
        ("hot 2 dog", {"dog"}),
        ("the stop, sign", {"stop sign"}),  # "sign" alone is a stop sign word (Table 4)
        ("a traffic. light", {"traffic light"}),  # "traffic" alone is a traffic light word
        ("a teddy, bear", {"teddy bear", "bear"}),
        ("a tennis; racket", {"tennis racket"}),  # "racket" alone is a tennis racket word
        ("a cell. phone", {"cell phone"}),  # "phone" alone
        ("the wine. glass", {"wine glass", "cup"}),
        # what joins the words of a phrase: spaces, tabs, a line break (COCO captions wrap lines
        # inside phrases: "rolls of\nToilet tissue"), a hyphen inside a word
        ("a hot dog", {"hot dog"}),
        ("a hot   dog", {"hot dog"}),
        ("a hot\tdog", {"hot dog"}),
        ("a hot\ndog", {"hot dog"}),
        ("a hot \r\n dog", {"hot dog"}),
        ("a hot\u00a0dog", {"hot dog"}),
        ("a hot-dog stand", {"hot dog"}),
        ("a hot\u2010dog stand", {"hot dog"}),
        ("a teddy-bear", {"teddy bear"}),
        ("a fire-hydrant", {"fire hydrant"}),
        ("two wine-glasses", {"wine glass"}),
        ("A Stop Sign.", {"stop sign"}),
        ("a hot dog, a dog.", {"hot dog", "dog"}),
        ("traffic lights; stop signs", {"traffic light", "stop sign"}),
        # punctuation at either end of a phrase does not stop it
        ('"hot dog"', {"hot dog"}),
        ("(teddy bear)", {"teddy bear"}),
        ("a man's hot dog.", {"person", "hot dog"}),
        ("rolls of\nToilet tissue in a bathroom", {"toilet"}),
    ],
)
def test_a_class_phrase_never_spans_punctuation(caption: str, expected: set[str]) -> None:
    assert names(caption) == expected


def test_phrase_runs_split_at_punctuation_only() -> None:
    assert phrase_runs("The grill is hot. Dog sleeps, on\nthe porch-swing; 2 cats!") == [
        ["the", "grill", "is", "hot"], ["dog", "sleeps"], ["on", "the", "porch", "swing"], ["cats"]]
    assert phrase_runs("") == [] and phrase_runs("...") == [] and phrase_runs("dog") == [["dog"]]
    # every token is in exactly one run, in order: the runs are `tokens` cut at punctuation
    text = 'A bottle of red wine, glass of water. "Teddy-bear" (a toy) & a hot-dog... 3 dogs\u2014cats'
    assert [t for run in phrase_runs(text) for t in run] == tokens(text)


def test_spans_keep_their_order_and_longest_match_within_a_run() -> None:
    m = MentionMatcher(("a", "b"), {"a": ("red ball",), "b": ("ball", "red")})
    assert [text for text, _ in m.spans("red ball. red, ball red-ball")] == ["red ball", "red", "ball", "red ball"]
