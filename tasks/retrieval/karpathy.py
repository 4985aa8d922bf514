"""Karpathy-split files (`dataset_coco.json`, `dataset_flickr30k.json`) from a path or the hub.

Format (Karpathy & Fei-Fei 2015, as distributed with NeuralTalk): `{"images": [{"split", "sentids",
"sentences": [{"sentid", "raw", "tokens"}], "filename", "cocoid"?}], "dataset": ...}`, with
`split` in train / restval / val / test.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlbench.errors import UsageError
from vlbench.jsonio import read_trusted_json

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class Caption:
    id: str
    image_id: str
    raw: str


@dataclass(frozen=True)
class KarpathyImage:
    id: str
    split: str
    filename: str
    captions: tuple[Caption, ...]


def image_id(entry: Mapping[str, Any]) -> str:
    """COCO images are known by `cocoid`; Flickr30k images by their file name's stem (Flickr id)."""
    if entry.get("cocoid") is not None:
        return str(entry["cocoid"])
    return Path(str(entry["filename"])).stem


def parse_karpathy(doc: Mapping[str, Any]) -> list[KarpathyImage]:
    """All images of a Karpathy document, in file order (the order the 1K folds are cut from)."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("images"), list):
        raise UsageError("not a Karpathy split file: expected {\"images\": [...]} at the top level")
    images = []
    for entry in doc["images"]:
        iid = image_id(entry)
        sentences = entry.get("sentences", [])
        by_id = {int(s["sentid"]): s for s in sentences}
        # `sentids` fixes the caption order (the ECCV/VSE++ convention keeps sentids[:5]).
        order = [int(s) for s in entry.get("sentids", by_id)]
        captions = tuple(Caption(str(sid), iid, str(by_id[sid].get("raw", ""))) for sid in order if sid in by_id)
        images.append(KarpathyImage(iid, str(entry.get("split", "")), str(entry.get("filename", "")), captions))
    return images


def rows_to_karpathy(rows: Iterable[Mapping[str, Any]], split: str | None = None) -> dict[str, Any]:
    """Karpathy document from table rows, as hub datasets store it.

    Hub copies keep the Karpathy fields but flatten `sentences` to a list of strings next to
    `sentids`; rows from a per-split table may lack `split`.
    """
    images = []
    for row in rows:
        sentences = row.get("sentences") or []
        if sentences and isinstance(sentences[0], str):
            sentids = row.get("sentids") or []
            if len(sentids) != len(sentences):
                raise UsageError("hub rows have sentences as strings but no matching 'sentids'")
            sentences = [{"sentid": int(i), "raw": s} for i, s in zip(sentids, sentences, strict=True)]
        entry = {
            "split": row.get("split") or split or "",
            "sentids": [int(s["sentid"]) for s in sentences],
            "sentences": [{"sentid": int(s["sentid"]), "raw": s.get("raw", "")} for s in sentences],
            "filename": row.get("filename") or "",
        }
        if row.get("cocoid") is not None:
            entry["cocoid"] = row["cocoid"]
        images.append(entry)
    return {"images": images}


def load_karpathy(source: str | os.PathLike, filename: str) -> dict[str, Any]:
    """Read a Karpathy document from a file, a folder holding `filename`, or a hub dataset id."""
    path = Path(source)
    if path.is_dir():
        path = path / filename
    if path.is_file():
        return read_trusted_json(path)
    if isinstance(source, str) and HUB_ID.match(source) and not path.exists():
        return load_karpathy_from_hub(source, filename)
    raise UsageError(f"no Karpathy split file at {source} (expected {filename}, a folder holding it, or a hub id)")


def load_karpathy_from_hub(repo_id: str, filename: str, revision: str | None = None) -> dict[str, Any]:
    """The raw json file if the dataset repo has it, else the dataset's rows through `datasets`."""
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError
    except ImportError as exc:  # the hub extra is optional
        raise UsageError("loading from the hub needs: pip install 'vlbench[hub]'") from exc
    try:
        local = hf_hub_download(repo_id=repo_id, filename=filename, repo_type="dataset", revision=revision)
        return read_trusted_json(local)
    except EntryNotFoundError:
        pass
    except Exception as exc:  # network or authentication problems: say what and where
        raise UsageError(f"could not fetch {filename} from hub dataset {repo_id}: {exc}") from exc
    try:
        import datasets
    except ImportError as exc:
        raise UsageError("loading a hub dataset needs: pip install 'vlbench[hub]'") from exc
    try:
        loaded = datasets.load_dataset(repo_id, revision=revision)
    except Exception as exc:
        raise UsageError(f"could not load hub dataset {repo_id}: {exc}") from exc
    images: list[dict[str, Any]] = []
    for split_name, table in loaded.items():
        images.extend(rows_to_karpathy(table, split=split_name)["images"])
    return {"images": images}
