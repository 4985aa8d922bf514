"""The argument checks pycocoevalcap 1.2's scorers make, with the same exception type
(`AssertionError`) but a sentence saying what is wrong; and its dicts laid out as lists."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any


def image_lists(gts: Mapping[Hashable, Any], res: Mapping[Hashable, Any], strict: bool = True
                ) -> tuple[list[Hashable], list[str], list[list[str]]]:
    """(image ids in `gts` order, each image's candidate, its references), as the scorers iterate
    `gts.keys()`. `strict`: BLEU's, ROUGE-L's, CIDEr's and SPICE's checks (lists, one candidate,
    at least one reference); otherwise METEOR's (one candidate)."""
    if gts.keys() != res.keys():
        only_gts = len(gts.keys() - res.keys())
        only_res = len(res.keys() - gts.keys())
        raise AssertionError(
            f"gts and res must have the same image ids ({only_gts} only in gts, {only_res} only in res)"
        )
    ids = list(gts.keys())
    cands: list[str] = []
    refs: list[list[str]] = []
    for i in ids:
        hypo, ref = res[i], gts[i]
        if strict and type(hypo) is not list:
            raise AssertionError(f"res[{i!r}] must be a list holding one caption, not {type(hypo).__name__}")
        if len(hypo) != 1:
            raise AssertionError(f"res[{i!r}] must hold exactly one caption, not {len(hypo)}")
        if strict and type(ref) is not list:
            raise AssertionError(f"gts[{i!r}] must be a list of captions, not {type(ref).__name__}")
        if strict and len(ref) < 1:
            raise AssertionError(f"gts[{i!r}] holds no reference caption")
        cands.append(hypo[0])
        refs.append(list(ref))
    return ids, cands, refs
