"""The real caption sets of ../shared/realdata (see its README): loaders for the regression tests,
which skip cleanly when the folder is absent."""

from __future__ import annotations

import json
import os
from pathlib import Path

REALDATA = Path(os.environ.get("VLBENCH_REALDATA", Path(__file__).resolve().parents[4] / "shared" / "realdata"))
DERIVED = REALDATA / "derived"
SETS = "ABCDE"


def available() -> bool:
    return all((DERIVED / f"{s}_{kind}.json").is_file() for s in SETS for kind in ("cands", "refs"))


def load_set(name: str) -> tuple[Path, Path, list[dict], dict]:
    """(candidates path, references path, candidate records, reference document) of set A-E."""
    cands_path, refs_path = DERIVED / f"{name}_cands.json", DERIVED / f"{name}_refs.json"
    return cands_path, refs_path, json.loads(cands_path.read_text()), json.loads(refs_path.read_text())


def pycoco_files(name: str) -> tuple[list[str], list[str]]:
    """The candidate and reference captions in the order pycocoevalcap writes them to the
    tokenizer (images in the references' order, each image's annotations in file order)."""
    _, _, cands, refs = load_set(name)
    order = [img["id"] for img in refs["images"]]
    present = {c["image_id"] for c in cands}
    by_img: dict[object, list[str]] = {}
    for a in refs["annotations"]:
        by_img.setdefault(a["image_id"], []).append(a["caption"])
    cand_of = {c["image_id"]: c["caption"] for c in cands}
    ids = [i for i in order if i in present]
    return [cand_of[i] for i in ids], [r for i in ids for r in by_img.get(i, [])]


def pycoco_tokenized(name: str) -> tuple[list[str], list[list[str]]]:
    """(candidates, references per image) of set A-E, PTB-tokenized in Python as pycocoevalcap
    tokenizes them (its two files, each line's successor as the jar's lexer sees it)."""
    from vlbench.tasks.captioning.ptb import pycoco_successors, tokenize

    cands, flat = pycoco_files(name)
    _, _, records, doc = load_set(name)
    per_image: dict[object, int] = {}
    for a in doc["annotations"]:
        per_image[a["image_id"]] = per_image.get(a["image_id"], 0) + 1
    present = {c["image_id"] for c in records}
    counts = [per_image[i] for i in [img["id"] for img in doc["images"]] if i in present]
    tok, _ = tokenize(cands + flat, pycoco_successors([cands, flat]))
    hyps, rest = tok[: len(cands)], tok[len(cands) :]
    refs, at = [], 0
    for k in counts:
        refs.append(rest[at : at + k])
        at += k
    return hyps, refs


def outside_fast_path() -> tuple[list[str], list[str | None], int]:
    """The captions of sets A-E that the PTB fast path leaves (with each line's successor, in
    pycocoevalcap's file order), and how many captions the sets hold in all."""
    from vlbench.backports import strict_zip
    from vlbench.tasks.captioning.ptb import pycoco_successors
    from vlbench.tasks.captioning.ptb.fast import fast_tokenize_many

    captions: list[str] = []
    successors: list[str | None] = []
    total = 0
    for name in SETS:
        cands, refs = pycoco_files(name)
        total += len(cands) + len(refs)
        flat = cands + refs
        for c, s, t in strict_zip(flat, pycoco_successors([cands, refs]), fast_tokenize_many(flat)):
            if t is None:
                captions.append(c)
                successors.append(s)
    return captions, successors, total
