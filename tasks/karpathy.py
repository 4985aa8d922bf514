"""The Karpathy split file (`dataset_coco.json`, `dataset_flickr30k.json`, the mini world's
`dataset_mini.json`): the one reader of the format, and where such a file comes from (a path, a
folder, or the hub).

Format (Karpathy & Fei-Fei 2015, as distributed with NeuralTalk): `{"images": [{"split", "sentids",
"sentences": [{"sentid", "raw", "tokens"}], "filename", "filepath"?, "cocoid"?, "imgid"?}],
"dataset": ...}`, with `split` in train / restval / val / test.

`read_karpathy` turns a parsed document into `KarpathyEntry` records, in file order, with each
field as the file writes it (None when absent): every task and recipe reads the file through it.
`parse_karpathy` is the retrieval view (image ids, captions in `sentids` order); `check_karpathy`
says how a document differs from the official file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlbench.errors import UsageError
from vlbench.hashing import sha256_file
from vlbench.jsonio import read_trusted_json
from vlbench.source_check import SourceMismatch
from vlbench.tasks.karpathy_ids import image_id_of

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
# Set on documents assembled from a hub dataset's rows (not a file): they carry no `dataset`
# field, and their split names are the hub's.
FROM_ROWS = "vlbench_from_hub_rows"


@dataclass(frozen=True)
class KarpathyFile:
    """What an official Karpathy split file holds (counts from the files of caption_datasets.zip,
    as the decorrelated card states them: COCO 123,287 images / 616,767 captions, Flickr30k
    155,070 captions)."""

    dataset: str  # the file's top-level `dataset` field
    splits: Mapping[str, int]  # images per split
    captions: int  # sentences in the whole file
    min_captions: int = 5  # per test image (the benchmarks keep the first five)


OFFICIAL = {
    "dataset_coco.json": KarpathyFile("coco", {"train": 82_783, "restval": 30_504, "val": 5_000, "test": 5_000}, 616_767),
    "dataset_flickr30k.json": KarpathyFile("flickr30k", {"train": 29_000, "val": 1_014, "test": 1_000}, 155_070),
}
# Files known by their bytes that look like a Karpathy file but are not the official one.
KNOWN_SUBSTITUTES = {
    "29a00046d7310170dd1f9edc2a25d0fbf0254b22b20f00613aef4be5a781b48a": (
        "the reconstructed test-only Flickr30k file (dataset_flickr30k_test_reconstructed.json, built from "
        "NeuralTalk result_struct: tokenised captions as raw text, sentids 5*imgid+j), not dataset_flickr30k.json"
    ),
}


def expected_file(source_file: str) -> KarpathyFile | None:
    """The official file's shape, or, for the mini world's own file, the shape the generator
    gives it by default (`vlbench data mini`)."""
    if source_file in OFFICIAL:
        return OFFICIAL[source_file]
    if source_file == "dataset_mini.json":
        from vlbench.tasks.mini.build import MiniConfig

        c = MiniConfig()
        splits = {"train": c.n_train, "val": c.n_val, "test": c.n_test}
        return KarpathyFile("mini", splits, c.captions_per_image * sum(splits.values()), c.captions_per_image)
    return None


def _n(count: int) -> str:
    return f"{count:,}"


def check_karpathy(doc: Mapping[str, Any], source_file: str, split: str = "test",
                   source_sha256: str | None = None) -> list[SourceMismatch]:
    """Every way `doc` differs from the official `source_file` (empty: it is that file, as far as
    its dataset name, split sizes and caption counts tell). Rows from a hub dataset are held to the
    same counts, but their split names and missing `dataset` field are the hub's, not errors."""
    expected = expected_file(source_file)
    images = doc.get("images") if isinstance(doc, Mapping) else None
    if expected is None or not isinstance(images, list):
        return []
    found: list[SourceMismatch] = []
    if source_sha256 in KNOWN_SUBSTITUTES:
        found.append(SourceMismatch("file (by sha256)", f"the official {source_file}",
                                    KNOWN_SUBSTITUTES[source_sha256]))
    from_rows = bool(doc.get(FROM_ROWS))
    dataset = doc.get("dataset")
    if not (from_rows and dataset is None) and dataset != expected.dataset:
        found.append(SourceMismatch("the 'dataset' field", repr(expected.dataset),
                                    "no 'dataset' field" if dataset is None else repr(dataset)))
    counts: dict[str, int] = {}
    short = 0
    for entry in images:
        name = str(entry.get("split", "")) if isinstance(entry, Mapping) else ""
        counts[name] = counts.get(name, 0) + 1
        if name == split and len(entry.get("sentences") or []) < expected.min_captions:
            short += 1
    if counts.get(split, 0) != expected.splits[split]:
        found.append(SourceMismatch(f"images in split {split!r}", _n(expected.splits[split]), _n(counts.get(split, 0))))
    if short:
        found.append(SourceMismatch(f"captions per {split} image", f"at least {expected.min_captions}",
                                    f"fewer on {_n(short)} images"))
    if from_rows:
        if len(images) != sum(expected.splits.values()):
            found.append(SourceMismatch("images in all splits", _n(sum(expected.splits.values())), _n(len(images))))
    else:
        order = [*expected.splits, *sorted(set(counts) - set(expected.splits))]
        want = ", ".join(f"{k} {_n(v)}" for k, v in expected.splits.items())
        have = ", ".join(f"{k or '(none)'} {_n(counts[k])}" for k in order if k in counts)
        if {k: v for k, v in counts.items()} != dict(expected.splits):
            found.append(SourceMismatch("images per split", want, have))
    captions = sum(len(e.get("sentences") or []) for e in images if isinstance(e, Mapping))
    if captions != expected.captions:
        found.append(SourceMismatch("captions in the file", _n(expected.captions), _n(captions)))
    return found


