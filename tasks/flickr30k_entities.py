"""Flickr30k Entities, the official markup: the one reader of `Sentences/<id>.txt` (captions with
`[/EN#<chain>/<type>... phrase]` markup) and `Annotations/<id>.xml` (boxes per chain).

It reads them as MDETR's copy of the official utilities does (`get_sentence_data`,
`get_annotations`), because every published grounding number uses that copy: captions tokenised on
whitespace, empty lines skipped, boxes the raw 1-based XML integers (the official parser subtracts
1 since commit 873a1c1; MDETR's copy does not). The grounding ground truth, the decorrelated
manifest and the baselines' D' sources all read the markup through it.

Annotations have a fast path, because building and walking element trees for a split's 1,000
XML files was a large part of reading it. A document of exactly the release's shape (every file of the
release has it) is read with regular expressions; anything else goes to the XML parser
(`_parse_etree`), so what is read never depends on which path read it
(tests/tasks/test_flickr30k_entities.py compares the two on the real files and on altered ones).
Captions are read token by token into plain tuples (`caption_markup`).
"""

from __future__ import annotations

import re
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


PhraseFields = tuple[int, str, tuple[str, ...], str]  # first word index, chain id, types, text


def caption_markup(line: str) -> tuple[list[str], list[PhraseFields]]:
    """(words, phrases) of one caption line, token by token as the official `get_sentence_data`
    reads it: a token starting with "[" opens a phrase ("[/EN#18/people/other": chain 18, types
    people and other) and is not a word; the phrase's words follow, up to the first token that ends
    with "]" (its last word, less the "]"); a phrase never closed is no phrase. Plain tuples, for
    the ground-truth builder, which reads a split's 5,000 captions and needs no `Phrase` objects."""
    words: list[str] = []
    phrases: list[PhraseFields] = []
    current: list[str] | None = None
    start = 0
    chain = ""
    types: tuple[str, ...] = ()
    for token in line.split():  # tokens are never empty: [0] and [-1] exist
        if current is None:
            if token[0] == "[":
                parts = token.split("/")
                # "[/EN#18/people" -> ["[", "EN#18", "people"]; chain id is after "EN#".
                chain = parts[1][3:] if len(parts) > 1 else ""
                types = tuple(parts[2:])
                start = len(words)
                current = []
            else:
                words.append(token)
        elif token[-1] == "]":
            token = token[:-1]
            current.append(token)
            words.append(token)
            phrases.append((start, chain, types, " ".join(current)))
            current = None
        else:
            current.append(token)
            words.append(token)
    return words, phrases


def parse_sentence_line(line: str) -> Sentence:
    """One caption line, tokenised on whitespace as the official `get_sentence_data` does.

    `[/EN#18/people/other A young man]` opens a phrase with chain 18, types people and other;
    `first_word_index` is the 0-based index of its first word in the caption without markup.
    """
    words, phrases = caption_markup(line)
    return Sentence(" ".join(words), tuple(Phrase(*p) for p in phrases))


def caption_lines(text: str) -> list[str]:
    """The caption lines of a `Sentences/<id>.txt` file's text, empty lines skipped (as the official
    parser does), so a caption's index in this list is its sentence index."""
    return [line for line in text.split("\n") if line]


def parse_sentences(text: str) -> list[Sentence]:
    """A `Sentences/<id>.txt` file (`caption_lines`), each line parsed."""
    return [parse_sentence_line(line) for line in caption_lines(text)]


def decode_sentences(data: bytes) -> str:
    """A `Sentences/<id>.txt` file's bytes as `Path.read_text(encoding="utf-8")` gives them: strict
    UTF-8 with universal newlines (as the official parser's text-mode open)."""
    text = data.decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


