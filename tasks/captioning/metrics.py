"""Caption metrics on PTB-tokenized strings, written from the pycocoevalcap 1.2 specification
(`shared/reference/caption_metrics.md` §2), vectorised with numpy.

Inputs: `cands[i]` is the tokenized candidate of image i, `refs[i]` its list of tokenized
references. BLEU and CIDEr split tokens on any whitespace (`str.split()`), ROUGE-L on a
single space (`str.split(" ")`, so "" is one empty token), exactly as the reference does.

Design (speed; pycocoevalcap builds Python dicts of n-gram tuples per caption): tokens are
interned once to integer ids, captions laid out image by image (image i's candidate, then its
references), and each caption labelled with a code `image << slot_bits | slot` (slot 0: the
candidate). Every n-gram order is then indexed by one `np.sort` of int64 keys
(n-gram id << code bits | code): equal keys are one caption's occurrences of one n-gram, and
the entries of one (n-gram, image) are adjacent with the candidate's first. BLEU's clipping,
CIDEr's document frequency and the candidate's weight under each reference n-gram are read off
neighbouring entries: no hashing, no searchsorted, no Python loop over captions or n-grams.
ROUGE-L sorts (token, code, offset) once to build the match masks of a bit-parallel LCS.
Sums run in another order than the reference's dict order, so floats can differ in the last
bits (tests hold them to 1e-9).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

MAX_N = 4
BLEU_SMALL = 1e-9
BLEU_TINY = 1e-15
ROUGE_BETA = 1.2
CIDER_SIGMA = 6.0
CIDER_D_SCALE = 10.0

KEY_BITS = 63  # int64 sort keys stay non-negative
_WORD = 64  # bits per machine word of the bit-parallel LCS
_ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
_BYTE_BITS = np.array([bin(b).count("1") for b in range(256)], dtype=np.uint8)


def popcount_by_bytes(words: np.ndarray) -> np.ndarray:
    """Set bits per uint64 word, by a byte table (numpy before 2.0 has no bitwise_count)."""
    as_bytes = np.ascontiguousarray(words, dtype=np.uint64).view(np.uint8)
    return _BYTE_BITS[as_bytes].reshape(*words.shape, 8).sum(axis=-1, dtype=np.uint8)


# EvalAI's Python 3.9 workers pin numpy 1.26, which lacks np.bitwise_count (numpy 2.0).
popcount = getattr(np, "bitwise_count", popcount_by_bytes)


def _bits(bound: int) -> int:
    """Bits needed for the integers 0..bound-1."""
    return max(1, (int(bound) - 1).bit_length())


# ---------------------------------------------------------------------------------------------
# n-gram indexing shared by BLEU and CIDEr


@dataclass
class NGrams:
    """Distinct (caption, n-gram) pairs with their counts, for one order n.

    `cap[k]`, `gram[k]`, `count[k]`: caption label (its code in a `Layout`), n-gram id (dense
    per order, numbered in sorted order), count in that caption; sorted by (gram, caption)."""

    cap: np.ndarray
    gram: np.ndarray
    count: np.ndarray
    n_grams: int


def sort_keys(keys: np.ndarray, bound: int, key_bits: int = KEY_BITS) -> tuple[np.ndarray, np.ndarray]:
    """(stable argsort, sorted keys) of non-negative int64 keys below `bound`.

    When a key and its index fit together in `key_bits` bits, one `np.sort` of
    (key << b | index) does it: the index breaks ties, so the order is stable, and numpy's
    vectorised integer sort is about 3x faster than `np.argsort` here. Otherwise a plain stable
    argsort."""
    n = len(keys)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    b = _bits(n)
    if _bits(bound) + b <= key_bits:
        packed = np.sort((keys << b) | np.arange(n, dtype=np.int64))
        return packed & ((1 << b) - 1), packed >> b
    order = np.argsort(keys, kind="stable")
    return order, keys[order]


def _first_of_runs(*columns: np.ndarray) -> np.ndarray:
    """True where any column differs from the previous entry (and at entry 0)."""
    n = len(columns[0])
    first = np.empty(n, dtype=bool)
    if n:
        first[0] = True
        np.not_equal(columns[0][1:], columns[0][:-1], out=first[1:])
        for c in columns[1:]:
            first[1:] |= c[1:] != c[:-1]
    return first


def _dense_ranks(keys: np.ndarray, bound: int, key_bits: int) -> tuple[np.ndarray, int]:
    """Dense ranks (0..k-1, in key order) of int64 keys below `bound`, and k."""
    order, skeys = sort_keys(keys, bound, key_bits)
    first = _first_of_runs(skeys)
    ranks = np.empty(len(keys), dtype=np.int64)
    ranks[order] = np.cumsum(first) - 1
    return ranks, int(first.sum())


def index_ngram_ids(
    tok: np.ndarray,
    lengths: np.ndarray,
    v: int,
    max_n: int = MAX_N,
    labels: np.ndarray | None = None,
    key_bits: int = KEY_BITS,
) -> list[NGrams]:
    """Per order n = 1..max_n, the distinct (caption, n-gram) pairs and counts of every caption,
    from flat token ids (`tok`, ids < v), caption lengths and distinct non-negative caption
    labels (default: the caption index).

    The n-gram at position p is the integer G_n(p) = G_{n-1}(p) * v + tok[p + n - 1] while that
    fits beside the label in `key_bits`; past that, G_{n-1} is first replaced by its dense rank
    (fewer values than positions), so any n and v work (G_n itself is ranked if even that does
    not fit). (G_n << label bits | label) is sorted once per order; runs of equal keys are the
    (caption, n-gram) pairs."""
    total = len(tok)
    n_caps = len(lengths)
    labels = np.arange(n_caps, dtype=np.int64) if labels is None else labels.astype(np.int64, copy=False)
    label_bits = _bits(int(labels.max(initial=0)) + 1)
    label_of = np.repeat(labels, lengths)
    # tokens left in the caption from each position (the n-gram at p exists if remaining >= n)
    remaining = np.repeat(lengths, lengths) - (
        np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    )
    v = max(1, int(v))
    grams = tok.astype(np.int64, copy=True)
    bound = v
    out: list[NGrams] = []
    for n in range(1, max_n + 1):
        valid = None if n == 1 else remaining >= n
        if n > 1:
            if _bits(bound * v) + label_bits > key_bits:
                # G * v would not fit beside the label: rank G first (cheaper than ranking G * v
                # later, since (G, position) still packs into one sortable int64)
                grams, bound = _dense_ranks(grams, bound, key_bits)
            m = max(total - (n - 1), 0)
            grams[:m] = grams[:m] * v + tok[n - 1 :]
            grams[m:] = 0  # no n-gram starts there (keeps every value below the bound)
            bound *= v
        if _bits(bound) + label_bits > key_bits:
            ranks, bound = _dense_ranks(grams if valid is None else grams[valid], bound, key_bits)
            if valid is None:
                grams = ranks
            else:
                grams = np.zeros(total, dtype=np.int64)
                grams[valid] = ranks
        keys = (grams << label_bits) | label_of
        if valid is not None:
            keys = keys[valid]
        keys.sort()
        first = _first_of_runs(keys)
        starts = np.flatnonzero(first)
        count = np.diff(np.append(starts, len(keys)))
        entry = keys[starts]
        gram = entry >> label_bits
        new_gram = _first_of_runs(gram)
        dense = np.cumsum(new_gram) - 1
        out.append(
            NGrams(cap=entry & ((1 << label_bits) - 1), gram=dense, count=count, n_grams=int(new_gram.sum()))
        )
    return out


def token_ids(token_lists: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray, int]:
    """(flat token ids, lengths, vocabulary size); ids in order of first appearance."""
    flat = [w for toks in token_lists for w in toks]
    vocab = {w: i for i, w in enumerate(dict.fromkeys(flat))}
    tok = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))
    lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
    return tok, lengths, len(vocab)


def word_ids(joined: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(flat token ids, tokens per line, vocabulary size) of a text whose lines hold tokens
    separated by single spaces (no other whitespace, as `_single_spaced` checks).

    Numpy over the UTF-8 bytes instead of a dict lookup per token (twice as fast): a token of at
    most 8 bytes is exactly the big-endian integer of its bytes (no NUL byte: UTF-8 text has one
    only for U+0000, and then the dict path is used); longer tokens go through a dict."""
    buf = joined.encode("utf-8")
    if b"\x00" in buf:
        tok, lengths, v = token_ids([line.split() for line in joined.split("\n")])
        return tok, lengths, v
    b = np.frombuffer(b"\n" + buf + b"\n" * 8, dtype=np.uint8)  # newline padding on both ends
    sep = (b == ord(" ")) | (b == ord("\n"))
    word = ~sep
    starts = np.flatnonzero(word[1:] & sep[:-1]) + 1
    ends = np.flatnonzero(word[:-1] & sep[1:]) + 1
    length = ends - starts
    # 8 bytes from every offset, read as big-endian integers (an overlapping strided view)
    eight = np.ndarray(shape=(len(b) - 7,), dtype=">u8", buffer=b, strides=(1,))
    short = length <= 8
    drop = (8 * (8 - np.minimum(length, 8))).astype(np.uint64)  # bytes past the token's end
    key = np.where(short, eight[starts].astype(np.uint64) >> drop, 0)
    order = np.argsort(key)
    first = _first_of_runs(key[order])
    tok = np.empty(len(key), dtype=np.int64)
    tok[order] = np.cumsum(first) - 1
    v = int(first.sum())
    long_words = np.flatnonzero(~short)
    if len(long_words):
        # key 0 (no short token has it: they are non-empty, without NUL) stood for the long ones
        tok -= 1
        v -= 1
        vocab: dict[bytes, int] = {}
        raw = b.tobytes()
        spans = zip(starts[long_words].tolist(), ends[long_words].tolist(), strict=True)
        ids = [vocab.setdefault(raw[s:e], len(vocab)) for s, e in spans]
        tok[long_words] = np.array(ids, dtype=np.int64) + v
        v += len(vocab)
    newlines = np.flatnonzero(b[1 : len(buf) + 1] == ord("\n")) + 1
    lengths = np.diff(np.concatenate(([0], np.searchsorted(starts, newlines), [len(starts)])))
    return tok, lengths, v


