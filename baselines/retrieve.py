"""Embeddings once, in batches; similarities and top-K on the device, one chunk of queries at a time.

A chunk's score matrix is `chunk_size x gallery` floats, so ranking 5,000 ODmAP queries against a
616k-caption gallery needs about 2.5 GB per 1,000 queries in fp32 and never the full matrix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vlbench.progress import bar

from .runtime import autocast


def embed_images(model: Any, preprocess: Callable[[Any], Any], paths: Sequence[Path], *, device: str,
                 precision: str, batch_size: int, workers: int = 0, progress: bool = True) -> Any:
    """L2-normalised image embeddings (float32, on `device`; computed in `precision`, see
    `runtime.autocast`), in the order of `paths`."""
    import torch
    from PIL import Image
    from torch.utils.data import DataLoader

    class Images:
        def __len__(self) -> int:
            return len(paths)

        def __getitem__(self, i: int) -> Any:
            with Image.open(paths[i]) as im:
                return preprocess(im.convert("RGB"))

    out = []
    loader = DataLoader(Images(), batch_size=batch_size, num_workers=workers, pin_memory=device.startswith("cuda"))
    with torch.no_grad(), autocast(precision, device), bar(len(paths), "images", "item", show=progress) as shown:
        for batch in loader:
            out.append(model.encode_image(batch.to(device, non_blocking=True), normalize=True).float())
            shown.update(len(batch))
    return torch.cat(out) if out else torch.empty(0, device=device)


def embed_texts(model: Any, tokenizer: Callable[[list[str]], Any], texts: Sequence[str], *, device: str,
                precision: str, batch_size: int, progress: bool = True) -> Any:
    """L2-normalised text embeddings, as `embed_images`."""
    import torch

    out = []
    with torch.no_grad(), autocast(precision, device), bar(len(texts), "texts", "item", show=progress) as shown:
        for lo in range(0, len(texts), batch_size):
            tokens = tokenizer(list(texts[lo : lo + batch_size])).to(device)
            out.append(model.encode_text(tokens, normalize=True).float())
            shown.update(len(tokens))
    return torch.cat(out) if out else torch.empty(0, device=device)


def topk(queries: Any, gallery: Any, k: int, chunk_size: int) -> Any:
    """Indices (cpu int64, queries x k) of the k most similar gallery rows, best first.

    Ties are broken by gallery index (lower first) so the ranking is reproducible on every device:
    `torch.topk` alone does not promise an order among equal scores.
    """
    import torch

    k = min(k, gallery.shape[0])
    rows = []
    for lo in range(0, queries.shape[0], chunk_size):
        scores = queries[lo : lo + chunk_size] @ gallery.T
        # a few extra candidates, so exact ties at the k-th place are resolved by index too
        values, idx = scores.topk(min(gallery.shape[0], k + 16), dim=1)
        idx, by_index = idx.sort(dim=1)
        values = values.gather(1, by_index)
        order = values.sort(dim=1, descending=True, stable=True).indices[:, :k]
        rows.append(idx.gather(1, order).cpu())
    return torch.cat(rows) if rows else torch.empty(0, k, dtype=torch.long)
