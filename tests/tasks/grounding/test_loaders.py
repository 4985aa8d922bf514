from __future__ import annotations

import json

import numpy as np

from vlbench.tasks.grounding.loaders import (
    build_ground_truth,
    ground_truth_from_doc,
    parse_annotation,
    parse_sentence_line,
    parse_sentences,
)


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
