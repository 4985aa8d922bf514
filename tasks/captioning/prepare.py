"""`vlbench data prepare` for the caption benchmarks: official files (or a hub id) -> one compact
references file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlbench.benchmark import Benchmark
from vlbench.errors import UsageError
from vlbench.source_check import SourceMismatch, check_source
from vlbench.tasks.captioning.loaders import (
    References,
    _read_json,
    from_coco_captions,
    from_karpathy,
    karpathy_test_ids,
)
from vlbench.tasks.retrieval.hub_tables import is_dataset_folder

COCO_CAPTIONS = ("captions_val2014.json", "annotations/captions_val2014.json")
KARPATHY = ("dataset_coco.json", "karpathy/dataset_coco.json")
MINI_CAPTIONS = "annotations/captions_test.json"
# The official COCO 2014 val captions file (annotations_trainval2014.zip): every Karpathy val and
# test image is a val2014 image with at least 5 captions.
VAL2014_IMAGES, VAL2014_CAPTIONS = 40_504, 202_654
MIN_REFERENCES = 5


def _n(count: int) -> str:
    return f"{count:,}"


def _karpathy_mismatches(kdata: Any, path: Path | None) -> list[SourceMismatch]:
    from vlbench.hashing import sha256_file
    from vlbench.tasks.karpathy import check_karpathy

    digest = sha256_file(path) if path is not None and path.is_file() else None
    return check_karpathy(kdata, "dataset_coco.json", "test", digest)


def _reference_mismatches(refs: References, images: int, min_refs: int, what: str) -> list[SourceMismatch]:
    found = []
    if refs.n_images != images:
        found.append(SourceMismatch(f"images with references ({what})", _n(images), _n(refs.n_images)))
    short = sum(1 for c in refs.captions if len(c) < min_refs)
    if short:
        found.append(SourceMismatch("references per image", f"at least {min_refs}", f"fewer on {_n(short)} images"))
    return found


def _first(folder: Path, names: tuple[str, ...]) -> Path | None:
    for name in names:
        if (folder / name).is_file():
            return folder / name
    return None


def coco_karpathy_from_folder(folder: Path, mismatches: list[SourceMismatch] | None = None) -> References:
    """The Karpathy test images' references; differences from the official files are appended to
    `mismatches` (test images the captions file lacks are left out, so a forced prepare can go on)."""
    mismatches = [] if mismatches is None else mismatches
    captions = _first(folder, COCO_CAPTIONS)
    karpathy = _first(folder, KARPATHY)
    if karpathy is None:
        raise UsageError(
            f"{folder}: dataset_coco.json (Karpathy's split file) is needed to pick the 5,000 test images"
        )
    kdata = _read_json(karpathy)
    mismatches += _karpathy_mismatches(kdata, karpathy)
    if captions is None:  # Karpathy's raw sentences are the COCO captions
        refs = from_karpathy(kdata, "test", str(karpathy))
        mismatches += _reference_mismatches(refs, len(refs.ids), MIN_REFERENCES, karpathy.name)
        return refs
    ids = karpathy_test_ids(kdata)
    if not ids:
        raise UsageError(f"{karpathy}: no image has split 'test'")
    cdata = _read_json(captions)
    if isinstance(cdata, dict):
        counts = {"images": len(cdata.get("images") or []), "captions": len(cdata.get("annotations") or [])}
        for key, want in (("images", VAL2014_IMAGES), ("captions", VAL2014_CAPTIONS)):
            if counts[key] != want:
                mismatches.append(SourceMismatch(f"{key} in {captions.name} (COCO 2014 val)", _n(want), _n(counts[key])))
        captioned = {a.get("image_id") for a in cdata.get("annotations") or [] if isinstance(a, dict)}
        missing = [i for i in ids if i not in captioned]
        if missing:
            mismatches.append(SourceMismatch(f"Karpathy test images with captions in {captions.name}",
                                             _n(len(ids)), f"{_n(len(ids) - len(missing))} (e.g. {missing[0]!r} has none)"))
            ids = [i for i in ids if i in captioned]
    refs = from_coco_captions(cdata, str(captions), image_ids=ids)
    mismatches += _reference_mismatches(refs, len(refs.ids), MIN_REFERENCES, captions.name)
    return References(refs.ids, refs.captions, "coco")


def _hub_snapshot(repo_id: str) -> Path:
    """Download a hub dataset's json files (huggingface_hub); a folder."""
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(repo_id=repo_id, repo_type="dataset", allow_patterns=["*.json", "*.json.gz", "**/*.json"]))


