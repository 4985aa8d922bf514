"""Karpathy splits from a Hugging Face dataset: a hub id, or a local folder laid out as a hub
dataset repo (the same `datasets` code path reads both).

Only text columns are read (the image id, the captions, their sentence ids and the split), as
streaming tables with parquet column projection (range requests for those columns, not the
dataset's files), and no image is decoded. A dataset that cannot give exactly the official
Karpathy split is refused with one sentence saying what is missing and which source to use
instead, from its file list, schema and dataset card where they tell (no row read):

- a loading script (which `datasets` 4 and newer do not run): a hub id is read from the hub's
  own parquet conversion of it (the `refs/convert/parquet` branch); a local folder is refused;
- a webdataset (tar shards of images and caption text, with neither Karpathy image ids nor
  sentence ids);
- a table with no Karpathy split: no `split` column, and its split of that name holds another
  number of images than Karpathy's (`lmms-lab/flickr30k` keeps all 31,783 Flickr30k images in one
  split called `test`; Karpathy's test split has 1,000; counted from the rows when the card does
  not record the split sizes) -- refused even with `--force`, since no flag can turn the whole
  dataset into the test split;
- a table without an image id column, caption lists or sentence ids.

Whatever passes is checked again as a whole (`check_rows`): every image id present and unique,
every caption with an integer sentence id, no sentence id twice, so a ground truth with empty or
repeated ids cannot be written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from vlbench.backports import strict_zip
from vlbench.errors import UsageError
from vlbench.tasks.karpathy_ids import image_id

PARQUET_BRANCH = "refs/convert/parquet"
KARPATHY_SPLITS = ("train", "restval", "val", "test")
# Hub datasets name Karpathy's `val` split `validation` (the datasets convention).
SPLIT_ALIASES = {"validation": "val"}
# Image id: COCO images are known by `cocoid`, Flickr30k images by their file name's stem.
ID_COLUMNS = ("cocoid", "filename", "file_name")
CAPTION_COLUMNS = ("sentences", "caption", "captions", "sentences_raw")
SENTID_COLUMN = "sentids"
SPLIT_COLUMN = "split"
# Files a dataset folder holds (any one of them makes a folder a dataset for `datasets`).
DATA_SUFFIXES = (".parquet", ".arrow", ".jsonl", ".csv", ".tar", ".py")

# The hub datasets a researcher passes for these benchmarks, and what prepare makes of each
# (README, `vlbench data prepare --help`; tests/tasks/retrieval/test_hub_tables.py builds each
# schema locally).
KNOWN_HUB_DATASETS = {
    "yerevann/coco-karpathy": "works: COCO Karpathy splits (coco-5k, coco-1k, coco-karpathy-test)",
    "nlphuji/flickr30k": "works: Flickr30k Karpathy splits from the hub's parquet conversion (flickr30k-1k)",
    "lmms-lab/flickr30k": "refused: all 31,783 images in one split, no Karpathy split",
    "lmms-lab/COCO-Caption": "refused: COCO 2014 val and test, no Karpathy split",
    "clip-benchmark/wds_*": "refused: webdatasets, without Karpathy image or sentence ids",
}
INSTEAD = {
    "dataset_coco.json": "yerevann/coco-karpathy or the official dataset_coco.json",
    "dataset_flickr30k.json": "nlphuji/flickr30k or the official dataset_flickr30k.json",
}


def instead(filename: str) -> str:
    return INSTEAD.get(filename, f"the official {filename}")


def is_dataset_folder(path: Path) -> bool:
    """A local folder `datasets` can load as a hub dataset repo (data files or a loading script)."""
    return path.is_dir() and any(p.suffix in DATA_SUFFIXES for p in path.rglob("*") if p.is_file())


def _script_dataset(source: str, revision: str | None) -> bool:
    """Whether the dataset is a loading script (`<name>.py` at its root), asked before `datasets`
    sees it: old `datasets` versions would run the script, which downloads the images."""
    name = source.rstrip("/").split("/")[-1]
    path = Path(source)
    if path.is_dir():
        return (path / f"{name}.py").is_file()
    from huggingface_hub import HfApi

    return f"{name}.py" in HfApi().list_repo_files(source, repo_type="dataset", revision=revision)


def _builder(source: str, revision: str | None) -> Any:
    import datasets

    return datasets.load_dataset_builder(source, revision=revision)


def _stream(source: str, revision: str | None, columns: list[str] | None, parquet: bool) -> Any:
    import datasets

    kwargs: dict[str, Any] = {"columns": columns} if parquet and columns else {}
    tables = datasets.load_dataset(source, revision=revision, streaming=True, **kwargs)
    if columns and not parquet:
        tables = {name: table.select_columns(columns) for name, table in tables.items()}
    return tables


def karpathy_from_dataset(source: str, filename: str, split: str, expected_images: int | None,
                          revision: str | None = None) -> list[dict[str, Any]]:
    """The images of a Karpathy split file, as `rows_to_karpathy` entries, from a dataset's rows.

    `filename` names the official file the rows stand for (it names the alternatives in a
    refusal); `expected_images` is the official count of `split`, the only evidence of a
    Karpathy split a table without a `split` column can give.
    """
    where = source
    try:
        script = _script_dataset(source, revision)
    except Exception as exc:  # network, authentication, no such repo: one sentence
        raise UsageError(f"could not list hub dataset {source}: {type(exc).__name__}: {exc}") from None
    if script:
        if Path(source).is_dir():
            raise UsageError(
                f"{source} is a loading-script dataset, which datasets 4 and newer do not run; give its hub id "
                f"(vlbench then reads the hub's parquet conversion of it), or {instead(filename)}")
        revision, where = PARQUET_BRANCH, f"{source} (its parquet conversion, {PARQUET_BRANCH})"
    try:
        builder = _builder(source, revision)
    except Exception as exc:
        raise UsageError(f"could not load {where}: {type(exc).__name__}: {_first_line(exc)}") from None
    files = [str(f) for fs in (builder.config.data_files or {}).values() for f in fs]
    if builder.name == "webdataset" or any(f.endswith(".tar") for f in files):
        raise UsageError(
            f"{where} is a webdataset (tar shards of images and caption text, with neither Karpathy image ids "
            f"nor sentence ids), so its captions cannot be matched to the official split; use {instead(filename)}")
    if any("/partial-" in f.replace(os.sep, "/") for f in files):
        raise UsageError(f"{where} is only partly converted to parquet (the hub converts the first 5 GB); "
                         f"use {instead(filename)}")
    parquet = builder.name == "parquet"
    try:
        tables = _stream(source, revision, None, parquet)
        features = {name: _column_names(table) for name, table in tables.items()}
    except Exception as exc:
        raise UsageError(f"could not read {where}: {type(exc).__name__}: {_first_line(exc)}") from None
    columns = _choose_columns(features, where, filename)
    counts = _split_counts(builder)
    if SPLIT_COLUMN not in columns:
        _check_split_without_column(features, counts, split, expected_images, where, filename)
    try:
        tables = _stream(source, revision, columns, parquet)
        entries = [_entry(row, name, columns, where)
                   for name, table in tables.items() for row in table]
    except UsageError:
        raise
    except Exception as exc:
        raise UsageError(f"could not read {where}: {type(exc).__name__}: {_first_line(exc)}") from None
    if SPLIT_COLUMN not in columns and expected_images is not None:  # counted: a card may not list them
        found = sum(1 for e in entries if e["split"] == split)
        if found != expected_images:
            raise _no_karpathy_split(where, split, found, expected_images, filename)
    check_rows(entries, where)
    return entries


def _column_names(table: Any) -> set[str]:
    """A streaming table's columns: its features, or (json, csv: known only once read) the first
    row's keys."""
    if table.features is not None:
        return set(table.features)
    first = next(iter(table), None)
    return set(first) if isinstance(first, Mapping) else set()


