"""Reference captions in the official formats, and vlbench's compact references file.

Formats read (detected from the content):
* COCO captions annotations (`captions_val2014.json`): `{"images": [...], "annotations":
  [{"image_id", "caption"}, ...]}`, read with pycocotools. Images listed without any caption
  are an error; without an "images" list, the images are those the annotations name.
* Karpathy split json (`dataset_coco.json`, `dataset_flickr30k.json`), read by
  `vlbench.tasks.karpathy`: the `test` split is used (all images when the file has no split
  field); image id: `KarpathyEntry.numeric_image_id` (the ids COCO caption files use).
* The compact file written by `prepare`: `{"vlbench_references": 1, "images": [[id, [caption,
  ...]], ...]}`.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from vlbench.errors import UsageError
from vlbench.tasks.karpathy import KarpathySentence, read_karpathy

ImageId = Union[int, str]  # a runtime alias: Union, not |, for Python 3.9
COMPACT_KEY = "vlbench_references"


@dataclass(frozen=True)
class References:
    ids: list[ImageId]
    captions: list[list[str]]
    source_format: str

    def __post_init__(self) -> None:
        if len(self.ids) != len(self.captions):
            raise ValueError("ids and captions differ in length")

    @property
    def n_images(self) -> int:
        return len(self.ids)


def _read_json(path: Path) -> Any:
    try:
        with open(path, "rb") as f:
            raw = f.read()
        if path.suffix == ".gz":
            import gzip

            raw = gzip.decompress(raw)
        return json.loads(raw)
    except FileNotFoundError:
        raise UsageError(f"references file not found: {path}") from None
    except json.JSONDecodeError as exc:
        from vlbench.jsonio import syntax_problem

        message, hint = syntax_problem(exc.doc, exc)
        raise UsageError(f"references {path}: {message}; {hint}") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read references {path}: {exc}") from None


def _check_captions(ids: Sequence[ImageId], caps: Sequence[Sequence[str]], where: str) -> None:
    if not ids:
        raise UsageError(f"{where}: no image with reference captions")
    seen: set[ImageId] = set()
    for i, c in zip(ids, caps):
        if i is None or (isinstance(i, str) and not i.strip()):
            raise UsageError(f"{where}: an image has an empty id")
        if i in seen:
            raise UsageError(f"{where}: image {i!r} is listed twice")
        seen.add(i)
        if not c:
            raise UsageError(f"{where}: image {i!r} has no reference caption")
        for s in c:
            if not isinstance(s, str):
                raise UsageError(f"{where}: image {i!r} has a reference that is not a string: {s!r:.80}")


def from_coco_captions(data: Mapping[str, Any], where: str = "COCO captions", image_ids: Iterable[ImageId] | None = None) -> References:
    """References from a COCO captions annotation dict (via pycocotools)."""
    from pycocotools.coco import COCO

    coco = COCO()
    coco.dataset = dict(data)
    coco.dataset.setdefault("images", [])
    with contextlib.redirect_stdout(io.StringIO()):
        coco.createIndex()
    if image_ids is not None:
        ids = list(image_ids)
    elif data.get("images"):
        ids = [img["id"] for img in data["images"]]
    else:
        ids = list(dict.fromkeys(a["image_id"] for a in data.get("annotations", [])))
    caps = []
    for i in ids:
        anns = coco.imgToAnns.get(i, [])
        caps.append([a["caption"] for a in anns])
    _check_captions(ids, caps, where)
    return References(ids, caps, "coco")


def karpathy_test_ids(data: Mapping[str, Any], split: str = "test") -> list[ImageId]:
    return [entry.numeric_image_id for entry in read_karpathy(data) if entry.split == split]


def from_karpathy(data: Mapping[str, Any], split: str = "test", where: str = "Karpathy json") -> References:
    entries = read_karpathy(data)
    if any(entry.split is not None for entry in entries):
        entries = [entry for entry in entries if entry.split == split]
    ids = [entry.numeric_image_id for entry in entries]
    caps = [[_raw(s) for s in entry.sentences] for entry in entries]
    _check_captions(ids, caps, where)
    return References(ids, caps, "karpathy")


def _raw(sentence: KarpathySentence) -> Any:
    if sentence.raw is None:
        raise KeyError("raw")  # `load_references` reports it as a malformed file
    return sentence.raw


def from_compact(data: Mapping[str, Any], where: str = "references") -> References:
    ids = [row[0] for row in data["images"]]
    caps = [list(row[1]) for row in data["images"]]
    _check_captions(ids, caps, where)
    return References(ids, caps, data.get("source_format", "compact"))


def _refuse_other_coco(data: Mapping[str, Any], where: str) -> None:
    """A COCO annotation file of another kind (instances, keypoints, panoptic) given as references."""
    annotations = data["annotations"]
    first = next((a for a in annotations if isinstance(a, dict)), None)
    if first is None or "caption" in first:
        return
    kind = ("an instances (object detection) file" if "bbox" in first or "category_id" in first
            else "a COCO annotation file of another kind")
    fields = ", ".join(sorted(str(k) for k in first)[:6])
    raise UsageError(f"{where} is {kind}, not a captions file: its annotations have no \"caption\" (they have "
                     f"{fields}); give the captions file of the same split, e.g. captions_val2014.json")


def detect_and_load(data: Any, where: str) -> References:
    if isinstance(data, dict) and COMPACT_KEY in data:
        return from_compact(data, where)
    if isinstance(data, dict) and isinstance(data.get("annotations"), list):
        _refuse_other_coco(data, where)
        return from_coco_captions(data, where)
    if isinstance(data, dict) and isinstance(data.get("images"), list) and all(
        isinstance(i, dict) and "sentences" in i for i in data["images"][:10]
    ):
        return from_karpathy(data, where=where)
    raise UsageError(
        f"{where}: not a COCO captions annotation file ({{\"annotations\": [{{\"image_id\", \"caption\"}}]}}), "
        "a Karpathy split json, or a vlbench references file"
    )


def load_references(path: Path) -> References:
    try:
        return detect_and_load(_read_json(path), str(path))
    except (KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"{path}: malformed references ({type(exc).__name__}: {exc})") from None


def write_compact(refs: References, path: Path, source: str = "", source_check: Mapping[str, Any] | None = None) -> Path:
    """Write the compact references file (sorted by image id, deterministic bytes). `source_check`:
    the record of a forced prepare from a source that differs from the benchmark's."""
    rows = sorted(zip(refs.ids, refs.captions), key=lambda r: (isinstance(r[0], str), r[0]))
    doc: dict[str, Any] = {COMPACT_KEY: 1, "source_format": refs.source_format, "source": source}
    if source_check is not None:
        doc["source_check"] = dict(source_check)
    doc["images"] = [[i, c] for i, c in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
