"""Scoring end to end: perfect, hand-built and full-size submissions, folds, bootstrap."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import deviation_expected
from vlbench.backports import strict_zip
from vlbench.registry import registry
from vlbench.scoring import score_file

from .test_validation import envelope, load_gt, perfect_predictions


def test_perfect_submission_scores_one(retrieval_data: Path, write_json) -> None:
    gt = load_gt("coco-5k", retrieval_data)
    ev = score_file(write_json(envelope(perfect_predictions(gt))), data_dir=retrieval_data, bootstrap=0)
    assert all(v == 1.0 for k, v in ev.result.scores.items() if k != "RSUM")
    assert ev.result.scores["RSUM"] == 600.0
    assert ev.result.n == {"images": 50, "captions": 250, "folds": 1}


def test_first_five_captions_are_kept(retrieval_data: Path) -> None:
    gt = load_gt("coco-5k", retrieval_data)
    # Every 4th test image has a sixth caption in the fixture; the benchmark keeps sentids[:5].
    assert np.bincount(gt.caption_image).tolist() == [5] * 50


def test_hand_built_ranking(retrieval_data: Path, write_json) -> None:
    gt = load_gt("flickr30k-1k", retrieval_data)
    preds = perfect_predictions(gt)
    # Image 0: its first correct caption moved to rank 3 (index 2): R@1 miss, R@5 hit.
    own = preds["image_to_text"][gt.images[0]]  # 5 correct captions, then 5 others
    preds["image_to_text"][gt.images[0]] = own[5:7] + own[:5] + own[7:10]
    # Image 1: no correct caption in the top 10.
    preds["image_to_text"][gt.images[1]] = [c for c in preds["image_to_text"][gt.images[2]]][:5] + [
        c for c in preds["image_to_text"][gt.images[3]]
    ][:5]
    # Caption 0: its image at rank 6 (index 5): R@5 miss, R@10 hit.
    images = preds["text_to_image"][gt.captions[0]]
    preds["text_to_image"][gt.captions[0]] = images[1:6] + images[:1] + images[6:]
    ev = score_file(write_json(envelope(preds, benchmark="flickr30k-1k")), data_dir=retrieval_data, bootstrap=0)
    s = ev.result.scores
    n_img, n_cap = len(gt.images), len(gt.captions)
    assert s["i2t_R@1"] == pytest.approx((n_img - 2) / n_img, abs=0)
    assert s["i2t_R@5"] == pytest.approx((n_img - 1) / n_img, abs=0)
    assert s["i2t_R@10"] == pytest.approx((n_img - 1) / n_img, abs=0)
    assert s["t2i_R@1"] == pytest.approx((n_cap - 1) / n_cap, abs=0)
    assert s["t2i_R@5"] == pytest.approx((n_cap - 1) / n_cap, abs=0)
    assert s["t2i_R@10"] == 1.0
    assert s["RSUM"] == pytest.approx(100 * sum(v for k, v in s.items() if k != "RSUM"), abs=1e-9)


def test_coco_1k_is_the_mean_of_fold_recalls(retrieval_data: Path, write_json) -> None:
    """A ranking over all 5K items: coco-1k filters each list to the query's fold, like ECCV Caption."""
    gt = load_gt("coco-1k", retrieval_data)
    rng = np.random.default_rng(3)
    sim = rng.normal(size=(len(gt.images), len(gt.captions)))
    sim[gt.caption_image, np.arange(len(gt.captions))] += 1.5  # better than chance
    order_i2t = np.argsort(-sim, axis=1, kind="stable")
    order_t2i = np.argsort(-sim.T, axis=1, kind="stable")
    preds = {
        "image_to_text": {im: [int(gt.captions[c]) for c in order_i2t[i]] for i, im in enumerate(gt.images)},
        "text_to_image": {cap: [gt.images[i] for i in order_t2i[c]] for c, cap in enumerate(gt.captions)},
    }
    ev = score_file(write_json(envelope(preds, benchmark="coco-1k")), data_dir=retrieval_data, bootstrap=0)
    # Independent: score each fold as its own small benchmark from the sliced similarity matrix.
    fold_scores = []
    n = len(gt.images) // 5
    for f in range(5):
        imgs = np.arange(f * n, (f + 1) * n)
        caps = np.flatnonzero(np.isin(gt.caption_image, imgs))
        sub = sim[np.ix_(imgs, caps)]
        cap_img = gt.caption_image[caps] - f * n
        i2t = [
            any(cap_img[c] == i for c in np.argsort(-sub[i], kind="stable")[:k]) for k in (1, 5, 10) for i in range(n)
        ]
        t2i = [
            np.argsort(-sub[:, c], kind="stable")[:k].tolist().count(cap_img[c]) > 0
            for k in (1, 5, 10)
            for c in range(len(caps))
        ]
        fold_scores.append(
            [np.mean(i2t[j * n : (j + 1) * n]) for j in range(3)]
            + [np.mean(t2i[j * len(caps) : (j + 1) * len(caps)]) for j in range(3)]
        )
    expected = np.mean(fold_scores, axis=0)
    keys = ["i2t_R@1", "i2t_R@5", "i2t_R@10", "t2i_R@1", "t2i_R@5", "t2i_R@10"]
    for key, value in strict_zip(keys, expected):
        assert ev.result.scores[key] == pytest.approx(value, abs=1e-12)


