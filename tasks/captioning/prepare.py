"""`vlbench data prepare` for the caption benchmarks: official files (or a hub id) -> one compact
references file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlbench.errors import UsageError
from vlbench.registry import Benchmark
from vlbench.tasks.captioning.loaders import (
    References,
    _read_json,
    detect_and_load,
    from_coco_captions,
    from_karpathy,
    karpathy_image_id,
    karpathy_test_ids,
)

COCO_CAPTIONS = ("captions_val2014.json", "annotations/captions_val2014.json")
KARPATHY = ("dataset_coco.json", "karpathy/dataset_coco.json")
MINI_CAPTIONS = "annotations/captions_test.json"


def _first(folder: Path, names: tuple[str, ...]) -> Path | None:
    for name in names:
        if (folder / name).is_file():
            return folder / name
    return None


def coco_karpathy_from_folder(folder: Path) -> References:
    captions = _first(folder, COCO_CAPTIONS)
    karpathy = _first(folder, KARPATHY)
    if karpathy is None:
        raise UsageError(
            f"{folder}: dataset_coco.json (Karpathy's split file) is needed to pick the 5,000 test images"
        )
    kdata = _read_json(karpathy)
    if captions is None:  # Karpathy's raw sentences are the COCO captions
        return from_karpathy(kdata, "test", str(karpathy))
    ids = karpathy_test_ids(kdata)
    if not ids:
        raise UsageError(f"{karpathy}: no image has split 'test'")
    refs = from_coco_captions(_read_json(captions), str(captions), image_ids=ids)
    return References(refs.ids, refs.captions, "coco")


def _hub_snapshot(repo_id: str) -> Path:
    """Download a hub dataset's json files (huggingface_hub); a folder."""
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(repo_id=repo_id, repo_type="dataset", allow_patterns=["*.json", "*.json.gz", "**/*.json"]))


def _hub_rows(repo_id: str, split: str = "test") -> list[dict[str, Any]]:
    """The rows of a hub dataset's split (datasets.load_dataset), as dicts."""
    from datasets import load_dataset

    return [dict(r) for r in load_dataset(repo_id, split=split)]


def _refs_from_rows(rows: list[dict[str, Any]], where: str) -> References:
    """Karpathy-style rows: an id (cocoid / image_id / imgid) and the captions (sentences, raw
    strings or {"raw"} dicts, or captions)."""
    ids, caps = [], []
    for r in rows:
        if "cocoid" in r or "filename" in r or "imgid" in r:
            iid = karpathy_image_id(r)
        elif "image_id" in r:
            iid = r["image_id"]
        else:
            raise UsageError(f"{where}: rows have no image id column (cocoid, image_id or imgid)")
        sents = r.get("sentences", r.get("captions", r.get("sentences_raw")))
        if sents is None:
            raise UsageError(f"{where}: rows have no caption column (sentences, captions or sentences_raw)")
        caps.append([s["raw"] if isinstance(s, dict) else s for s in sents])
        ids.append(iid)
    return detect_and_load({"vlbench_references": 1, "images": list(zip(ids, caps, strict=False))}, where)


def coco_karpathy_from_hub(repo_id: str) -> References:
    try:
        folder = _hub_snapshot(repo_id)
    except Exception:
        folder = None
    if folder is not None and _first(folder, KARPATHY) is not None:
        return coco_karpathy_from_folder(folder)
    try:
        rows = _hub_rows(repo_id, "test")
    except Exception as exc:
        raise UsageError(f"cannot load hub dataset {repo_id!r}: {type(exc).__name__}: {exc}") from None
    return _refs_from_rows(rows, repo_id)


def prepare_references(benchmark: Benchmark, source: str) -> tuple[References, str]:
    path = Path(source).expanduser()
    if benchmark.id == "mini-captions":
        f = path / MINI_CAPTIONS if path.is_dir() else path
        if not f.is_file():
            raise UsageError(f"{source}: not a mini world folder (no {MINI_CAPTIONS}); run vlbench data mini")
        return from_coco_captions(_read_json(f), str(f)), "vlbench-mini " + MINI_CAPTIONS
    if path.is_dir():
        return coco_karpathy_from_folder(path), path.name
    if path.is_file():
        data = _read_json(path)
        if isinstance(data, dict) and "annotations" not in data and "images" in data:
            return from_karpathy(data, "test", str(path)), path.name
        raise UsageError(f"{source}: give the folder holding captions_val2014.json and dataset_coco.json")
    if "/" in source and not source.startswith((".", "/", "~")):
        return coco_karpathy_from_hub(source), f"hf:{source}"
    raise UsageError(f"{source}: no such folder, file, or hub dataset id")
