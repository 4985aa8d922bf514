"""Build the query manifest from official formats: COCO instances + Karpathy split, Flickr30k
Entities + Karpathy split (read by `vlbench.tasks.karpathy` and `vlbench.tasks.flickr30k_entities`),
and the bundled mini world.

Query selection: for every test image with objects of at least two classes, `candidate_removals`
lists the accepted removals (one per target class, same removed set merged); one is chosen per
image, at index sha256(str(image id)) mod (number of candidates). The hash makes the choice
deterministic and independent of class names or file order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlbench.errors import UsageError
from vlbench.progress import progress
from vlbench.source_check import check_source
from vlbench.tasks.decorrelated.manifest import Gallery, Query, build_manifest
from vlbench.tasks.decorrelated.mentions import (
    COCO_MATCHER,
    FLICKR_CLASSES,
    MentionMatcher,
    coco_matcher,
    tokens,
)
from vlbench.tasks.decorrelated.removal import (
    TAU1,
    TAU2,
    TAU3,
    BoxXYWH,
    Removal,
    candidate_removals,
)
from vlbench.tasks.flickr30k_entities import (
    Sentence,
    parse_annotation,
    parse_sentence_line,
    read_sentences,
)
from vlbench.tasks.karpathy import KarpathyEntry, KarpathySentence, read_karpathy

PARAMS = {"tau1": TAU1, "tau2": TAU2, "tau3": TAU3}


def _find(source: Path, *candidates: str) -> Path:
    for c in candidates:
        if (source / c).exists():
            return source / c
    raise UsageError(f"{source}: none of {', '.join(candidates)} found")


def _checked_karpathy(benchmark_id: str, path: Path, force: bool) -> tuple[list[KarpathyEntry], dict[str, Any] | None]:
    """The Karpathy file the gallery and queries come from, refused unless it is the official one
    (all splits: the gallery is every caption); with `force`, the deviation record for `params`."""
    from vlbench.tasks.karpathy import check_karpathy, source_description, source_sha256

    official = "dataset_mini.json" if path.name == "dataset_mini.json" else OFFICIAL_NAME[benchmark_kind(benchmark_id)]
    dataset = json.loads(path.read_text())
    mismatches = check_karpathy(dataset, official, "test", source_sha256(path, official))
    deviation = check_source(benchmark_id, str(path), mismatches, force, source_description(official))
    return read_karpathy(dataset), deviation


OFFICIAL_NAME = {"coco": "dataset_coco.json", "flickr30k": "dataset_flickr30k.json"}


def benchmark_kind(benchmark_id: str) -> str:
    return "flickr30k" if benchmark_id.startswith("flickr30k") else "coco"


def _with_deviation(manifest: dict[str, Any], deviation: dict[str, Any] | None) -> dict[str, Any]:
    if deviation is not None:
        manifest["params"]["source_check"] = deviation
    return manifest


def choose(removals: Sequence[Removal], image_id: str | int) -> Removal | None:
    if not removals:
        return None
    h = int.from_bytes(hashlib.sha256(str(image_id).encode()).digest()[:8], "big")
    return removals[h % len(removals)]


def query_id(image_id: str | int, removed: Iterable[str]) -> str:
    return f"{image_id}-" + "+".join(c.replace(" ", "_") for c in removed)


def make_query(image_id: str | int, source_file: str, r: Removal, group: str | None = None) -> Query:
    qid = query_id(image_id, r.removed_classes)
    return Query(
        id=qid,
        source_image_id=image_id,
        file_name=f"{qid}.png",
        source_file=source_file,
        removed_classes=r.removed_classes,
        present_classes=r.present_classes,
        removed_boxes=r.removed_boxes,
        group=group,
    )


Mentions = Callable[[KarpathyEntry, int, KarpathySentence], list[int]]


def karpathy_gallery(dataset: list[KarpathyEntry], mentions: Mentions) -> Gallery:
    """Every caption of every split (the paper's train+val+test gallery), in file order."""
    ids: list[str | int] = []
    ms: list[list[int]] = []
    for img in progress(dataset, "gallery mentions", unit="img"):
        for j, sent in enumerate(img.sentences):
            if sent.sentid is None:
                raise UsageError(f"the Karpathy file has a caption without a sentid (image {img.filename})")
            ids.append(sent.sentid)
            ms.append(mentions(img, j, sent))
    if len(set(map(str, ids))) != len(ids):
        raise UsageError("the Karpathy file repeats a sentid; caption ids must be unique")
    return Gallery(ids, ms)


def _text_mentions(matcher: MentionMatcher) -> Mentions:
    return lambda img, j, sent: matcher.mentions(sent.raw)


# --- COCO ---------------------------------------------------------------------------------------


def coco_queries(
    dataset: list[KarpathyEntry], annotations: Path, split: str = "test"
) -> list[Query]:
    """One query per Karpathy `split` image that has an accepted removal (COCO instances boxes,
    crowd regions included: they show the class)."""
    from pycocotools.coco import COCO

    wanted = [img for img in dataset if img.split == split]
    by_file: dict[str, list[KarpathyEntry]] = {}
    for img in wanted:
        by_file.setdefault(img.filepath, []).append(img)
    queries: list[Query] = []
    for filepath, images in sorted(by_file.items()):
        coco = COCO(str(_find(annotations, f"instances_{filepath}.json")))
        names = {c["id"]: c["name"] for c in coco.loadCats(coco.getCatIds())}
        for img in progress(images, f"removals {filepath}", unit="img"):
            info = coco.imgs[img.cocoid]
            objects = [
                (names[a["category_id"]], tuple(a["bbox"]))
                for a in coco.imgToAnns.get(img.cocoid, [])
            ]
            r = choose(candidate_removals(objects, info["width"], info["height"]), img.cocoid)
            if r is not None:
                queries.append(make_query(img.cocoid, f"{filepath}/{img.filename}", r))
    return queries


def prepare_coco(benchmark_id: str, source: Path, force: bool = False) -> dict[str, Any]:
    dataset, deviation = _checked_karpathy(
        benchmark_id, _find(source, "dataset_coco.json", "annotations/dataset_coco.json"), force)
    matcher = coco_matcher()
    queries = coco_queries(dataset, _find(source, "annotations"))
    gallery = karpathy_gallery(dataset, _text_mentions(matcher))
    params = {**PARAMS, "matcher": COCO_MATCHER, "selection": "sha256(image id) mod candidates"}
    return _with_deviation(build_manifest(benchmark_id, matcher.classes, queries, gallery, params), deviation)


# --- Flickr30k Entities -------------------------------------------------------------------------

def _phrases(sentence: Sentence) -> list[tuple[str, list[str]]]:
    return [(p.phrase_id, [t for t in p.types if t]) for p in sentence.phrases]


def parse_entities_sentence(line: str) -> tuple[str, list[tuple[str, list[str]]]]:
    """(plain text, [(entity id, types)]) of one Flickr30k Entities sentence line."""
    sentence = parse_sentence_line(line)
    return sentence.text, _phrases(sentence)


def parse_entities_boxes(xml_text: str) -> tuple[int, int, list[tuple[str, BoxXYWH]]]:
    """(width, height, [(entity id, box)]) from an Annotations/<id>.xml file. Flickr30k Entities
    boxes are inclusive pixel corners; [x, y, w, h] is [xmin, ymin, xmax - xmin + 1, ...]."""
    ann = parse_annotation(xml_text)
    return ann.width, ann.height, [
        (chain, (float(x0), float(y0), float(x1 - x0 + 1), float(y1 - y0 + 1))) for chain, (x0, y0, x1, y1) in ann.objects
    ]


def _entities_root(source: Path) -> Path:
    return _find(source, "flickr30k_entities", "Flickr30kEntities", ".").resolve()


def flickr_sentences(root: Path, image_stem: str) -> list[tuple[str, list[tuple[str, list[str]]]]]:
    return [(sentence.text, _phrases(sentence)) for sentence in read_sentences(root, image_stem)]


@dataclass(frozen=True)
class FlickrObjects:
    """An image's boxes labelled with the classes their chains' phrases name (a box whose chain
    names several classes counts once per class), and its captions."""

    width: int
    height: int
    objects: list[tuple[str, BoxXYWH]]
    sentences: list[Sentence]
    chain_classes: dict[str, set[str]]  # chain id -> the wanted classes its phrases name


def flickr_objects(root: Path, image_stem: str, classes: Iterable[str]) -> FlickrObjects | None:
    """None when the image has no Annotations file."""
    xml = root / "Annotations" / f"{image_stem}.xml"
    if not xml.exists():
        return None
    wanted = set(classes)
    sentences = read_sentences(root, image_stem)
    types: dict[str, set[str]] = {}
    for sentence in sentences:
        for eid, ts in _phrases(sentence):
            types.setdefault(eid, set()).update(t for t in ts if t in wanted)
    width, height, boxes = parse_entities_boxes(xml.read_text(encoding="utf-8"))
    objects = [(t, box) for eid, box in boxes for t in sorted(types.get(eid, ()))]
    return FlickrObjects(width, height, objects, sentences, types)


def _flickr_mentions(root: Path, classes: Sequence[str]):
    index = {c: i for i, c in enumerate(classes)}
    cache: dict[str, list[tuple[list[str], set[int]]]] = {}

    def mentions(img: KarpathyEntry, j: int, sent: KarpathySentence) -> list[int]:
        stem = Path(img.filename).stem
        if stem not in cache:
            cache[stem] = [
                (tokens(text), {index[t] for _, ts in ph for t in ts if t in index})
                for text, ph in flickr_sentences(root, stem)
            ]
        entries = cache[stem]
        # Entities lists an image's captions in the Karpathy order; match by tokens first so a
        # reordered or shortened file cannot shift mentions onto the wrong caption.
        toks = tokens(sent.raw)
        for t, m in entries:
            if t == toks:
                return sorted(m)
        return sorted(entries[j][1]) if j < len(entries) else []

    return mentions


def flickr_queries(dataset: list[KarpathyEntry], root: Path, classes: Sequence[str], split: str = "test") -> list[Query]:
    queries: list[Query] = []
    for img in progress([i for i in dataset if i.split == split], "removals", unit="img"):
        stem = Path(img.filename).stem
        found = flickr_objects(root, stem, classes)
        if found is None:
            continue
        image_id = stem  # the Flickr30k image id is the file stem
        r = choose(candidate_removals(found.objects, found.width, found.height), image_id)
        if r is not None:
            queries.append(make_query(image_id, img.filename, r))
    return queries


def prepare_flickr(benchmark_id: str, source: Path, force: bool = False) -> dict[str, Any]:
    dataset, deviation = _checked_karpathy(benchmark_id, _find(source, "dataset_flickr30k.json"), force)
    root = _entities_root(source)
    queries = flickr_queries(dataset, root, FLICKR_CLASSES)
    gallery = karpathy_gallery(dataset, _flickr_mentions(root, FLICKR_CLASSES))
    params = {**PARAMS, "matcher": "flickr30k-entities-types", "selection": "sha256(image id) mod candidates"}
    return _with_deviation(build_manifest(benchmark_id, FLICKR_CLASSES, queries, gallery, params), deviation)


# --- mini ---------------------------------------------------------------------------------------


def mini_matcher() -> MentionMatcher:
    from vlbench.tasks.mini import world

    return MentionMatcher(world.CLASSES, world.CLASS_WORDS)


def prepare_mini(benchmark_id: str, source: Path, matcher: MentionMatcher | None = None,
                 force: bool = False) -> dict[str, Any]:
    """The mini world's own query list (`decorrelated/queries.json`, exact renders) + its gallery."""
    doc = json.loads(_find(source, "decorrelated/queries.json").read_text())
    if doc.get("format") != "vlbench-mini-removals":
        raise UsageError(f"{source}/decorrelated/queries.json: not a vlbench-mini-removals file")
    dataset, deviation = _checked_karpathy(benchmark_id, _find(source, "dataset_mini.json"), force)
    matcher = matcher or mini_matcher()
    queries = [
        Query(
            id=str(q["id"]),
            source_image_id=q["source_image_id"],
            file_name=q["file_name"],
            # Mini queries are exact re-renders shipped as images; no fill reads a source file.
            source_file=q.get("source_file", ""),
            removed_classes=tuple(q["removed_classes"]),
            present_classes=tuple(q["present_classes"]),
            removed_boxes=tuple(tuple(b) for b in q["removed_boxes"]),
            group=q.get("group"),
            # Version 1 files (mini-decorrelated v2.0) predate keeping the matched pairs.
            matched_query_id=str(q["matched_query_id"]) if doc.get("version", 1) >= 2 else None,
        )
        for q in doc["queries"]
    ]
    gallery = karpathy_gallery(dataset, _text_mentions(matcher))
    params = {**doc.get("params", {}), "matcher": "mini-world-words", "partner_pairs": doc.get("partner_pairs", [])}
    return _with_deviation(build_manifest(benchmark_id, matcher.classes, queries, gallery, params), deviation)
