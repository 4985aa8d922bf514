"""CIDEr-D (pycocoevalcap's Cider) and CIDEr per image, from the shared n-gram index (`corpus.py`);
by default with the document frequency of the scored set's references, as pycocoevalcap, or with
one counted over other documents (`DocumentFrequency`, e.g. a train set's captions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vlbench.backports import strict_zip
from vlbench.tasks.captioning.corpus import MAX_N, Corpus, index_ngram_ids, ngram_texts, token_ids

CIDER_SIGMA = 6.0
CIDER_D_SCALE = 10.0


@dataclass(frozen=True)
class DocumentFrequency:
    """df(g): in how many documents any caption holds n-gram g (keyed by its text, "w1 w2"), of
    `n_documents` documents. pycocoevalcap counts it over the scored set's references, each
    image one document; this is the same count over documents given apart from the scored set."""

    counts: dict[str, int]
    n_documents: int

    @classmethod
    def of(cls, documents: Sequence[Sequence[str]]) -> DocumentFrequency:
        """`documents`: per document (e.g. an image), its tokenized captions (tokens split on
        whitespace, as CIDEr splits them)."""
        captions = [c for doc in documents for c in doc]
        owner = np.repeat(np.arange(len(documents), dtype=np.int64), [len(doc) for doc in documents])
        tok, lengths, v = token_ids([c.split() for c in captions])
        counts: dict[str, int] = {}
        # the captions of one document share its label: one (document, n-gram) entry each
        for n, grams in enumerate(index_ngram_ids(tok, lengths, v, labels=owner, positions=True), start=1):
            df = np.bincount(grams.gram, minlength=grams.n_grams)
            counts.update(zip(ngram_texts(captions, lengths, grams, n), df.tolist()))
        return cls(counts, len(documents))

    def per_gram(self, corpus: Corpus) -> list[np.ndarray]:
        """df of each n-gram id of `corpus`, per order (built with `ngram_positions=True`)."""
        return [np.array([self.counts.get(t, 0) for t in corpus.ngram_texts(k)], dtype=np.float64)
                for k in range(len(corpus.grams))]


def cider_scores(corpus: Corpus, document_frequency: DocumentFrequency | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-image (CIDEr-D, CIDEr).

    Both use tf-idf vectors w(g) = tf(g) * (log N - log max(1, df(g))), df counted over the
    references of the scored set (N images; or `document_frequency`'s documents), cosine per order
    n = 1..4, averaged over orders and references. CIDEr-D (pycocoevalcap's "Cider") clips
    min(w_c, w_r) * w_r, multiplies by the Gaussian length penalty exp(-(l_c - l_r)^2 / (2 * 6^2))
    with l = number of bigrams, and by 10. CIDEr (Vedantam et al. 2015, eq. 2-3) is the plain
    cosine w_c . w_r, no penalty, no factor.
    """
    n = corpus.n_images
    lay = corpus.layout
    refs_per_image = np.bincount(corpus.ref_image, minlength=n).astype(np.float64)
    if document_frequency is None:
        given = None
        log_n = np.log(float(n)) if n else 0.0
    else:
        given = document_frequency.per_gram(corpus)
        n_docs = document_frequency.n_documents
        log_n = np.log(float(n_docs)) if n_docs else 0.0
    sum_d = np.zeros((n, MAX_N))
    sum_c = np.zeros((n, MAX_N))
    # "length" in the reference is the number of bigrams (max(L - 1, 0))
    cand_l = np.maximum(corpus.cand_len - 1, 0).astype(np.float64)
    ref_l = np.maximum(corpus.ref_len - 1, 0).astype(np.float64)
    delta = cand_l[corpus.ref_image] - ref_l
    penalty = np.e ** (-(delta**2) / (2 * CIDER_SIGMA**2))
    ref_code = lay.cap_code[lay.ref_cap]
    cand_code = lay.cap_code[lay.cand_cap]
    for k, (g, gr) in enumerate(strict_zip(corpus.grams, corpus.groups)):
        if given is None:
            # document frequency: the number of (n-gram, image) groups holding a reference entry;
            # a group's last entry is a reference exactly when it has one (the candidate sorts first)
            last = np.empty(len(gr.start), dtype=bool)
            last[:-1] = gr.start[1:]
            last[-1:] = True
            df = np.bincount(g.gram[last & ~gr.is_cand], minlength=g.n_grams).astype(np.float64)
        else:
            df = given[k]
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