def source_description(source_file: str) -> str:
    expected = expected_file(source_file)
    if expected is None:
        return source_file
    splits = ", ".join(f"{k} {_n(v)}" for k, v in expected.splits.items())
    return f"{source_file} with dataset {expected.dataset!r}, images per split {splits}, {_n(expected.captions)} captions"


def source_sha256(source: str | os.PathLike, filename: str) -> str | None:
    """sha256 of the local file `load_karpathy` reads (None for a hub source)."""
    path = Path(source)
    if path.is_dir():
        path = path / filename
    return sha256_file(path) if path.is_file() else None


@dataclass(frozen=True)
class KarpathySentence:
    sentid: Any  # as written (an int in the official files; manifests write it back as is)
    raw: Any  # the caption text as written; None when the sentence has no "raw"
    tokens: tuple[str, ...]


@dataclass(frozen=True)
class KarpathyEntry:
    """One record of the file's `images` list, each field as written (None when absent)."""

    split: Any
    filename: Any
    filepath: Any
    cocoid: Any  # COCO's image id (None outside COCO)
    imgid: Any
    sentids: tuple[Any, ...] | None
    sentences: tuple[KarpathySentence, ...]

    @property
    def image_id(self) -> str:
        """See `image_id`; KeyError("filename") when the record has neither id."""
        if self.cocoid is None and self.filename is None:
            raise KeyError("filename")
        return image_id_of(self.cocoid, self.filename)

    @property
    def numeric_image_id(self) -> Any:
        """The id COCO caption files give the image: `cocoid`, else the file name's digits when
        they end its stem (Flickr30k's `1000092795.jpg`), else `imgid` (KeyError when absent)."""
        if self.cocoid is not None:
            return self.cocoid
        if isinstance(self.filename, str):
            stem = Path(self.filename).stem
            m = _DIGITS.search(stem)
            if m and m.group(1) == stem.split("_")[-1]:
                return int(m.group(1))
        if self.imgid is None:
            raise KeyError("imgid")
        return self.imgid


_DIGITS = re.compile(r"(\d+)")
_NOT_RECORDS = ("not a Karpathy split file: images[{n}] is not an image record with integer sentids and "
                "sentences with integer sentid")


