"""CIDEr-D (pycocoevalcap's Cider) and CIDEr per image, from the shared n-gram index (`corpus.py`)."""

from __future__ import annotations

import numpy as np

from vlbench.tasks.captioning.corpus import MAX_N, Corpus

CIDER_SIGMA = 6.0
CIDER_D_SCALE = 10.0



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