def test_scoring_is_deterministic_and_bootstrap_is_seeded(retrieval_data: Path, write_json) -> None:
    gt = load_gt("coco-5k", retrieval_data)
    task = registry().tasks["retrieval"]
    b = registry().benchmark("coco-5k")
    path = write_json(envelope(task.random_predictions(gt, b, seed=1)))
    a = score_file(path, data_dir=retrieval_data, bootstrap=200, seed=7).result
    c = score_file(path, data_dir=retrieval_data, bootstrap=200, seed=7).result
    d = score_file(path, data_dir=retrieval_data, bootstrap=200, seed=8).result
    assert a.scores == c.scores and a.ci95 == c.ci95
    assert a.ci95 != d.ci95
    for key, (lo, hi) in a.ci95.items():
        assert lo <= a.scores[key] <= hi or key == "RSUM"


def test_random_submission_is_valid_and_near_chance(retrieval_data: Path, write_json) -> None:
    gt = load_gt("coco-1k", retrieval_data)
    b = registry().benchmark("coco-1k")
    preds = registry().tasks["retrieval"].random_predictions(gt, b, seed=0)
    ev = score_file(write_json(envelope(preds, benchmark="coco-1k")), data_dir=retrieval_data, bootstrap=0)
    # Folds of 10 images / 50 captions: t2i R@10 ranks all 10 images of the fold, always a hit.
    assert ev.result.scores["t2i_R@10"] == 1.0
    assert 0.0 <= ev.result.scores["t2i_R@1"] <= 0.3


def test_full_size_coco_5k(tmp_path: Path) -> None:
    """5,000 images x 5 captions, top-10 both ways: validated and scored like any submission."""
    from tests.conftest import karpathy_doc

    source = tmp_path / "dataset_coco.json"
    source.write_text(json.dumps(karpathy_doc(5000, n_other=1)))
    reg = registry()
    b = reg.benchmark("coco-5k")
    task = reg.task_of(b)
    with deviation_expected():  # a toy source, forced: the warning is expected
        task.prepare(b, str(source), tmp_path / "data", force=True)  # other splits are not full size
    gt = load_gt("coco-5k", tmp_path / "data")
    assert (len(gt.images), len(gt.captions)) == (5000, 25000)
    preds = task.random_predictions(gt, b, seed=0)
    # Make a known share correct: the first 1,000 images and the first 5,000 captions.
    for i in range(1000):
        preds["image_to_text"][gt.images[i]][0] = gt.captions[5 * i]
    for c in range(5000):
        lst = preds["text_to_image"][gt.captions[c]]
        own = gt.images[gt.caption_image[c]]
        if own in lst:
            lst.remove(own)
        else:
            lst.pop()
        lst.insert(0, own)
    path = tmp_path / "sub.json"
    path.write_text(json.dumps(envelope(preds)))
    ev = score_file(path, data_dir=tmp_path / "data", bootstrap=100)
    s = ev.result.scores
    assert s["i2t_R@1"] >= 0.2 and s["t2i_R@1"] >= 0.2
    assert ev.result.ci95["i2t_R@1"][0] < s["i2t_R@1"] < ev.result.ci95["i2t_R@1"][1]


