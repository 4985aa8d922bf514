"""The vectorised BLEU, ROUGE-L and CIDEr-D against pycocoevalcap's scorers on already tokenized
captions (no jar needed), on shapes the COCO-like sets do not reach: up to 20 references per
image (wider slot codes), captions longer than 64 and 128 tokens (multi-word bit-parallel LCS),
empty captions, heavy repetition (clipping); and the LCS against the plain dynamic program."""

from __future__ import annotations

import random

import numpy as np
import pytest

from vlbench.backports import strict_zip
from vlbench.tasks.captioning.bleu import bleu_from_stats, bleu_stats, corpus_bleu
from vlbench.tasks.captioning.cider import cider_scores
from vlbench.tasks.captioning.corpus import Corpus, Layout, _single_spaced, sort_keys, word_ids
from vlbench.tasks.captioning.rouge import lcs_lengths, rouge_l


def _caption(rng: random.Random, vocab: list[str], max_len: int) -> str:
    r = rng.random()
    n = 0 if r < 0.03 else rng.randint(1, 12) if r < 0.8 else rng.randint(13, max_len)
    return " ".join(rng.choice(vocab) for _ in range(n))


def _random_set(seed: int, n_images: int, max_refs: int, max_len: int, vocab_size: int):
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(vocab_size)]
    cands = [_caption(rng, vocab, max_len) for _ in range(n_images)]
    refs = [[_caption(rng, vocab, max_len) for _ in range(rng.randint(1, max_refs))] for _ in range(n_images)]
    # a candidate equal to one of its references, and one repeating a single word
    cands[0] = refs[0][0]
    cands[1] = " ".join([vocab[0]] * 9)
    refs[1].append(" ".join([vocab[0]] * 4))
    return cands, refs


@pytest.mark.parametrize(
    ("seed", "n_images", "max_refs", "max_len", "vocab_size"),
    [(0, 120, 20, 150, 12), (1, 200, 5, 70, 40), (2, 60, 9, 200, 6), (3, 300, 3, 20, 500)],
)
def test_scorers_match_pycocoevalcap(seed, n_images, max_refs, max_len, vocab_size):
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    cands, refs = _random_set(seed, n_images, max_refs, max_len, vocab_size)
    gts = {i: list(rs) for i, rs in enumerate(refs)}
    res = {i: [c] for i, c in enumerate(cands)}
    corpus = Corpus.build(cands, refs)
    stats = bleu_stats(corpus)
    bleu, bleu_img = Bleu(4).compute_score(gts, res, verbose=0)
    # BLEU's statistics are whole numbers and its formula runs in pycocoevalcap's order, with the
    # same C library power and exponential: equal to the bit, corpus and per image
    assert corpus_bleu(stats) == bleu
    np.testing.assert_array_equal(bleu_from_stats(stats), np.array(bleu_img).T)
    rouge, rouge_img = Rouge().compute_score(gts, res)
    ours = rouge_l(cands, refs, corpus=corpus)
    np.testing.assert_allclose(ours, rouge_img, rtol=0, atol=1e-9)
    assert float(np.mean(ours)) == pytest.approx(rouge, abs=1e-9, rel=0)
    np.testing.assert_allclose(rouge_l(cands, refs), ours, rtol=0, atol=0)  # without the corpus
    cider, cider_img = Cider().compute_score(gts, res)
    cider_d, _ = cider_scores(corpus)
    np.testing.assert_allclose(cider_d, cider_img, rtol=0, atol=1e-9)
    assert float(np.mean(cider_d)) == pytest.approx(cider, abs=1e-9, rel=0)


def _lcs_dp(a: list[int], b: list[int]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


@pytest.mark.parametrize("alphabet", [2, 5, 50])
def test_lcs_lengths_match_the_dynamic_program(alphabet):
    rng = np.random.default_rng(alphabet)
    refs_per_image = rng.integers(1, 6, size=40)
    layout = Layout.of(refs_per_image)
    n_caps = len(layout.cap_code)
    # lengths around the 64-bit word boundaries, and some empty captions
    choices = [0, 1, 2, 7, 63, 64, 65, 127, 128, 129, 200]
    lengths = np.array([rng.choice(choices) if rng.random() < 0.5 else rng.integers(0, 30) for _ in range(n_caps)])
    caps = [rng.integers(0, alphabet, size=int(n)).tolist() for n in lengths]
    tok = np.array([t for c in caps for t in c], dtype=np.int64)
    got = lcs_lengths(tok, lengths.astype(np.int64), layout)
    cand_of_ref = layout.cand_cap[layout.ref_image]
    want = [_lcs_dp(caps[c], caps[r]) for c, r in strict_zip(cand_of_ref, layout.ref_cap)]
    assert got.tolist() == want


def test_sort_keys_is_a_stable_argsort_on_both_paths():
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 50, size=1000)
    want = np.argsort(keys, kind="stable")
    for key_bits in (63, 8):  # packed with the index; too narrow, so a plain argsort
        order, skeys = sort_keys(keys, 50, key_bits=key_bits)
        assert order.tolist() == want.tolist()
        assert skeys.tolist() == keys[want].tolist()


def test_word_ids_equal_a_dict_vocabulary():
    """Token ids from bytes (<= 8 bytes: the bytes as an integer; longer: a dict) partition the
    tokens exactly as a dict over `str.split()` does, line lengths included."""
    rng = random.Random(5)
    words = ["a", "ab", "abcdefgh", "abcdefghi", "abcdefghj", "abcdefgh1", "b\u00e9b\u00e9", "caf\u00e9s",
             "\u6771\u4eac\u6771\u4eac", "\u6771\u4eac\u6771", "x" * 30, "x" * 31, "-lrb-", "'s", "n't", "\U0001f600"]
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 9))) for _ in range(300)] + ["", "a"]
    for text in ("\n".join(lines), "\n".join(lines + ["nul\x00here"]), "", "solo"):
        tok, lengths, v = word_ids(text)
        want_lines = [line.split() for line in text.split("\n")]
        assert lengths.tolist() == [len(t) for t in want_lines]
        flat = [w for t in want_lines for w in t]
        assert len(tok) == len(flat)
        assert len(set(strict_zip(tok.tolist(), flat))) == len(set(flat)) == v
        assert set(tok.tolist()) == set(range(v))


def test_single_spaced_check_matches_its_definition():
    """The numpy check for ASCII text against the regex definition (no leading, trailing or
    double space on any line, no other whitespace), on strings of the characters that matter."""
    import re

    definition = re.compile(r"[^\S\n ]|  |^ | $", re.MULTILINE)
    rng = random.Random(0)
    chars = ["a", "b", " ", "\n", "\t", "\x0b", "\x0c", "\r", "\x1c", "\x1f", "\x1b", "\x7f", "\u00a0", "\u2003"]
    seen = set()
    for _ in range(20_000):
        text = "".join(rng.choice(chars) for _ in range(rng.randint(0, 7)))
        want = definition.search(text) is None
        assert _single_spaced(text) == want, repr(text)
        seen.add(want)
    assert seen == {True, False}