def coco_karpathy_from_hub(repo_id: str, mismatches: list[SourceMismatch] | None = None) -> References:
    """A hub dataset repo holding the official files (read as a folder), else its table of rows."""
    mismatches = [] if mismatches is None else mismatches
    try:
        folder = _hub_snapshot(repo_id)
    except Exception:
        folder = None
    if folder is not None and _first(folder, KARPATHY) is not None:
        return coco_karpathy_from_folder(folder, mismatches)
    return coco_karpathy_from_rows(repo_id, mismatches)


def coco_karpathy_from_rows(source: str, mismatches: list[SourceMismatch]) -> References:
    """The Karpathy test images' references from a hub dataset's rows (a hub id or a local folder
    laid out as one), held to the official file's counts."""
    from vlbench.tasks.karpathy import load_karpathy_rows

    doc = load_karpathy_rows(source, "dataset_coco.json", "test")
    mismatches += _karpathy_mismatches(doc, None)
    refs = from_karpathy(doc, "test", source)
    mismatches += _reference_mismatches(refs, 5000, MIN_REFERENCES, "the dataset's test split")
    return refs


def _expected_images(benchmark: Benchmark) -> tuple[int, int]:
    """(images, references per image) of the benchmark's references: the Karpathy test split, or
    the test split that `vlbench data mini` generates."""
    if benchmark.id == "mini-captions":
        from vlbench.tasks.mini.build import MiniConfig

        c = MiniConfig()
        return c.n_test, c.captions_per_image
    return int(benchmark.option("images", 5000)), MIN_REFERENCES


def describe_source(benchmark: Benchmark) -> str:
    images, per_image = _expected_images(benchmark)
    if benchmark.id == "mini-captions":
        return f"a mini world's {MINI_CAPTIONS} ({_n(images)} test images, {per_image} captions each)"
    return (f"the official dataset_coco.json (Karpathy test split: {_n(images)} images) and captions_val2014.json "
            f"({_n(VAL2014_IMAGES)} images, {_n(VAL2014_CAPTIONS)} captions)")


def prepare_references(benchmark: Benchmark, source: str,
                       force: bool = False) -> tuple[References, str, dict[str, Any] | None]:
    """(references, origin, deviation record or None); a source that is not the benchmark's is
    refused with every difference listed, unless `force`."""
    mismatches: list[SourceMismatch] = []
    refs, origin = _read_references(benchmark, source, mismatches)
    return refs, origin, check_source(benchmark, source, mismatches, force, describe_source(benchmark))


def _read_references(benchmark: Benchmark, source: str, mismatches: list[SourceMismatch]) -> tuple[References, str]:
    path = Path(source).expanduser()
    if benchmark.id == "mini-captions":
        f = path / MINI_CAPTIONS if path.is_dir() else path
        if not f.is_file():
            raise UsageError(f"{source}: not a mini world folder (no {MINI_CAPTIONS}); run vlbench data mini")
        refs = from_coco_captions(_read_json(f), str(f))
        mismatches += _reference_mismatches(refs, *_expected_images(benchmark), MINI_CAPTIONS)
        return refs, "vlbench-mini " + MINI_CAPTIONS
    if path.is_dir():
        if _first(path, KARPATHY) is None and is_dataset_folder(path):
            return coco_karpathy_from_rows(str(path), mismatches), path.name
        return coco_karpathy_from_folder(path, mismatches), path.name
    if path.is_file():
        data = _read_json(path)
        if isinstance(data, dict) and "annotations" not in data and "images" in data:
            mismatches += _karpathy_mismatches(data, path)
            return from_karpathy(data, "test", str(path)), path.name
        raise UsageError(f"{source}: give the folder holding captions_val2014.json and dataset_coco.json")
    if "/" in source and not source.startswith((".", "/", "~")):
        return coco_karpathy_from_hub(source, mismatches), f"hf:{source}"
    raise UsageError(f"{source}: no such folder, file, or hub dataset id")