def _choose_columns(features: Mapping[str, set[str]], where: str, filename: str) -> list[str]:
    common = set.intersection(*features.values()) if features else set()
    id_column = next((c for c in ID_COLUMNS if c in common), None)
    caption_column = next((c for c in CAPTION_COLUMNS if c in common), None)
    missing = []
    if id_column is None:
        missing.append("an image id column (" + ", ".join(ID_COLUMNS) + ")")
    if caption_column is None:
        missing.append("a caption column (" + ", ".join(CAPTION_COLUMNS) + ")")
    if SENTID_COLUMN not in common:
        missing.append(f"the Karpathy sentence ids ({SENTID_COLUMN!r})")
    if missing:
        shown = ", ".join(sorted(common)) or "none"
        raise UsageError(f"{where} has no {' and no '.join(missing)} (its columns: {shown}); use {instead(filename)}")
    chosen = [id_column, caption_column, SENTID_COLUMN]
    if SPLIT_COLUMN in common:
        chosen.append(SPLIT_COLUMN)
    return chosen


def _split_counts(builder: Any) -> dict[str, int]:
    """Rows per split as the dataset card records them (empty when it does not)."""
    splits = getattr(builder.info, "splits", None) or {}
    return {str(name): int(s.num_examples) for name, s in splits.items() if getattr(s, "num_examples", None)}


