"""How a Karpathy split record names its image: `cocoid` for COCO, else the file name's stem (the
Flickr id). Apart from `karpathy.py` because the hub-table reader (`retrieval/hub_tables.py`),
which `karpathy.py` calls for a hub dataset, checks the same ids: both import it from here."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def image_id(entry: Mapping[str, Any]) -> str:
    """COCO images are known by `cocoid`; Flickr30k images by their file name's stem (Flickr id)."""
    return image_id_of(entry.get("cocoid"), entry["filename"] if entry.get("cocoid") is None else None)


def image_id_of(cocoid: Any, filename: Any) -> str:
    return str(cocoid) if cocoid is not None else Path(str(filename)).stem