@dataclass
class Layout:
    """Captions in image-major order: image i's candidate, then its references in order.

    Caption c has the code `image << slot_bits | slot` (slot 0: the candidate, 1..: the
    references), increasing with c. References are numbered image by image, as `refs` lists
    them."""

    n_images: int
    slot_bits: int
    cap_code: np.ndarray  # per caption
    cand_cap: np.ndarray  # caption index of each image's candidate
    ref_cap: np.ndarray  # caption index of each reference
    ref_image: np.ndarray  # image of each reference
    code_ref: np.ndarray  # per code: reference index, -1 for a candidate or an unused code

    @classmethod
    def of(cls, refs_per_image: np.ndarray) -> Layout:
        n = len(refs_per_image)
        per = refs_per_image.astype(np.int64) + 1
        slot_bits = _bits(int(per.max(initial=1)))
        cand_cap = np.cumsum(per) - per
        cap_image = np.repeat(np.arange(n, dtype=np.int64), per)
        slot = np.arange(len(cap_image), dtype=np.int64) - np.repeat(cand_cap, per)
        is_ref = slot > 0
        ref_cap = np.flatnonzero(is_ref)
        cap_code = (cap_image << slot_bits) | slot
        code_ref = np.full(n << slot_bits, -1, dtype=np.int64)
        code_ref[cap_code[ref_cap]] = np.arange(len(ref_cap), dtype=np.int64)
        return cls(n, slot_bits, cap_code, cand_cap, ref_cap, cap_image[ref_cap], code_ref)

    @property
    def n_codes(self) -> int:
        return self.n_images << self.slot_bits


