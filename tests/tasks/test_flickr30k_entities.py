"""The Flickr30k Entities markup read as MDETR's copy of the official utilities reads it."""

from __future__ import annotations

import os
import random
import tarfile
from dataclasses import asdict
from pathlib import Path

import pytest

from tests.tasks.grounding.conftest import box_object, write_hand_tree, write_image
from vlbench.tasks.flickr30k_entities import (
    _parse_etree,
    _parse_release_shape,
    decode_sentences,
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


# --- the fast paths against the definitions they follow -------------------------------------------

REALDATA = Path(os.environ.get("VLBENCH_REALDATA", Path(__file__).resolve().parents[3] / "shared" / "realdata"))
ENTITIES = REALDATA / "flickr30k_entities" / "sentences_annotations_test_val.tar.gz"


def official_line(line: str) -> tuple[str, list[tuple[int, str, tuple[str, ...], str]]]:
    """MDETR's `get_sentence_data` for one line, restated (its lists zipped as it zips them), except
    that a lone "[" token gives chain "" where MDETR's `parts[1]` fails."""
    first_word, phrases, phrase_id, phrase_type, words, current = [], [], [], [], [], []
    add_to_phrase = False
    for token in line.split():
        if add_to_phrase:
            if token[-1] == "]":
                add_to_phrase = False
                token = token[:-1]
                current.append(token)
                phrases.append(" ".join(current))
                current = []
            else:
                current.append(token)
            words.append(token)
        elif token[0] == "[":
            add_to_phrase = True
            first_word.append(len(words))
            parts = token.split("/")
            phrase_id.append(parts[1][3:] if len(parts) > 1 else "")
            phrase_type.append(tuple(parts[2:]))
        else:
            words.append(token)
    return " ".join(words), list(zip(first_word, phrase_id, phrase_type, phrases))


def as_fields(sentence) -> tuple[str, list[tuple[int, str, tuple[str, ...], str]]]:
    return sentence.text, [(p.first_word_index, p.phrase_id, p.types, p.text) for p in sentence.phrases]


def test_captions_read_as_the_official_parser_on_odd_markup():
    rng = random.Random(3)
    vocabulary = ["a", "man", "[/EN#1/people", "[/EN#22/people/other", "[/EN#3/", "[", "]", "x]", "x]]",
                  "[y]", "[/EN#4/scene]", "a]b", "[[", "]]", "[/EN#5/clothing"]
    spaces = [" ", "  ", "\t", "\u2003", "\x1c", "\x0b", "\u3000"]
    lines = ["[/EN#1/people A man] [/EN#2/other]", "[/EN#1/people never closed", "[/EN#1/people ]",
             "[/EN#1/people a [/EN#2/other b] c]", "[/EN#1/people a] [/EN#1/people a] .", ""]
    for _ in range(3000):
        n = rng.randint(0, 12)
        lines.append(rng.choice(["", " "]) + "".join(rng.choice(vocabulary) + rng.choice(spaces) for _ in range(n)))
    for line in lines:
        assert as_fields(parse_sentence_line(line)) == official_line(line), repr(line)


def test_sentence_bytes_decode_as_read_text(tmp_path: Path) -> None:
    for data in (b"a\r\nb\rc\n\r\r\nd", "\ufeff[/EN#1/people caf\u00e9] .\r\n".encode(), b"", b"\r"):
        path = tmp_path / "s.txt"
        path.write_bytes(data)
        assert decode_sentences(data) == path.read_text(encoding="utf-8")
    with pytest.raises(UnicodeDecodeError):
        decode_sentences(b"\xff")


def annotation_or_error(reader, document):
    try:
        return asdict(reader(document))
    except Exception as exc:  # the two paths must fail alike on what the parser refuses
        return type(exc)


RELEASE_LIKE = ("<annotation>\n\t<filename>1.jpg</filename>\n\t<size>\n\t\t<width>333</width>\n\t\t"
                "<height>500</height>\n\t\t<depth>3</depth>\n\t</size>\n\t<object>\n\t\t<name>547</name>\n\t\t"
                "<name>548</name>\n\t\t<bndbox>\n\t\t\t<xmin>1</xmin>\n\t\t\t<ymin>54</ymin>\n\t\t\t"
                "<xmax>333</xmax>\n\t\t\t<ymax>500</ymax>\n\t\t</bndbox>\n\t</object>\n\t<object>\n\t\t"
                "<name>554</name>\n\t\t<scene>1</scene>\n\t\t<nobndbox>1</nobndbox>\n\t</object>\n\t<object>\n\t\t"
                "<name>547</name>\n\t\t<bndbox><xmin>2</xmin><ymin>3</ymin><xmax>4</xmax><ymax>5</ymax>"
                "</bndbox>\n\t</object>\n</annotation>\n")


@pytest.mark.parametrize(("change", "fast"), [
    (lambda s: s, True),
    (lambda s: s.replace("\n", "\r\n"), True),
    (lambda s: "\n  " + s, True),
    (lambda s: s.replace("<xmin>1<", "<xmin>0001<"), True),
    (lambda s: s.replace("<name>548</name>", "<name>0548</name>"), True),
    (lambda s: s.replace("<scene>1</scene>\n\t\t<nobndbox>1", "<scene>0</scene>\n\t\t<nobndbox>0"), True),
    (lambda s: s.replace("1.jpg", ""), True),
    (lambda s: '<?xml version="1.0" encoding="utf-8"?>\n' + s, False),
    (lambda s: "\ufeff" + s, False),
    (lambda s: s.replace("<object>", "<object id='x'>", 1), False),
    (lambda s: s.replace("<annotation>", "<annotation>\n<!-- note -->"), False),
    (lambda s: s.replace("1.jpg", "a&amp;b.jpg"), False),
    (lambda s: s.replace("1.jpg", "caf\u00e9.jpg"), False),
    (lambda s: s.replace("1.jpg", "a]]>b"), False),
    (lambda s: s.replace("<name>547</name>", "<name> 547 </name>", 1), False),
    (lambda s: s.replace("<name>547</name>", "<name>&#53;47</name>", 1), False),
    (lambda s: s.replace("<name>547</name>", "<name><![CDATA[547]]></name>", 1), False),
    (lambda s: s.replace("<name>547</name>", "<name></name>", 1), False),
    (lambda s: s.replace("<name>547</name>", "<name>EN547</name>", 1), False),
    (lambda s: s.replace("<xmin>1</xmin>", "<xmin> 1</xmin>"), False),
    (lambda s: s.replace("<xmin>1</xmin>", "<xmin>-1</xmin>"), False),
    (lambda s: s.replace("<xmin>1</xmin>", "<xmin>1.5</xmin>"), False),
    (lambda s: s.replace("<scene>1</scene>\n\t\t<nobndbox>1</nobndbox>", "<nobndbox>1</nobndbox><scene>1</scene>"), False),
    (lambda s: s.replace("<scene>1</scene>", ""), False),
    (lambda s: s.replace("</bndbox>", "</bndbox><bndbox><xmin>9</xmin><ymin>9</ymin><xmax>9</xmax><ymax>9</ymax></bndbox>", 1), False),
    (lambda s: s.replace("<name>548</name>", "<difficult>0</difficult><name>548</name>"), False),
    (lambda s: s.replace("\t\t<name>548</name>\n", "").replace("<bndbox>", "<bndbox><name>548</name>", 1), False),
    (lambda s: s.replace("<size>", "<size><depth>3</depth>").replace("<depth>3</depth>\n\t</size>", "</size>"), False),
    (lambda s: s.replace("<filename>1.jpg</filename>", ""), False),
    (lambda s: s.replace("<annotation>", "<annotations>").replace("</annotation>", "</annotations>"), False),
    (lambda s: s.replace("</annotation>", "<object><name>9</name></object></annotation>"), False),
    (lambda s: s.replace("<object>", "<object><object><name>8</name><scene>0</scene><nobndbox>1</nobndbox></object>", 1), False),
    (lambda s: s + "x", False),
    (lambda s: s.replace("</object>", "", 1), False),
    (lambda s: s.replace("</ymax>", "</ymin>", 1), False),
    (lambda s: s.replace("\t", "\x0c"), False),
])
def test_annotation_fast_path_reads_as_the_parser(change, fast):
    document = change(RELEASE_LIKE)
    for data in (document, document.encode("utf-8")):
        assert annotation_or_error(parse_annotation, data) == annotation_or_error(_parse_etree, data)
    assert (_parse_release_shape(document.encode("utf-8")) is not None) == fast


def test_annotation_fast_path_on_random_damage():
    """Random edits with XML's own characters: whatever the fast path accepts reads as the parser
    reads it, and what the parser refuses, the fast path refuses too."""
    rng = random.Random(11)
    pieces = ["<", ">", "/", "&", ";", "]", "[", "!", "?", "-", " ", "\n", "\t", "0", "7", "x", '"', "=",
              "<name>", "</name>", "<object>", "</object>", "<bndbox>", "<scene>", "1", "\u00e9"]
    accepted = 0
    for _ in range(3000):
        document = RELEASE_LIKE
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(document) + 1)
            j = min(len(document), i + rng.choice([0, 0, 1, 2, 5]))
            document = document[:i] + rng.choice(pieces) * rng.choice([0, 1, 1, 2]) + document[j:]
        data = document.encode("utf-8")
        accepted += _parse_release_shape(data) is not None
        assert annotation_or_error(parse_annotation, data) == annotation_or_error(_parse_etree, data), document
    assert accepted > 100  # the damage left many documents in the release's shape


@pytest.fixture(scope="module")
def real_files(tmp_path_factory):
    if not ENTITIES.is_file():
        pytest.skip(f"real data not found in {REALDATA}")
    files = {}
    with tarfile.open(ENTITIES) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith((".xml", ".txt")):
                files[member.name] = tar.extractfile(member).read()
    return files


def test_real_annotations_all_take_the_fast_path_and_read_as_the_parser(real_files):
    xml = {name: data for name, data in real_files.items() if name.endswith(".xml")}
    assert len(xml) == 2000
    for name, data in xml.items():
        assert _parse_release_shape(data) is not None, name
        assert asdict(parse_annotation(data)) == asdict(_parse_etree(data)), name


def test_real_captions_read_as_the_official_parser(real_files):
    sentences = {name: data for name, data in real_files.items() if "Sentences" in name}
    assert len(sentences) == 2000
    for name, data in sentences.items():
        text = decode_sentences(data)
        assert [as_fields(s) for s in parse_sentences(text)] == \
            [official_line(line) for line in text.split("\n") if line], name
