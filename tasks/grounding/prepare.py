"""Grounding ground truth from the official Flickr30k Entities release (a folder or a hub id)."""

from __future__ import annotations

import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vlbench.benchmark import Benchmark
from vlbench.errors import UsageError
from vlbench.ground_truth import prepare_target
from vlbench.hashing import sha256_bytes
from vlbench.source_check import SourceMismatch, check_source
from vlbench.tasks.grounding.loaders import (
    build_ground_truth,
    find_tree,
    write_ground_truth,
)
from vlbench.tasks.grounding.scores import entity_types


def prepare_ground_truth(benchmark: Benchmark, source: str, data_dir: Path, force: bool = False) -> list[Path]:
    """The benchmark's ground-truth file from the release's tree (a folder, or a hub id to fetch);
    a source that is not the release's split is refused unless `force` (`check_source`)."""
    split = str(benchmark.option("split", "test"))
    root = Path(source).expanduser()
    if not root.exists():
        root = _download(source)
    # an official annotations.zip is unpacked in a temporary folder: the data folder gets only the
    # ground truth (vlbench writes nothing else there)
    with tempfile.TemporaryDirectory(prefix="vlbench-entities-") as unpacked:
        try:
            tree, split_file = _locate(root, split, Path(unpacked))
            doc = build_ground_truth(tree, split, split_file, entity_types(benchmark))
        except (FileNotFoundError, ValueError, OSError) as exc:
            raise UsageError(f"cannot prepare {benchmark.id} from {source}: {exc}") from exc
    expected = benchmark.option("source")
    if expected is not None:
        deviation = check_source(
            benchmark, source, source_mismatches(doc, expected), force,
            f"the Flickr30k Entities release's {split} split ({expected['images']:,} images)",
        )
        if deviation is not None:
            doc["source_check"] = deviation
    doc["benchmark"] = benchmark.id
    return [write_ground_truth(doc, prepare_target(benchmark, benchmark.files[0], data_dir))]


def source_mismatches(doc: dict[str, Any], expected: Mapping[str, Any]) -> list[SourceMismatch]:
    """How a prepared ground-truth document differs from the official split's."""
    ids = sorted(doc["images"]["id"], key=lambda i: (len(i), i))
    found = {
        "images": len(ids),
        "sentences": sum(len(s) for s in doc["lookup"].values()),
        "phrases": len(doc["phrases"]["image"]),
        "ids_sha256": sha256_bytes("\n".join(ids).encode()),
    }
    what = {"images": "images in the split file", "sentences": "sentences with a boxed phrase",
            "phrases": "phrases whose chain has a box",
            "ids_sha256": "sha256 of the split's image ids"}
    return [
        SourceMismatch(what[k], f"{expected[k]:,}" if isinstance(expected[k], int) else expected[k],
                       f"{found[k]:,}" if isinstance(found[k], int) else found[k])
        for k in what if k in expected and expected[k] != found[k]
    ]


def _download(repo_id: str) -> Path:
    """A Hugging Face dataset repo holding the official tree (or annotations.zip + split files)."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:
        raise UsageError(
            f"{repo_id} is not a folder, and huggingface_hub is not installed to fetch it "
            "(pip install 'vlbench[hub]')"
        ) from exc
    try:
        path = snapshot_download(
            repo_id=repo_id,
            repo_type="dataset",
            allow_patterns=["*Sentences/*", "*Annotations/*", "*.txt", "*annotations.zip"],
        )
    except Exception as exc:  # the hub client raises many types (network, auth, not found)
        raise UsageError(f"could not download {repo_id} from the Hugging Face hub: {exc}") from exc
    return Path(path)


def _locate(root: Path, split: str, out_dir: Path) -> tuple[Path, Path]:
    """The tree folder and the split file; unpacks the official annotations.zip into `out_dir`
    (a new temporary folder) if that is all there is (the GitHub repository ships Sentences/ and
    Annotations/ zipped next to the split files)."""
    try:
        tree = find_tree(root, split)
        return tree, tree / f"{split}.txt"
    except FileNotFoundError:
        archive = next(iter(sorted(root.rglob("annotations.zip"))), None)
        if archive is None:
            raise
    split_file = archive.parent / f"{split}.txt"
    if not split_file.is_file():
        raise FileNotFoundError(f"no {split}.txt next to {archive}")
    dest = out_dir / "source"
    with zipfile.ZipFile(archive) as z:
        members = [
            n for n in z.namelist()
            if ("Sentences/" in n or "Annotations/" in n) and not n.startswith(("/", ".."))
            and ".." not in Path(n).parts
        ]
        z.extractall(dest, members)
    for candidate in (dest, *sorted(p.parent for p in dest.rglob("Sentences"))):
        if (candidate / "Sentences").is_dir() and (candidate / "Annotations").is_dir():
            return candidate, split_file
    raise FileNotFoundError(f"{archive} holds no Sentences/ and Annotations/ folders")
