"""CIDEr-D with a document frequency counted over other documents (`cider.DocumentFrequency`, what
the consensus re-ranker scores a caption pool with) against pycocoevalcap's CiderScorer given the
same document frequency; and the n-gram texts that key it."""

from __future__ import annotations

import random

import numpy as np
import pytest

from vlbench.backports import strict_zip
from vlbench.tasks.captioning.cider import DocumentFrequency, cider_scores
from vlbench.tasks.captioning.corpus import Corpus, index_ngram_ids, ngram_texts, token_ids

WORDS = ["a", "the", "red", "dog", "cat", "on", "of", "blue", "sits", "mat", "two", "stars", "café", "x-ray"]


def _caption(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))


def _pycocoevalcap_cider_d(cands: list[str], refs: list[list[str]], documents: list[list[str]]) -> list[float]:
    """pycocoevalcap's CiderScorer, its document frequency taken from `documents` instead of the
    references (its own counting, `compute_doc_freq`, run on them)."""
    from pycocoevalcap.cider.cider_scorer import CiderScorer

    counter = CiderScorer(n=4, sigma=6.0)
    for doc in documents:
        counter.cook_append(None, doc)
    counter.compute_doc_freq()

    class WithDocuments(CiderScorer):
        # `compute_cider` sets ref_len to log(number of scored images): keep the documents' count
        ref_len = property(lambda self: np.log(float(len(documents))), lambda self, value: None)

        def compute_doc_freq(self) -> None:
            self.document_frequency = counter.document_frequency

    scorer = WithDocuments(n=4, sigma=6.0)
    for c, rs in strict_zip(cands, refs):
        scorer.cook_append(c, rs)
    scorer.compute_doc_freq()
    return scorer.compute_cider()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cider_d_with_documents_equals_pycocoevalcap(seed: int) -> None:
    pytest.importorskip("pycocoevalcap")
    rng = random.Random(seed)
    documents = [[_caption(rng) for _ in range(rng.randint(1, 6))] for _ in range(80)]
    cands = [_caption(rng) for _ in range(30)]
    refs = [[_caption(rng) for _ in range(rng.randint(1, 7))] for _ in range(30)]
    df = DocumentFrequency.of(documents)
    ours, _ = cider_scores(Corpus.build(cands, refs, ngram_positions=True), df)
    np.testing.assert_allclose(ours, _pycocoevalcap_cider_d(cands, refs, documents), rtol=0, atol=1e-12)


def test_the_references_as_documents_give_the_default_scores() -> None:
    """Counted over the scored set's own references, the given document frequency is the one
    `cider_scores` counts itself: the same numbers (both CIDEr-D and CIDEr)."""
    rng = random.Random(5)
    cands = [_caption(rng) for _ in range(40)]
    refs = [[_caption(rng) for _ in range(rng.randint(1, 5))] for _ in range(40)]
    corpus = Corpus.build(cands, refs, ngram_positions=True)
    default = cider_scores(corpus)
    given = cider_scores(corpus, DocumentFrequency.of(refs))
    for a, b in strict_zip(default, given):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_document_frequency_counts_each_document_once() -> None:
    df = DocumentFrequency.of([["a dog a dog", "the dog"], ["a cat"], [""]])
    assert df.n_documents == 3
    assert df.counts["a"] == 2 and df.counts["dog"] == 1 and df.counts["a dog"] == 1
    assert df.counts["a dog a dog"] == 1 and df.counts["dog a dog"] == 1 and "dog the" not in df.counts
    assert len(df.counts) == len({" ".join(c.split()[i : i + n]) for doc in (["a dog a dog", "the dog"], ["a cat"])
                                  for c in doc for n in range(1, 5) for i in range(len(c.split()) - n + 1)})


def test_ngram_positions_name_every_ngram_id() -> None:
    """The texts read at the indexed positions are the n-grams the ids stand for: ids are dense
    and numbered in sorted order of their values, so distinct texts, in any layout of labels."""
    rng = random.Random(7)
    captions = [_caption(rng) for _ in range(200)]
    tok, lengths, v = token_ids([c.split() for c in captions])
    for labels in (None, np.arange(200) // 7):
        grams = index_ngram_ids(tok, lengths, v, labels=labels, positions=True)
        for n, g in enumerate(grams, start=1):
            assert g.first_position is not None and len(g.first_position) == g.n_grams
            want = {" ".join(c.split()[i : i + n]) for c in captions for i in range(len(c.split()) - n + 1)}
            texts = ngram_texts(captions, lengths, g, n)
            assert sorted(texts) == sorted(want) and len(set(texts)) == len(texts)
            # an id's entries are the captions (or documents) holding its text
            for gram_id in range(0, g.n_grams, 97):
                holders = {int(x) for x in g.cap[g.gram == gram_id]}
                label_of = np.arange(200) if labels is None else labels
                assert holders == {int(label_of[i]) for i, c in enumerate(captions)
                                   if f" {texts[gram_id]} " in f" {c} "}
    corpus = Corpus.build(captions, [[] for _ in captions], ngram_positions=True)
    assert corpus.ngram_texts(1) == ngram_texts(captions, lengths, corpus.grams[1], 2)
    with pytest.raises(ValueError, match="ngram_positions=True"):
        Corpus.build(captions, [[] for _ in captions]).ngram_texts(0)