def _image_major(cands: Sequence[str], refs: Sequence[Sequence[str]]) -> list[str]:
    flat: list[str] = []
    for c, rs in zip(cands, refs, strict=True):
        flat.append(c)
        flat.extend(rs)
    return flat


@dataclass
class Corpus:
    """Candidates and references of a scored set, indexed once for all the n-gram metrics."""

    n_images: int
    ref_image: np.ndarray  # image index of each reference (references in the order of `refs`)
    cand_len: np.ndarray
    ref_len: np.ndarray
    grams: list[NGrams]  # `cap` is the caption's code in `layout`
    layout: Layout

    # the flat token ids of all captions in layout order, for ROUGE-L's reuse
    tok: np.ndarray | None = None
    lengths: np.ndarray | None = None
    vocab_size: int = 0
    single_spaced: bool = False  # every caption is "" or tokens joined by single spaces

    @classmethod
    def build(cls, cands: Sequence[str], refs: Sequence[Sequence[str]]) -> Corpus:
        layout = Layout.of(np.fromiter(map(len, refs), dtype=np.int64, count=len(refs)))
        flat = _image_major(cands, refs)
        joined = "\n".join(flat)
        single_spaced = joined.count("\n") == len(flat) - 1 and _single_spaced(joined)
        if single_spaced:
            tok, lengths, v = word_ids(joined)
        else:
            tok, lengths, v = token_ids([c.split() for c in flat])
        return cls(
            n_images=len(cands),
            ref_image=layout.ref_image,
            cand_len=lengths[layout.cand_cap],
            ref_len=lengths[layout.ref_cap],
            grams=index_ngram_ids(tok, lengths, v, labels=layout.cap_code),
            layout=layout,
            tok=tok,
            lengths=lengths,
            vocab_size=v,
            # then str.split(" ") gives the same tokens as str.split(), except "" -> [""]
            single_spaced=single_spaced,
        )

    @cached_property
    def groups(self) -> list[_Groups]:
        """The (n-gram, image) grouping of every order, shared by BLEU and CIDEr."""
        return [_Groups.of(g, self.layout) for g in self.grams]

    def split(self, g: NGrams) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """(candidate image, gram, count), (reference index, image, gram, count) of one order."""
        ref = self.layout.code_ref[g.cap]
        is_cand = ref < 0
        c = (g.cap[is_cand] >> self.layout.slot_bits, g.gram[is_cand], g.count[is_cand])
        r_idx = ref[~is_cand]
        r = (r_idx, self.ref_image[r_idx], g.gram[~is_cand], g.count[~is_cand])
        return c, r