def _check_split_without_column(features: Mapping[str, set[str]], counts: Mapping[str, int], split: str,
                                expected: int | None, where: str, filename: str) -> None:
    """Without a `split` column, the dataset's own splits must be Karpathy's: refused before
    reading any row when the split is missing or its recorded size is not Karpathy's."""
    names = {SPLIT_ALIASES.get(name, name): name for name in features}
    if split not in names:
        raise UsageError(
            f"{where} has no Karpathy split: no {SPLIT_COLUMN!r} column and no split named {split!r} "
            f"(its splits: {', '.join(sorted(features)) or 'none'}); use {instead(filename)}")
    recorded = counts.get(names[split])
    if recorded is not None and expected is not None and recorded != expected:
        raise _no_karpathy_split(where, split, recorded, expected, filename)


def _no_karpathy_split(where: str, split: str, found: int, expected: int, filename: str) -> UsageError:
    return UsageError(
        f"{where} has no Karpathy split: no {SPLIT_COLUMN!r} column, and its split {split!r} holds "
        f"{found:,} images where Karpathy's {split} split has {expected:,}; use {instead(filename)}")


def _entry(row: Mapping[str, Any], table_split: str, columns: list[str], where: str) -> dict[str, Any]:
    id_column, caption_column = columns[0], columns[1]
    raws = _captions(row.get(caption_column), caption_column, where)
    sentids = row.get(SENTID_COLUMN)
    if not isinstance(sentids, (list, tuple)) or len(sentids) != len(raws):
        raise UsageError(f"{where}: a row's {SENTID_COLUMN!r} does not give one sentence id per caption "
                         f"({len(raws)} captions, sentids {_short(sentids)})")
    try:
        ids = [int(s) for s in sentids]
    except (TypeError, ValueError):
        raise UsageError(f"{where}: sentence ids must be integers, found {_short(sentids)}") from None
    split = row.get(SPLIT_COLUMN) if SPLIT_COLUMN in columns else table_split
    entry: dict[str, Any] = {
        "split": SPLIT_ALIASES.get(str(split), str(split)) if split is not None else "",
        "sentids": ids,
        "sentences": [{"sentid": i, "raw": r} for i, r in strict_zip(ids, raws)],
    }
    value = row.get(id_column)
    if id_column == "cocoid":
        entry["cocoid"] = value
    else:
        entry["filename"] = value if isinstance(value, str) else ""
    return entry


def _captions(value: Any, column: str, where: str) -> list[str]:
    """Caption strings of one image: a list of strings, of {"raw": ...} records, or a columnar
    {"raw": [...]} record (how `datasets` gives a sequence of records)."""
    if isinstance(value, Mapping) and isinstance(value.get("raw"), list):
        value = value["raw"]
    if not isinstance(value, (list, tuple)):
        raise UsageError(f"{where}: column {column!r} holds {type(value).__name__} values, not one list of "
                         "captions per image (one row per image is needed)")
    raws = []
    for item in value:
        raw = item.get("raw") if isinstance(item, Mapping) else item
        if not isinstance(raw, str):
            raise UsageError(f"{where}: column {column!r} holds a caption that is not text: {_short(item)}")
        raws.append(raw)
    return raws


def check_rows(entries: Iterable[Mapping[str, Any]], where: str) -> None:
    """Every image id present and unique, no sentence id twice: the checks that make a ground
    truth with empty or repeated ids impossible, whatever the table held."""
    problems: list[str] = []
    empty, seen, repeated, sentids, repeated_sentids = 0, set(), [], set(), []
    for entry in entries:
        iid = image_id(entry) if entry.get("cocoid") is not None or entry.get("filename") else ""
        if not re.fullmatch(r"\S+", iid):
            empty += 1
        elif iid in seen:
            repeated.append(iid)
        seen.add(iid)
        for s in entry["sentids"]:
            if s in sentids:
                repeated_sentids.append(s)
            sentids.add(s)
    if empty:
        problems.append(f"{empty:,} images have no id (an empty or missing cocoid or file name)")
    if repeated:
        problems.append(f"{len(repeated):,} image ids appear more than once (e.g. {repeated[0]!r})")
    if repeated_sentids:
        problems.append(f"{len(repeated_sentids):,} sentence ids appear more than once (e.g. {repeated_sentids[0]})")
    if problems:
        raise UsageError(f"{where} cannot give a ground truth: " + "; ".join(problems))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "no details"
