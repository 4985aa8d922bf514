"""Flickr30k Entities, the official markup: the one reader of `Sentences/<id>.txt` (captions with
`[/EN#<chain>/<type>... phrase]` markup) and `Annotations/<id>.xml` (boxes per chain).

It reads them as MDETR's copy of the official utilities does (`get_sentence_data`,
`get_annotations`), because every published grounding number uses that copy: captions tokenised on
whitespace, empty lines skipped, boxes the raw 1-based XML integers (the official parser subtracts
1 since commit 873a1c1; MDETR's copy does not). The grounding ground truth, the decorrelated
manifest and the baselines' D' sources all read the markup through it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Phrase:
    first_word_index: int
    phrase_id: str  # the chain id, as a string ("0" for notvisual)
    types: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class Sentence:
    text: str
    phrases: tuple[Phrase, ...]


@dataclass
class Annotation:
    width: int
    height: int
    # chain id -> boxes [[xmin, ymin, xmax, ymax], ...], raw XML integers, in file order.
    boxes: dict[str, list[list[int]]] = field(default_factory=dict)
    scene: list[str] = field(default_factory=list)
    nobox: list[str] = field(default_factory=list)
    # (chain id, box) for every boxed name, in file order (`boxes` groups them by chain).
    objects: list[tuple[str, list[int]]] = field(default_factory=list)


def parse_sentence_line(line: str) -> Sentence:
    """One caption line, tokenised on whitespace as the official `get_sentence_data` does.

    `[/EN#18/people/other A young man]` opens a phrase with chain 18, types people and other;
    `first_word_index` is the 0-based index of its first word in the caption without markup.
    """
    words: list[str] = []
    phrases: list[Phrase] = []
    current: list[str] | None = None
    start = 0
    chain = ""
    types: tuple[str, ...] = ()
    for token in line.split():
        if current is not None:
            closing = token.endswith("]")
            if closing:
                token = token[:-1]
            current.append(token)
            words.append(token)
            if closing:
                phrases.append(Phrase(start, chain, types, " ".join(current)))
                current = None
        elif token.startswith("["):
            parts = token.split("/")
            # "[/EN#18/people" -> ["[", "EN#18", "people"]; chain id is after "EN#".
            chain = parts[1][3:] if len(parts) > 1 else ""
            types = tuple(parts[2:])
            start = len(words)
            current = []
        else:
            words.append(token)
    return Sentence(" ".join(words), tuple(phrases))


def parse_sentences(text: str) -> list[Sentence]:
    """A `Sentences/<id>.txt` file. Empty lines are skipped (as the official parser does), so a
    caption's index in this list is its sentence index."""
    return [parse_sentence_line(line) for line in text.split("\n") if line]


def parse_annotation(xml_text: str | bytes) -> Annotation:
    """An `Annotations/<id>.xml` file; boxes kept as raw XML integers (MDETR)."""
    root = ET.fromstring(xml_text)
    size = root.find("size")
    width = int(size.findtext("width")) if size is not None else 0
    height = int(size.findtext("height")) if size is not None else 0
    ann = Annotation(width, height)
    for obj in root.findall("object"):
        bndbox = obj.find("bndbox")
        for name in obj.findall("name"):
            # Not stripped: MDETR matches the raw text against the sentence chain ids.
            chain = name.text or ""
            if bndbox is not None:
                box = [int(bndbox.findtext(k)) for k in ("xmin", "ymin", "xmax", "ymax")]
                ann.boxes.setdefault(chain, []).append(box)
                ann.objects.append((chain, box))
            else:
                if int(obj.findtext("nobndbox", "0")) > 0:
                    ann.nobox.append(chain)
                if int(obj.findtext("scene", "0")) > 0:
                    ann.scene.append(chain)
    return ann


def read_sentences(tree: Path, image_id: str) -> list[Sentence]:
    """The captions of one image (`Sentences/<image_id>.txt` in the tree); [] when it has none."""
    path = tree / "Sentences" / f"{image_id}.txt"
    return parse_sentences(path.read_text(encoding="utf-8")) if path.exists() else []