_IRREGULAR_SPACE = re.compile(r"[^\S\n ]|  |^ | $", re.MULTILINE)
def _single_spaced(joined: str) -> bool:
    """No line of `joined` has a leading, trailing or double space, or other whitespace."""
    if joined.isascii():  # numpy over the bytes: several times faster than substring scans
        b = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
        if len(b) == 0:
            return True
        space = b == ord(" ")
        sep = space | (b == ord("\n"))
        # str.split()'s other ASCII whitespace: \t \x0b \x0c \r and \x1c-\x1f
        other = ((b >= 0x09) & (b <= 0x0D) & (b != ord("\n"))) | ((b >= 0x1C) & (b <= 0x1F))
        return not (
            space[0] or space[-1] or other.any() or (space[1:] & sep[:-1]).any() or (space[:-1] & sep[1:]).any()
        )
    if "  " in joined or "\n " in joined or " \n" in joined or joined[:1] == " " or joined[-1:] == " ":
        return False
    return _IRREGULAR_SPACE.search(joined) is None


@dataclass
class _Groups:
    """One order's entries split into (n-gram, image) groups; the candidate's entry, when the
    candidate has the n-gram, is its group's first (codes are image-major, slot 0 first)."""

    image: np.ndarray  # per entry
    is_cand: np.ndarray  # per entry
    start: np.ndarray  # per entry: True at a group's first entry
    shared: np.ndarray  # reference entries whose group starts with a candidate entry (sorted)
    cand_of: np.ndarray  # per shared entry: that candidate entry

    @classmethod
    def of(cls, g: NGrams, layout: Layout) -> _Groups:
        image = g.cap >> layout.slot_bits
        is_cand = (g.cap & ((1 << layout.slot_bits) - 1)) == 0
        start = _first_of_runs(g.gram, image)
        head = np.maximum.accumulate(np.where(start, np.arange(len(start), dtype=np.int64), 0))
        shared = np.flatnonzero(is_cand[head] & ~is_cand)
        return cls(image, is_cand, start, shared, head[shared])


