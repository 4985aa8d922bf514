"""Every metric against pycocoevalcap run here on the same inputs: corpus and per-image values
agree to 1e-9 (BLEU, ROUGE-L, CIDEr-D) and the tokenization is identical."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SEED_CANDS, SEED_REFS, SETS, needs_java, refs_of

from vlbench.backports import strict_zip
from vlbench.tasks.captioning.bleu import BLEU_COLUMNS
from vlbench.tasks.captioning.cider import cider_scores
from vlbench.tasks.captioning.corpus import Corpus
from vlbench.tasks.captioning.scoring import score_captions

pytestmark = needs_java


@pytest.fixture(scope="module")
def ours():
    return {name: score_captions(c, refs_of(r), meteor=False, spice=False) for name, (c, r) in SETS.items()}


@pytest.mark.parametrize("name", sorted(SETS))
def test_tokenization_matches_pycocoevalcap(name, pyco_tokenized):
    from vlbench.tasks.captioning.ptb import pycoco_successors, tokenize

    cands, refs = SETS[name]
    gts, res = pyco_tokenized[name]
    flat_refs = [r for rs in refs for r in rs]
    tok, _ = tokenize(cands + flat_refs, pycoco_successors([cands, flat_refs]))
    assert tok[: len(cands)] == [res[i][0] for i in range(len(cands))]
    assert tok[len(cands) :] == [r for i in range(len(cands)) for r in gts[i]]


@pytest.mark.parametrize("name", sorted(SETS))
def test_bleu_rouge_cider_match_pycocoevalcap(name, pyco_tokenized, ours):
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    gts, res = pyco_tokenized[name]
    scored = ours[name]
    table = scored.items["images"]
    col = {c: table.values[:, j] for j, c in enumerate(table.columns)}
    bleu, bleu_img = Bleu(4).compute_score(gts, res, verbose=0)
    for k in range(4):
        assert scored.scores[f"BLEU-{k + 1}"] == pytest.approx(bleu[k], abs=1e-9, rel=0)
        np.testing.assert_allclose(col[f"BLEU-{k + 1}@image"], bleu_img[k], rtol=0, atol=1e-9)
    rouge, rouge_img = Rouge().compute_score(gts, res)
    assert scored.scores["ROUGE-L"] == pytest.approx(rouge, abs=1e-9, rel=0)
    np.testing.assert_allclose(col["ROUGE-L"], rouge_img, rtol=0, atol=1e-9)
    cider, cider_img = Cider().compute_score(gts, res)
    assert scored.scores["CIDEr-D"] == pytest.approx(cider, abs=1e-9, rel=0)
    np.testing.assert_allclose(col["CIDEr-D"], cider_img, rtol=0, atol=1e-9)


def test_seed_example_published_values():
    """The 10-digit values of the reference notes (shared/reference/caption_metrics.md §3)."""
    s = score_captions(SEED_CANDS, refs_of(SEED_REFS), meteor=False, spice=False)
    table = s.items["images"]
    col = {c: table.values[:, j] for j, c in enumerate(table.columns)}
    assert s.scores["BLEU-4"] == pytest.approx(0.6364324737, abs=1e-10)
    assert s.scores["ROUGE-L"] == pytest.approx(0.7699115044, abs=1e-10)
    assert s.scores["CIDEr-D"] == pytest.approx(1.3966887781, abs=1e-10)
    np.testing.assert_allclose(col["CIDEr-D"], [0.6831162485, 2.1102613076], atol=1e-10)
    np.testing.assert_allclose(col["BLEU-4@image"], [0.0000516973, 0.9999999997], atol=1e-10)
    totals = table.values[:, [table.columns.index(c) for c in BLEU_COLUMNS]].sum(axis=0)
    assert totals.tolist() == [14, 9, 7, 5, 16, 14, 12, 10, 16, 15]


def test_original_cider_by_hand():
    """CIDEr (no clipping, no penalty): the seed example's image-1 unigram cosine with the second
    reference is 2/sqrt(5*4) (the seed's worked number 0.4472), checked on the n = 1 term."""
    corpus = Corpus.build(SEED_CANDS, SEED_REFS)
    g = corpus.grams[0]
    (c_img, c_gram, c_cnt), (r_idx, r_img, r_gram, r_cnt) = corpus.split(g)
    df = np.bincount(np.unique(r_img * g.n_grams + r_gram) % g.n_grams, minlength=g.n_grams)
    idf = np.log(2.0) - np.log(np.maximum(1.0, df))
    wc = dict(strict_zip(c_gram[c_img == 0].tolist(), (c_cnt * idf[c_gram])[c_img == 0].tolist()))
    wr = dict(strict_zip(r_gram[r_idx == 1].tolist(), (r_cnt * idf[r_gram])[r_idx == 1].tolist()))
    cos = sum(v * wr.get(k, 0.0) for k, v in wc.items()) / (
        np.sqrt(sum(v * v for v in wc.values())) * np.sqrt(sum(v * v for v in wr.values()))
    )
    assert cos == pytest.approx(2 / np.sqrt(20), abs=1e-12)
    _, cider = cider_scores(corpus)
    assert 0 < cider[0] < 1 and cider[1] > cider[0]


def test_empty_and_one_word_candidates():
    cands, refs = SETS["edge"]
    s = score_captions(cands, refs_of(refs), meteor=False, spice=False)
    table = s.items["images"]
    row = table.values[0]
    for key in ("BLEU-1@image", "BLEU-4@image", "ROUGE-L", "CIDEr-D", "CIDEr"):
        assert row[table.columns.index(key)] == pytest.approx(0.0, abs=1e-12)
    # "dog" against "a dog" (the closest reference, 2 words): P1 = 1, brevity penalty e^(1-2);
    # no bigram at all: the 1e-15 / 1e-9 smoothing gives a factor 1e-6 under the square root.
    one = table.values[1]
    assert one[table.columns.index("BLEU-1@image")] == pytest.approx(np.exp(-1.0), rel=1e-8)
    assert one[table.columns.index("BLEU-2@image")] == pytest.approx(np.exp(-1.0) * 1e-3, rel=1e-6)


def test_bootstrap_columns_recompute_corpus_values():
    from vlbench.tasks.captioning import TASK

    cands, refs = SETS["generated"]
    s = score_captions(cands, refs_of(refs), meteor=False, spice=False)
    t = s.items["images"]
    means = {"images": {c: np.array([t.values[:, j].mean()]) for j, c in enumerate(t.columns)}}
    rec = TASK.metrics_from_means(None, means)
    for key in ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L", "CIDEr-D", "CIDEr"):
        assert float(rec[key][0]) == pytest.approx(s.scores[key], rel=1e-8)