def read_karpathy(doc: Any) -> list[KarpathyEntry]:
    """Every record of a parsed Karpathy document, in file order. A `UsageError` names the first
    record that is not an object with a list of sentence objects."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("images"), list):
        raise UsageError("not a Karpathy split file: expected {\"images\": [...]} at the top level")
    entries = []
    for n, entry in enumerate(doc["images"]):
        sentences = entry.get("sentences", []) if isinstance(entry, Mapping) else None
        sentids = entry.get("sentids") if isinstance(entry, Mapping) else None
        if not isinstance(sentences, list) or not all(isinstance(s, Mapping) for s in sentences) or not (
                sentids is None or isinstance(sentids, list)):
            raise UsageError(_NOT_RECORDS.format(n=n))
        entries.append(KarpathyEntry(
            split=entry.get("split"), filename=entry.get("filename"), filepath=entry.get("filepath"),
            cocoid=entry.get("cocoid"), imgid=entry.get("imgid"),
            sentids=None if sentids is None else tuple(sentids),
            sentences=tuple(KarpathySentence(s.get("sentid"), s.get("raw"), _tokens(s.get("tokens")))
                            for s in sentences),
        ))
    return entries


def _tokens(value: Any) -> tuple[str, ...]:
    return tuple(value) if isinstance(value, list) else ()


@dataclass(frozen=True)
class Caption:
    id: str
    image_id: str
    raw: str


@dataclass(frozen=True)
class KarpathyImage:
    """An image as retrieval sees it: its id and its captions in `sentids` order."""

    id: str
    split: str
    filename: str
    captions: tuple[Caption, ...]


def parse_karpathy(doc: Mapping[str, Any]) -> list[KarpathyImage]:
    """All images of a Karpathy document, in file order (the order the 1K folds are cut from)."""
    return karpathy_images(read_karpathy(doc))


def karpathy_images(entries: list[KarpathyEntry]) -> list[KarpathyImage]:
    """The retrieval view of `read_karpathy`'s records, one image each."""
    images = []
    for n, entry in enumerate(entries):
        try:
            iid = entry.image_id
            if any(s.sentid is None for s in entry.sentences):
                raise KeyError("sentid")
            by_id = {int(s.sentid): s for s in entry.sentences}
            # `sentids` fixes the caption order (the ECCV/VSE++ convention keeps sentids[:5]).
            order = [int(s) for s in (by_id if entry.sentids is None else entry.sentids)]
            captions = tuple(Caption(str(sid), iid, str("" if by_id[sid].raw is None else by_id[sid].raw))
                             for sid in order if sid in by_id)
        except KeyError as exc:  # a damaged or foreign file: one sentence, not a traceback
            raise UsageError(f"not a Karpathy split file: images[{n}] has no {exc.args[0]!r} field "
                             "(each image needs filename or cocoid, sentids and sentences with sentid)") from None
        except (TypeError, ValueError):
            raise UsageError(_NOT_RECORDS.format(n=n)) from None
        images.append(KarpathyImage(iid, str("" if entry.split is None else entry.split),
                                    str("" if entry.filename is None else entry.filename), captions))
    return images


def load_karpathy(source: str | os.PathLike, filename: str, split: str = "test") -> dict[str, Any]:
    """Read a Karpathy document from a file, a folder holding `filename`, a folder laid out as a
    hub dataset, or a hub dataset id (`split`: the one the benchmark keeps, for a table's checks)."""
    from vlbench.tasks.retrieval.hub_tables import is_dataset_folder

    path = Path(source)
    if path.is_dir() and not (path / filename).is_file() and is_dataset_folder(path):
        return load_karpathy_rows(str(source), filename, split)
    if path.is_dir():
        path = path / filename
    if path.is_file():
        return read_trusted_json(path)
    if isinstance(source, str) and HUB_ID.match(source) and not path.exists():
        return load_karpathy_from_hub(source, filename, split)
    raise UsageError(f"no Karpathy split file at {source} (expected {filename}, a folder holding it, a hub dataset "
                     "folder, or a hub id)")


def load_karpathy_from_hub(repo_id: str, filename: str, split: str = "test",
                           revision: str | None = None) -> dict[str, Any]:
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
    return load_karpathy_rows(repo_id, filename, split, revision)


def load_karpathy_rows(source: str, filename: str, split: str = "test", revision: str | None = None) -> dict[str, Any]:
    """A Karpathy document from a hub dataset's rows (a hub id, or a local folder laid out as one)."""
    try:
        import datasets  # noqa: F401
    except ImportError as exc:
        raise UsageError("loading a hub dataset needs: pip install 'vlbench[hub]'") from exc
    from vlbench.tasks.retrieval.hub_tables import karpathy_from_dataset

    expected = expected_file(filename)
    images = karpathy_from_dataset(source, filename, split, expected.splits[split] if expected else None, revision)
    return {"images": images, FROM_ROWS: source}