# ---------------------------------------------------------------------------------------------
# BLEU


BLEU_COLUMNS = (
    [f"bleu_correct_{k}" for k in range(1, MAX_N + 1)]
    + [f"bleu_guess_{k}" for k in range(1, MAX_N + 1)]
    + ["bleu_testlen", "bleu_reflen"]
)


def bleu_stats(corpus: Corpus) -> np.ndarray:
    """Per-image sufficient statistics, shape (n_images, 10): correct[1..4], guess[1..4], testlen,
    reflen (the 'closest' reference length, ties to the shorter)."""
    n = corpus.n_images
    stats = np.zeros((n, 2 * MAX_N + 2), dtype=np.float64)
    testlen = corpus.cand_len
    for k, (g, gr) in enumerate(zip(corpus.grams, corpus.groups, strict=True)):
        if len(gr.shared):
            # a candidate n-gram's clip: its count, at most the maximum count over the
            # references (the shared entries of one candidate entry are contiguous)
            first = np.flatnonzero(_first_of_runs(gr.cand_of))
            head = gr.cand_of[first]
            clip = np.minimum(g.count[head], np.maximum.reduceat(g.count[gr.shared], first))
            stats[:, k] = np.bincount(gr.image[head], weights=clip, minlength=n)
        stats[:, MAX_N + k] = np.maximum(0, testlen - k)
    stats[:, 2 * MAX_N] = testlen
    stats[:, 2 * MAX_N + 1] = closest_ref_len(corpus)
    return stats


def closest_ref_len(corpus: Corpus) -> np.ndarray:
    """min((|l - testlen|, l)) over the image's reference lengths l."""
    n = corpus.n_images
    diff = np.abs(corpus.ref_len - corpus.cand_len[corpus.ref_image])
    # lexicographic (diff, len) minimum per image via one composite key
    big = int(corpus.ref_len.max(initial=0)) + 1
    key = diff * big + corpus.ref_len
    best = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, corpus.ref_image, key)
    return np.where(best == np.iinfo(np.int64).max, 0, best % big).astype(np.float64)


def bleu_from_stats(stats: np.ndarray) -> np.ndarray:
    """BLEU-1..4 from (..., 10) statistics (per image, or summed over a corpus): shape (..., 4).

    The float operations follow the reference's order: cumulative product of
    (correct + 1e-15) / (guess + 1e-9), then ** (1/k), then the brevity penalty when
    (testlen + 1e-15) / (reflen + 1e-9) < 1."""
    stats = np.asarray(stats, dtype=np.float64)
    out = np.empty(stats.shape[:-1] + (MAX_N,))
    bleu = np.ones(stats.shape[:-1])
    for k in range(MAX_N):
        bleu = bleu * ((stats[..., k] + BLEU_TINY) / (stats[..., MAX_N + k] + BLEU_SMALL))
        out[..., k] = bleu ** (1.0 / (k + 1))
    ratio = (stats[..., 2 * MAX_N] + BLEU_TINY) / (stats[..., 2 * MAX_N + 1] + BLEU_SMALL)
    with np.errstate(divide="ignore", over="ignore"):
        penalty = np.where(ratio < 1, np.exp(1 - 1 / np.where(ratio < 1, ratio, 1.0)), 1.0)
    return out * penalty[..., None]


def corpus_bleu(stats: np.ndarray) -> list[float]:
    """Corpus BLEU-1..4 from per-image statistics (summed exactly: they are integers)."""
    total = stats.sum(axis=0)
    bleu = 1.0
    out = []
    for k in range(MAX_N):
        bleu *= (float(total[k]) + BLEU_TINY) / (float(total[MAX_N + k]) + BLEU_SMALL)
        out.append(bleu ** (1.0 / (k + 1)))
    ratio = (float(total[2 * MAX_N]) + BLEU_TINY) / (float(total[2 * MAX_N + 1]) + BLEU_SMALL)
    if ratio < 1:
        out = [b * math.exp(1 - 1 / ratio) for b in out]
    return out