# The release's annotation shape, as bytes: <annotation>, <filename>, <size> (width, height,
# depth), then objects, each with one or more <name> (digits) and either a <bndbox> (xmin, ymin,
# xmax, ymax) or <scene> and <nobndbox> flags; whitespace between tags. No attribute, declaration,
# comment, entity or non-ASCII byte, and text without "<", "&", ">" or "]": a document that
# matches is well-formed XML whose every element the parser path would read as read here. The rest
# (another order, another element, a name with spaces...) goes to the parser.
_WS = r"[ \t\r\n]*"
_TEXT = r"[\t\n\r !-%'-;=?-\\^-~]*"  # printable ASCII but & < > ]


def _object_pattern(capture: bool) -> str:
    """One <object> of the release's shape; with `capture`, these groups: its first name, the
    other names' tags, xmin, ymin, xmax, ymax, scene, nobndbox."""
    num = r"([0-9]+)" if capture else r"[0-9]+"
    more = r"((?:<name>[0-9]+</name>%s)*)" if capture else r"(?:<name>[0-9]+</name>%s)*"
    box = _WS.join(["<bndbox>", f"<xmin>{num}</xmin>", f"<ymin>{num}</ymin>", f"<xmax>{num}</xmax>",
                    f"<ymax>{num}</ymax>", "</bndbox>"])
    flags = _WS.join([f"<scene>{num}</scene>", f"<nobndbox>{num}</nobndbox>"])
    return _WS.join(["<object>", f"<name>{num}</name>", (more % _WS) + f"(?:{box}|{flags})", "</object>"])


# groups: width, height, then where the objects start
_DOCUMENT_RE = re.compile(_WS.join([
    "", "<annotation>", f"<filename>{_TEXT}</filename>", "<size>", "<width>([0-9]+)</width>",
    "<height>([0-9]+)</height>", "<depth>[0-9]+</depth>", f"</size>()(?:{_WS}{_object_pattern(False)})*",
    "</annotation>", "",
]).encode("ascii"))
_OBJECT_RE = re.compile(_object_pattern(True))
_NAME_RE = re.compile("<name>([0-9]+)</name>")


def _parse_release_shape(data: bytes) -> Annotation | None:
    """The annotation of a document of the release's shape (`_DOCUMENT_RE`), else None."""
    document = _DOCUMENT_RE.fullmatch(data)
    if document is None:
        return None
    ann = Annotation(int(document.group(1)), int(document.group(2)))
    boxes, objects = ann.boxes, ann.objects
    # It matched, so it is ASCII and its objects follow one another from there, as _OBJECT_RE reads them.
    for name, more, x0, y0, x1, y1, scene, nobndbox in _OBJECT_RE.findall(data.decode("ascii"), document.end(3)):
        chains = [name, *_NAME_RE.findall(more)] if more else (name,)
        if x0:  # a <bndbox> (findall gives "" for the other alternative's groups)
            for chain in chains:
                box = [int(x0), int(y0), int(x1), int(y1)]
                if chain in boxes:
                    boxes[chain].append(box)
                else:
                    boxes[chain] = [box]
                objects.append((chain, box))
        else:
            for chain in chains:
                if int(nobndbox) > 0:
                    ann.nobox.append(chain)
                if int(scene) > 0:
                    ann.scene.append(chain)
    return ann


def _parse_etree(xml_text: str | bytes) -> Annotation:
    """Any annotation document, with the XML parser: the definition the fast path follows."""
    import xml.etree.ElementTree as ET  # only for documents off the release's shape

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


def parse_annotation(xml_text: str | bytes) -> Annotation:
    """An `Annotations/<id>.xml` file; boxes kept as raw XML integers (MDETR)."""
    if isinstance(xml_text, bytes):
        ann = _parse_release_shape(xml_text)
    elif isinstance(xml_text, str) and xml_text.isascii():
        ann = _parse_release_shape(xml_text.encode("ascii"))
    else:
        ann = None
    return ann if ann is not None else _parse_etree(xml_text)


def read_sentences(tree: Path, image_id: str) -> list[Sentence]:
    """The captions of one image (`Sentences/<image_id>.txt` in the tree); [] when it has none."""
    path = tree / "Sentences" / f"{image_id}.txt"
    return parse_sentences(path.read_text(encoding="utf-8")) if path.exists() else []
