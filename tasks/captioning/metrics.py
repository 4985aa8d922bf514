"""Caption metrics on PTB-tokenized strings, written from the pycocoevalcap 1.2 specification
(`shared/reference/caption_metrics.md` §2), vectorised with numpy.

Inputs: `cands[i]` is the tokenized candidate of image i, `refs[i]` its list of tokenized
references. BLEU and CIDEr split tokens on any whitespace (`str.split()`), ROUGE-L on a
single space (`str.split(" ")`, so "" is one empty token), exactly as the reference does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_N = 4
BLEU_SMALL = 1e-9
BLEU_TINY = 1e-15
ROUGE_BETA = 1.2
CIDER_SIGMA = 6.0
CIDER_D_SCALE = 10.0


# ---------------------------------------------------------------------------------------------
# n-gram indexing shared by BLEU and CIDEr


@dataclass
class NGrams:
    """Distinct (caption, n-gram) pairs with their counts, for one order n.

    `cap[k]`, `gram[k]`, `count[k]`: caption index, n-gram id (dense per order), count in that
    caption; sorted by (caption, gram)."""

    cap: np.ndarray
    gram: np.ndarray
    count: np.ndarray
    n_grams: int


def _sorted_unique(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct sorted keys, their counts). np.sort based: numpy 2.x's hash-based np.unique
    without return_counts is 50x slower on int64 here."""
    s = np.sort(keys)
    if len(s) == 0:
        return s, np.zeros(0, np.int64)
    first = np.empty(len(s), dtype=bool)
    first[0] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, len(s)))
    return s[starts], counts