# ---------------------------------------------------------------------------------------------
# CIDEr-D and CIDEr


def cider_scores(corpus: Corpus) -> tuple[np.ndarray, np.ndarray]:
    """Per-image (CIDEr-D, CIDEr).

    Both use tf-idf vectors w(g) = tf(g) * (log N - log max(1, df(g))), df counted over the
    references of the scored set (N images), cosine per order n = 1..4, averaged over orders and
    references. CIDEr-D (pycocoevalcap's "Cider") clips min(w_c, w_r) * w_r, multiplies by the
    Gaussian length penalty exp(-(l_c - l_r)^2 / (2 * 6^2)) with l = number of bigrams, and by 10.
    CIDEr (Vedantam et al. 2015, eq. 2-3) is the plain cosine w_c . w_r, no penalty, no factor.
    """
    n = corpus.n_images
    lay = corpus.layout
    refs_per_image = np.bincount(corpus.ref_image, minlength=n).astype(np.float64)
    log_n = np.log(float(n)) if n else 0.0
    sum_d = np.zeros((n, MAX_N))
    sum_c = np.zeros((n, MAX_N))
    # "length" in the reference is the number of bigrams (max(L - 1, 0))
    cand_l = np.maximum(corpus.cand_len - 1, 0).astype(np.float64)
    ref_l = np.maximum(corpus.ref_len - 1, 0).astype(np.float64)
    delta = cand_l[corpus.ref_image] - ref_l
    penalty = np.e ** (-(delta**2) / (2 * CIDER_SIGMA**2))
    ref_code = lay.cap_code[lay.ref_cap]
    cand_code = lay.cap_code[lay.cand_cap]
    for k, (g, gr) in enumerate(zip(corpus.grams, corpus.groups, strict=True)):
        # document frequency: the number of (n-gram, image) groups holding a reference entry;
        # a group's last entry is a reference exactly when it has one (the candidate sorts first)
        last = np.empty(len(gr.start), dtype=bool)
        last[:-1] = gr.start[1:]
        last[-1:] = True
        df = np.bincount(g.gram[last & ~gr.is_cand], minlength=g.n_grams).astype(np.float64)
        idf = log_n - np.log(np.maximum(1.0, df))
        w = g.count * idf[g.gram]
        norm = np.sqrt(np.bincount(g.cap, weights=w * w, minlength=lay.n_codes))
        # the n-grams a reference shares with the candidate (others add 0 to both dots)
        w_c, w_r = w[gr.cand_of], w[gr.shared]
        code = g.cap[gr.shared]
        dot_d = np.bincount(code, weights=np.minimum(w_c, w_r) * w_r, minlength=lay.n_codes)[ref_code]
        dot_c = np.bincount(code, weights=w_c * w_r, minlength=lay.n_codes)[ref_code]
        denom = norm[cand_code][corpus.ref_image] * norm[ref_code]
        nz = denom != 0
        dot_d = np.where(nz, dot_d / np.where(nz, denom, 1.0), dot_d)
        dot_c = np.where(nz, dot_c / np.where(nz, denom, 1.0), dot_c)
        sum_d[:, k] = np.bincount(corpus.ref_image, weights=dot_d * penalty, minlength=n)
        sum_c[:, k] = np.bincount(corpus.ref_image, weights=dot_c, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        cider_d = sum_d.mean(axis=1) / refs_per_image * CIDER_D_SCALE
        cider = sum_c.mean(axis=1) / refs_per_image
    return np.nan_to_num(cider_d), np.nan_to_num(cider)


# ---------------------------------------------------------------------------------------------
# ROUGE-L


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
        tok, lengths, _ = token_ids([c.split(" ") for c in _image_major(cands, refs)])
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
    off_bits = _bits(int(lengths.max()))
    code_bits = _bits(layout.n_codes)
    offset = np.arange(len(tok), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    code = np.repeat(layout.cap_code[:n_caps], lengths)
    low = (code << off_bits) | offset
    low_bits = code_bits + off_bits
    tok = tok.astype(np.int64, copy=False)
    if _bits(int(tok.max()) + 1) + low_bits <= KEY_BITS:
        keys = np.sort((tok << low_bits) | low)
        stok = keys >> low_bits
        code = (keys >> off_bits) & ((1 << code_bits) - 1)
        offset = keys & ((1 << off_bits) - 1)
    else:
        order = np.lexsort((low, tok))
        stok, code, offset = tok[order], code[order], offset[order]
    image = code >> layout.slot_bits
    is_cand = (code & ((1 << layout.slot_bits) - 1)) == 0
    start = _first_of_runs(stok, image)
    gid = np.cumsum(start) - 1
    head = np.flatnonzero(start)
    n_cand = np.bincount(gid[is_cand], minlength=len(head))[gid]
    # the mask of a token in one 64-bit word of a reference: the sum (= OR, distinct bits) over
    # its run of entries (token, code and word equal; adjacent in this order)
    word = offset >> 6
    rs = np.flatnonzero(~is_cand & (n_cand > 0))  # reference entries sharing the candidate's token
    run = np.flatnonzero(_first_of_runs(stok[rs], code[rs], word[rs]))
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


# ---------------------------------------------------------------------------------------------
# METEOR from the jar's sufficient statistics (Meteor 1.5, task "ranking"/-norm English defaults)

METEOR_ALPHA, METEOR_BETA, METEOR_GAMMA, METEOR_DELTA = 0.85, 0.2, 0.6, 0.75
METEOR_WEIGHTS = (1.0, 0.6, 0.8, 0.6)  # exact stem synonym paraphrase
METEOR_STATS = 23
METEOR_COLUMNS = [f"meteor_{i}" for i in range(METEOR_STATS)]


def meteor_perfect(stats: np.ndarray) -> np.ndarray:
    """Segments whose chunks the jar leaves out of the aggregate: every word matched, one chunk."""
    stats = np.asarray(stats, dtype=np.float64)
    t_match = sum(stats[..., 4 + 4 * i] + stats[..., 6 + 4 * i] for i in range(4))
    r_match = sum(stats[..., 5 + 4 * i] + stats[..., 7 + 4 * i] for i in range(4))
    return (t_match == stats[..., 0]) & (r_match == stats[..., 1]) & (stats[..., 20] == 1)


def meteor_from_stats(stats: np.ndarray) -> np.ndarray:
    """Meteor score from (..., 23) statistics: tstLen refLen tstFunc refFunc, 4 stages x
    (tstContent refContent tstFunction refFunction), chunks tstWordMatches refWordMatches."""
    s = np.asarray(stats, dtype=np.float64)
    d = METEOR_DELTA
    t_wl = d * (s[..., 0] - s[..., 2]) + (1 - d) * s[..., 2]
    r_wl = d * (s[..., 1] - s[..., 3]) + (1 - d) * s[..., 3]
    t_wm = np.zeros(s.shape[:-1])
    r_wm = np.zeros(s.shape[:-1])
    for i, w in enumerate(METEOR_WEIGHTS):
        t_wm = t_wm + w * (d * s[..., 4 + 4 * i] + (1 - d) * s[..., 6 + 4 * i])
        r_wm = r_wm + w * (d * s[..., 5 + 4 * i] + (1 - d) * s[..., 7 + 4 * i])
    with np.errstate(invalid="ignore", divide="ignore"):
        p = t_wm / t_wl
        r = r_wm / r_wl
        fmean = 1.0 / (((1 - METEOR_ALPHA) / p) + (METEOR_ALPHA / r))
        frag = np.where(meteor_perfect(s), 0.0, s[..., 20] / ((s[..., 21] + s[..., 22]) / 2))
        score = fmean * (1.0 - METEOR_GAMMA * frag**METEOR_BETA)
    score = np.where(np.isnan(score), 0.0, score)
    return np.maximum(0.0, score)


def meteor_aggregate(stats: np.ndarray) -> np.ndarray:
    """Sum per-segment statistics as the jar does: chunks of perfect segments are not added."""
    s = np.array(stats, dtype=np.float64, copy=True)
    if s.ndim == 1:
        s = s[None, :]
    s[meteor_perfect(s), 20] = 0.0
    return s.sum(axis=0)
