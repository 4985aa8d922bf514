"""The Flickr30k Entities markup read as MDETR's copy of the official utilities reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tasks.grounding.conftest import box_object, write_hand_tree, write_image
from vlbench.tasks.flickr30k_entities import (
    parse_annotation,
    parse_sentence_line,
    parse_sentences,
    read_sentences,
)


@pytest.fixture
def hand_tree(tmp_path: Path) -> Path:
    return write_hand_tree(tmp_path / "f30k")


def test_sentence_line_markup_and_word_indexes():
    s = parse_sentence_line(
        "[/EN#1/people Two young guys] with [/EN#2/bodyparts shaggy hair] look at "
        "[/EN#6729/vehicles/scene the subway] [/EN#0/notvisual it] ."
    )
    assert s.text == "Two young guys with shaggy hair look at the subway it ."
    assert [(p.first_word_index, p.phrase_id, p.types, p.text) for p in s.phrases] == [
        (0, "1", ("people",), "Two young guys"),
        (4, "2", ("bodyparts",), "shaggy hair"),
        (8, "6729", ("vehicles", "scene"), "the subway"),
        (10, "0", ("notvisual",), "it"),
    ]


def test_empty_lines_are_skipped_like_the_official_parser():
    sentences = parse_sentences("[/EN#1/people A man] .\n\n[/EN#2/other B] x\n")
    assert [s.text for s in sentences] == ["A man .", "B x"]


def test_annotation_shared_box_flags_and_raw_coordinates(hand_tree):
    ann = parse_annotation((hand_tree / "Annotations" / "100.xml").read_text())
    assert (ann.width, ann.height) == (200, 100)
    # Raw 1-based XML integers, no -1 (MDETR).
    assert ann.boxes["1"] == [[10, 10, 50, 50], [100, 10, 140, 50]]
    assert ann.boxes["2"] == ann.boxes["3"] == [[60, 60, 100, 100]]
    assert ann.nobox == ["4"] and ann.scene == ["5"]
    assert "4" not in ann.boxes and "5" not in ann.boxes


def test_objects_keep_the_file_order_across_chains(tmp_path: Path) -> None:
    # `boxes` groups by chain; `objects` is the file's order, which the decorrelated removals read.
    write_image(tmp_path, "1", 50, 50, [box_object(["a"], [1, 1, 5, 5]), box_object(["b", "a"], [2, 2, 6, 6]),
                                        box_object(["a"], [3, 3, 7, 7])], ["x ."])
    ann = parse_annotation((tmp_path / "Annotations" / "1.xml").read_text())
    assert ann.objects == [("a", [1, 1, 5, 5]), ("b", [2, 2, 6, 6]), ("a", [2, 2, 6, 6]), ("a", [3, 3, 7, 7])]
    assert ann.boxes == {"a": [[1, 1, 5, 5], [2, 2, 6, 6], [3, 3, 7, 7]], "b": [[2, 2, 6, 6]]}


def test_read_sentences_of_an_image(hand_tree: Path) -> None:
    assert [s.text for s in read_sentences(hand_tree, "200")] == ["A car .", "A plain caption ."]
    assert read_sentences(hand_tree, "999") == []