def _rank(keys: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense ids (0..k-1, in key order) of int64 keys, and k."""
    if len(keys) == 0:
        return keys.astype(np.int64), 0
    order = np.argsort(keys)  # argsort + cumsum: 5x faster than searchsorted into the uniques
    s = keys[order]
    first = np.empty(len(s), dtype=bool)
    first[0] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    dense = np.cumsum(first) - 1
    ids = np.empty(len(keys), dtype=np.int64)
    ids[order] = dense
    return ids, int(dense[-1]) + 1


def token_ids(token_lists: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray, int]:
    """(flat token ids, lengths, vocabulary size); ids in order of first appearance."""
    flat = [w for toks in token_lists for w in toks]
    vocab = {w: i for i, w in enumerate(dict.fromkeys(flat))}
    tok = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))
    lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
    return tok, lengths, len(vocab)


def index_ngram_ids(tok: np.ndarray, lengths: np.ndarray, v: int, max_n: int = MAX_N) -> list[NGrams]:
    """Per order n = 1..max_n, the distinct (caption, n-gram) pairs and counts of every caption,
    from flat token ids (`tok`, ids < v) and caption lengths."""
    total = len(tok)
    n_caps = len(lengths)
    v = max(1, v)
    cap_of = np.repeat(np.arange(n_caps, dtype=np.int64), lengths)
    ends = np.cumsum(lengths)
    # tokens left in the caption from each position (the n-gram at p exists if remaining >= n)
    remaining = ends[cap_of] - np.arange(total, dtype=np.int64) if total else np.zeros(0, np.int64)
    # n-grams packed exactly into int64 while v**n fits; dense ids otherwise
    out: list[NGrams] = []
    ids = tok
    n_ids = v
    packed = True
    for n in range(1, max_n + 1):
        valid = remaining >= n
        if n > 1:
            nxt = np.zeros(total, dtype=np.int64)
            if total > n - 1:
                nxt[: total - (n - 1)] = tok[n - 1 :]
            if packed and n_ids * v < 2**62:
                ids = ids * v + nxt
                n_ids = n_ids * v
            else:
                packed = False
                prev, _ = _rank(ids)  # fewer than `total` distinct values: no overflow below
                ids, n_ids = _rank(prev * v + nxt)
        caps = cap_of[valid]
        grams = ids[valid]
        # unigram ids are already dense
        dense, n_dense = (grams, v) if n == 1 else (_rank(grams) if len(grams) else (grams, 0))
        key = caps * max(1, n_dense) + dense
        uniq, counts = _sorted_unique(key)
        width = max(1, n_dense)
        out.append(NGrams(uniq // width, uniq % width, counts.astype(np.int64), n_dense))
    return out


@dataclass
class Corpus:
    """Candidates and references of a scored set, indexed once for all the n-gram metrics."""

    n_images: int
    ref_image: np.ndarray  # image index of each reference (references are captions n_images..)
    cand_len: np.ndarray
    ref_len: np.ndarray
    grams: list[NGrams]  # captions: candidates 0..n_images-1, then references in order

    # the flat token ids of all captions (candidates, then references), for ROUGE-L's reuse
    tok: np.ndarray | None = None
    lengths: np.ndarray | None = None
    vocab_size: int = 0
    single_spaced: bool = False  # every caption is "" or tokens joined by single spaces

    @classmethod
    def build(cls, cands: Sequence[str], refs: Sequence[Sequence[str]]) -> Corpus:
        flat = [*cands, *(r for rs in refs for r in rs)]
        ref_image = np.repeat(np.arange(len(refs), dtype=np.int64), [len(rs) for rs in refs])
        n = len(cands)
        joined = "\n".join(flat)
        single_spaced = joined.count("\n") == len(flat) - 1 and _single_spaced(joined)
        if single_spaced:  # one C-level split for all captions; lengths by counting spaces
            words = joined.split()
            vocab = {w: i for i, w in enumerate(dict.fromkeys(words))}
            tok = np.fromiter(map(vocab.__getitem__, words), dtype=np.int64, count=len(words))
            lengths = np.fromiter((c.count(" ") + 1 if c else 0 for c in flat), np.int64, len(flat))
            v = len(vocab)
        else:
            tok, lengths, v = token_ids([c.split() for c in flat])
        return cls(
            n_images=n,
            ref_image=ref_image,
            cand_len=lengths[:n],
            ref_len=lengths[n:],
            grams=index_ngram_ids(tok, lengths, v),
            tok=tok,
            lengths=lengths,
            vocab_size=v,
            # then str.split(" ") gives the same tokens as str.split(), except "" -> [""]
            single_spaced=single_spaced,
        )

    def split(self, g: NGrams) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """(candidate image, gram, count), (reference index, image, gram, count) of one order."""
        is_cand = g.cap < self.n_images
        c = (g.cap[is_cand], g.gram[is_cand], g.count[is_cand])
        r_idx = g.cap[~is_cand] - self.n_images
        r = (r_idx, self.ref_image[r_idx], g.gram[~is_cand], g.count[~is_cand])
        return c, r


_IRREGULAR_SPACE = re.compile(r"[^\S\n ]|  |^ | $", re.MULTILINE)
_ASCII_OTHER_SPACE = re.compile(r"[\t\x0b-\x0d\x1c-\x1f]")


def _single_spaced(joined: str) -> bool:
    """No line of `joined` has a leading, trailing or double space, or other whitespace."""
    if "  " in joined or "\n " in joined or " \n" in joined or joined[:1] == " " or joined[-1:] == " ":
        return False
    if joined.isascii():  # plain substring and char-class scans: 10x faster than the regex
        return _ASCII_OTHER_SPACE.search(joined) is None
    return _IRREGULAR_SPACE.search(joined) is None


def _lookup(keys_sorted: np.ndarray, values: np.ndarray, query: np.ndarray) -> np.ndarray:
    """values[keys_sorted == query] per query, 0 where absent (keys_sorted strictly increasing)."""
    if len(keys_sorted) == 0:
        return np.zeros(len(query), dtype=values.dtype)
    pos = np.searchsorted(keys_sorted, query)
    pos_c = np.minimum(pos, len(keys_sorted) - 1)
    hit = keys_sorted[pos_c] == query
    return np.where(hit, values[pos_c], 0)


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
    for k, g in enumerate(corpus.grams):
        (c_img, c_gram, c_cnt), (_, r_img, r_gram, r_cnt) = corpus.split(g)
        width = max(1, g.n_grams)
        # max count of each (image, gram) over the image's references
        r_key = r_img * width + r_gram
        if len(r_key):
            order = np.argsort(r_key, kind="stable")
            r_key_s, r_cnt_s = r_key[order], r_cnt[order]
            first = np.concatenate(([True], r_key_s[1:] != r_key_s[:-1]))
            starts = np.flatnonzero(first)
            max_keys = r_key_s[starts]
            max_cnt = np.maximum.reduceat(r_cnt_s, starts)
        else:
            max_keys, max_cnt = np.zeros(0, np.int64), np.zeros(0, np.int64)
        clip = np.minimum(c_cnt, _lookup(max_keys, max_cnt, c_img * width + c_gram))
        stats[:, k] = np.bincount(c_img, weights=clip, minlength=n)
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
    n_refs = len(corpus.ref_len)
    refs_per_image = np.bincount(corpus.ref_image, minlength=n).astype(np.float64)
    log_n = np.log(float(n)) if n else 0.0
    sum_d = np.zeros((n, MAX_N))
    sum_c = np.zeros((n, MAX_N))
    # "length" in the reference is the number of bigrams (max(L - 1, 0))
    cand_l = np.maximum(corpus.cand_len - 1, 0).astype(np.float64)
    ref_l = np.maximum(corpus.ref_len - 1, 0).astype(np.float64)
    delta = cand_l[corpus.ref_image] - ref_l
    penalty = np.e ** (-(delta**2) / (2 * CIDER_SIGMA**2))
    for k, g in enumerate(corpus.grams):
        (c_img, c_gram, c_cnt), (r_idx, r_img, r_gram, r_cnt) = corpus.split(g)
        width = max(1, g.n_grams)
        # document frequency: number of images whose references contain the n-gram
        img_gram, _ = _sorted_unique(r_img * width + r_gram)
        df = np.bincount(img_gram % width, minlength=width).astype(np.float64)
        idf = log_n - np.log(np.maximum(1.0, df))
        w_c = c_cnt * idf[c_gram]
        w_r = r_cnt * idf[r_gram]
        norm_c = np.sqrt(np.bincount(c_img, weights=w_c * w_c, minlength=n))
        norm_r = np.sqrt(np.bincount(r_idx, weights=w_r * w_r, minlength=n_refs))
        # candidate weight of each reference n-gram (same image), 0 when absent
        wc_at_r = _lookup(c_img * width + c_gram, w_c, r_img * width + r_gram)
        dot_d = np.bincount(r_idx, weights=np.minimum(wc_at_r, w_r) * w_r, minlength=n_refs)
        dot_c = np.bincount(r_idx, weights=wc_at_r * w_r, minlength=n_refs)
        denom = norm_c[corpus.ref_image] * norm_r
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
        tok, lengths, empty_id = corpus.tok, corpus.lengths, corpus.vocab_size
    else:
        lists = [c.split(" ") for c in cands] + [r.split(" ") for rs in refs for r in rs]
        tok, lengths, _ = token_ids(lists)
        empty_id = -3  # unused: "" is already a token here
    # "".split(" ") is [""]: one empty token, which matches only another empty caption
    empty = lengths == 0
    lengths = np.maximum(lengths, 1)
    starts = np.concatenate(([0], np.cumsum(np.where(empty, 0, lengths))[:-1])).astype(np.int64)
    img = np.repeat(np.arange(n, dtype=np.int64), [len(rs) for rs in refs])
    ref_cap = n + np.arange(len(img), dtype=np.int64)
    lc = lengths[img]
    lr = lengths[ref_cap]
    lcs = np.zeros(len(img), dtype=np.int64)
    short = lr <= 64
    log_lc = np.ceil(np.log2(lc)).astype(np.int64)
    # bit-parallel LCS (Hyyro 2004) for references up to 64 tokens, one uint64 per pair
    for b in np.unique(log_lc[short]):
        sel = np.flatnonzero(short & (log_lc == b))
        a = _padded(tok, starts[img[sel]], lc[sel], -1, empty[img[sel]], empty_id)
        r = _padded(tok, starts[ref_cap[sel]], lr[sel], -2, empty[ref_cap[sel]], empty_id)
        lcs[sel] = _lcs_bitparallel(a, r, lr[sel])
    for p in np.flatnonzero(~short):  # rare: the plain dynamic program
        a = _padded(tok, starts[img[p : p + 1]], lc[p : p + 1], -1, empty[img[p : p + 1]], empty_id)
        r = _padded(tok, starts[ref_cap[p : p + 1]], lr[p : p + 1], -2, empty[ref_cap[p : p + 1]], empty_id)
        lcs[p] = _lcs_batch(a, r)[0]
    with np.errstate(invalid="ignore", divide="ignore"):
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


def _padded(tok: np.ndarray, starts: np.ndarray, lengths: np.ndarray, pad: int,
            empty: np.ndarray, empty_id: int) -> np.ndarray:
    width = int(lengths.max(initial=1))
    cols = np.arange(width, dtype=np.int64)
    inside = (cols[None, :] < lengths[:, None]) & ~empty[:, None]
    idx = np.where(inside, starts[:, None] + cols[None, :], 0)
    out = np.where(inside, tok[idx] if len(tok) else pad, pad)
    out[empty, 0] = empty_id
    return out


def _lcs_bitparallel(a: np.ndarray, b: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """LCS lengths of many pairs (rows of a, b; b at most 64 tokens; padding never matches)."""
    weights = np.left_shift(np.uint64(1), np.arange(b.shape[1], dtype=np.uint64))
    v = np.full(len(a), np.uint64(0xFFFFFFFFFFFFFFFF))
    for i in range(a.shape[1]):
        eq = a[:, i : i + 1] == b
        m = np.bitwise_or.reduce(np.where(eq, weights, np.uint64(0)), axis=1)
        u = v & m
        v = (v + u) | (v - u)
    mask = np.where(lb >= 64, np.uint64(0xFFFFFFFFFFFFFFFF),
                    np.left_shift(np.uint64(1), np.minimum(lb, 63).astype(np.uint64)) - np.uint64(1))
    return np.bitwise_count(~v & mask).astype(np.int64)


def _lcs_batch(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """LCS lengths by the dynamic program (rows of a and b; padding never matches)."""
    m, la = a.shape
    lb = b.shape[1]
    prev = np.zeros((m, lb + 1), dtype=np.int64)
    for i in range(la):
        eq = a[:, i : i + 1] == b
        cur = np.zeros_like(prev)
        diag = prev[:, :-1] + 1
        up = prev[:, 1:]
        for j in range(lb):
            cur[:, j + 1] = np.where(eq[:, j], diag[:, j], np.maximum(up[:, j], cur[:, j]))
        prev = cur
    return prev[:, lb]


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
