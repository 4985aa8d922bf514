"""ROUGE-L per image (pycocoevalcap's Rouge): LCS lengths by a bit-parallel algorithm over the
captions' token ids."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlbench.tasks.captioning.corpus import (
    KEY_BITS,
    Corpus,
    Layout,
    bit_width,
    first_of_runs,
    image_major,
    token_ids,
)

ROUGE_BETA = 1.2
_WORD = 64  # bits per machine word of the bit-parallel LCS
_ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
_BYTE_BITS = np.array([bin(b).count("1") for b in range(256)], dtype=np.uint8)


def popcount_by_bytes(words: np.ndarray) -> np.ndarray:
    """Set bits per uint64 word, by a byte table (numpy before 2.0 has no bitwise_count)."""
    as_bytes = np.ascontiguousarray(words, dtype=np.uint64).view(np.uint8)
    return _BYTE_BITS[as_bytes].reshape(*words.shape, 8).sum(axis=-1, dtype=np.uint8)


# EvalAI's Python 3.9 workers pin numpy 1.26, which lacks np.bitwise_count (numpy 2.0).
popcount = getattr(np, "bitwise_count", popcount_by_bytes)



def rouge_l(
    cands: Sequence[str], refs: Sequence[Sequence[str]], beta: float = ROUGE_BETA, corpus: Corpus | None = None
) -> np.ndarray:
    """Per-image ROUGE-L: LCS on single-space tokens; P and R maxima over references taken
    independently; F = (1 + b^2) P R / (R + b^2 P), 0 if either is 0.

    `corpus` (built from the same captions) lends its token ids when they are the same tokens."""
    n = len(cands)
    if corpus is not None and corpus.single_spaced and corpus.tok is not None and corpus.lengths is not None:
        layout, tok, lengths = corpus.layout, corpus.tok, corpus.lengths
        # "".split(" ") is [""]: one empty token, which matches only another empty caption's
        empty = lengths == 0
    else:
        layout = Layout.of(np.fromiter(map(len, refs), dtype=np.int64, count=len(refs)))
        tok, lengths, _ = token_ids([c.split(" ") for c in image_major(cands, refs)])
        empty = np.zeros(len(lengths), dtype=bool)  # "" is a real token here
    lcs = lcs_lengths(tok, lengths, layout)
    cand_of_ref = layout.cand_cap[layout.ref_image]
    lcs = np.where(empty[cand_of_ref] & empty[layout.ref_cap], 1, lcs)
    lc = np.maximum(lengths[cand_of_ref], 1)
    lr = np.maximum(lengths[layout.ref_cap], 1)
    img = layout.ref_image
    prec = lcs / lc
    rec = lcs / lr
    p_max = np.full(n, -np.inf)
    r_max = np.full(n, -np.inf)
    np.maximum.at(p_max, img, prec)
    np.maximum.at(r_max, img, rec)
    out = np.zeros(n)
    ok = (p_max != 0) & (r_max != 0) & np.isfinite(p_max) & np.isfinite(r_max)
    out[ok] = ((1 + beta**2) * p_max[ok] * r_max[ok]) / (r_max[ok] + beta**2 * p_max[ok])
    return out


def lcs_lengths(tok: np.ndarray, lengths: np.ndarray, layout: Layout) -> np.ndarray:
    """LCS length of every (candidate, reference) pair of an image (one per reference), from
    flat token ids of the captions in `layout` order.

    Bit-parallel LCS (Allison-Dix 1986, Hyyro 2004): per reference a bit vector V (one bit per
    reference token, in 64-bit words, initially all ones), and per candidate token t the mask
    M_t of the reference positions holding t: V <- (V + (V & M_t)) | (V & ~M_t); the LCS is the
    number of zero bits. Exact, and O(|cand| * ceil(|ref| / 64)) word operations per pair,
    vectorised over pairs (pycocoevalcap runs the O(|cand| |ref|) dynamic program in Python).
    The masks come from one sort of (token, code, offset): equal tokens of an image are adjacent,
    the candidate's first."""
    n_refs = len(layout.ref_cap)
    out = np.zeros(n_refs, dtype=np.int64)
    if n_refs == 0 or len(tok) == 0:
        return out
    n_caps = len(lengths)
    off_bits = bit_width(int(lengths.max()))
    code_bits = bit_width(layout.n_codes)
    offset = np.arange(len(tok), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    code = np.repeat(layout.cap_code[:n_caps], lengths)
    low = (code << off_bits) | offset
    low_bits = code_bits + off_bits
    tok = tok.astype(np.int64, copy=False)
    if bit_width(int(tok.max()) + 1) + low_bits <= KEY_BITS:
        keys = np.sort((tok << low_bits) | low)
        stok = keys >> low_bits
        code = (keys >> off_bits) & ((1 << code_bits) - 1)
        offset = keys & ((1 << off_bits) - 1)
    else:
        order = np.lexsort((low, tok))
        stok, code, offset = tok[order], code[order], offset[order]
    image = code >> layout.slot_bits
    is_cand = (code & ((1 << layout.slot_bits) - 1)) == 0
    start = first_of_runs(stok, image)
    gid = np.cumsum(start) - 1
    head = np.flatnonzero(start)
    n_cand = np.bincount(gid[is_cand], minlength=len(head))[gid]
    # the mask of a token in one 64-bit word of a reference: the sum (= OR, distinct bits) over
    # its run of entries (token, code and word equal; adjacent in this order)
    word = offset >> 6
    rs = np.flatnonzero(~is_cand & (n_cand > 0))  # reference entries sharing the candidate's token
    run = np.flatnonzero(first_of_runs(stok[rs], code[rs], word[rs]))
    bit = np.left_shift(np.uint64(1), (offset[rs] & (_WORD - 1)).astype(np.uint64))
    run_mask = np.add.reduceat(bit, run) if len(run) else bit
    run_entry = rs[run]
    # each run once per candidate entry of its group (those are the group's first entries): one
    # entry per (reference, candidate offset, word) at most, so never more than the mask cells
    reps = n_cand[run_entry]
    r_entry = np.repeat(run_entry, reps)
    c_first = head[gid[run_entry]] - (np.cumsum(reps) - reps)  # minus the run's first output slot
    c_entry = np.repeat(c_first, reps) + np.arange(len(r_entry), dtype=np.int64)
    ref = layout.code_ref[code[r_entry]]
    a = offset[c_entry]  # candidate offset
    j = word[r_entry]  # word of the reference
    bits = np.repeat(run_mask, reps)

    lc = lengths[layout.cand_cap][layout.ref_image]
    lr = lengths[layout.ref_cap]
    words = (lr + _WORD - 1) // _WORD
    for w in np.unique(words[lc > 0]):
        if w > 0:
            pairs, lcs = _bitparallel(np.flatnonzero((words == w) & (lc > 0)), lc, lr, (ref, a, j, bits), int(w))
            out[pairs] = lcs
    return out


def _bitparallel(
    pairs: np.ndarray,
    lc: np.ndarray,
    lr: np.ndarray,
    matches: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    w: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(pairs, their LCS lengths) for the reference pairs `pairs` (all of `w` words), from the
    match masks (reference, candidate offset, word of the reference, bits)."""
    ref, a, j, bits = matches
    # pairs by candidate length, longest first: at step t the active pairs are a prefix
    pairs = pairs[np.argsort(-lc[pairs], kind="stable")]
    plc = lc[pairs]
    local = np.full(len(lc), -1, dtype=np.int64)
    local[pairs] = np.arange(len(pairs), dtype=np.int64)
    # masks[(row[pair] + t) * w + word]: the match mask of candidate token t in the reference
    row = np.cumsum(plc) - plc
    pair_of = local[ref]
    sel = pair_of >= 0
    cell = (row[pair_of[sel]] + a[sel]) * w + j[sel]
    masks = np.zeros(int(plc.sum()) * w, dtype=np.uint64)
    masks[cell] = bits[sel]  # one entry per cell
    masks = masks.reshape(-1, w)
    v = np.full((len(pairs), w), _ALL_ONES)
    steps = int(plc[0]) if len(plc) else 0
    # pairs whose candidate has more than t tokens (plc is non-increasing)
    n_active = len(plc) - np.searchsorted(plc[::-1], np.arange(steps), side="right")
    for t in range(steps):
        active = int(n_active[t])
        m = masks[row[:active] + t]
        cur = v[:active]
        u = cur & m
        if w == 1:  # V + U | V - U, with V - U = V & ~M since U = V & M
            v[:active] = (cur + u) | (cur & ~m)
            continue
        carry = np.zeros(active, dtype=np.uint64)
        new = np.empty_like(cur)
        for k in range(w):  # multi-word addition, low word first
            s = cur[:, k] + u[:, k]
            s2 = s + carry
            carry = ((s < cur[:, k]) | (s2 < s)).astype(np.uint64)
            new[:, k] = s2 | (cur[:, k] & ~m[:, k])
        v[:active] = new
    # zeros among the first lr bits (carries may clear bits above the reference's length)
    fill = np.clip(lr[pairs][:, None] - _WORD * np.arange(w, dtype=np.int64)[None, :], 0, _WORD)
    low = np.left_shift(np.uint64(1), np.minimum(fill, _WORD - 1).astype(np.uint64)) - np.uint64(1)
    mask = np.where(fill >= _WORD, _ALL_ONES, low)
    return pairs, popcount(~v & mask).astype(np.int64).sum(axis=1)
