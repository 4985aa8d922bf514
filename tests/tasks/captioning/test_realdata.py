"""Regression tests over the real caption files of ../shared/realdata (skipped when it is absent):
caption sets A-E and the coco-caption fakecap results, scored by vlbench end to end (file in,
result out) and by pycocoevalcap 1.2 the way its COCOEvalCap.evaluate() does (minus SPICE, which
cannot run offline), on the same files; every metric equal, corpus and per image.

pycocoevalcap needs Java for its tokenizer, so its values are computed once when Java is present
and kept in pytest's cache (keyed by the sha256 of both files and the pycocoevalcap version):
a later run with VLBENCH_JAVA=none then checks that the core install, with no Java at all, gives
the very same BLEU, ROUGE-L and CIDEr-D on the real captions (METEOR reported unavailable)."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import io
import json
from pathlib import Path

import numpy as np
import pytest
import realdata
from conftest import HAVE_JAVA

from vlbench.errors import InvalidSubmission
from vlbench.scoring import Evaluation, score_file
from vlbench.tasks.captioning import TASK

pytestmark = pytest.mark.skipif(not realdata.available(), reason="../shared/realdata is absent")

FAKECAP = realdata.REALDATA / "coco-caption" / "captions_val2014_fakecap_results.json"
ECE285_REFS = realdata.REALDATA / "ece285" / "captions_val2014.json"
METRICS = {"BLEU-1": "Bleu_1", "BLEU-2": "Bleu_2", "BLEU-3": "Bleu_3", "BLEU-4": "Bleu_4",
           "ROUGE-L": "ROUGE_L", "CIDEr-D": "CIDEr"}
PER_IMAGE_COLUMN = {"BLEU-1": "BLEU-1@image", "BLEU-2": "BLEU-2@image", "BLEU-3": "BLEU-3@image",
                    "BLEU-4": "BLEU-4@image", "ROUGE-L": "ROUGE-L", "CIDEr-D": "CIDEr-D", "METEOR": "METEOR@image"}
CACHE_VERSION = 1


def pycocoevalcap_scores(cands: Path, refs: Path) -> dict:
    """COCOEvalCap.evaluate() without SPICE: the images of the results (`cocoRes.getImgIds()`),
    references and candidates tokenized by PTBTokenizer, each scorer on them."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.meteor.meteor import Meteor
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer
    from pycocotools.coco import COCO

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO(str(refs))
        res = coco.loadRes(str(cands))
    ids = res.getImgIds()
    gts = PTBTokenizer().tokenize({i: coco.imgToAnns[i] for i in ids})
    hyp = PTBTokenizer().tokenize({i: res.imgToAnns[i] for i in ids})
    corpus: dict[str, float] = {}
    per_image: dict[str, list[float]] = {}
    bleu, bleu_img = Bleu(4).compute_score(gts, hyp, verbose=0)
    for k in range(4):
        corpus[f"Bleu_{k + 1}"], per_image[f"Bleu_{k + 1}"] = bleu[k], list(bleu_img[k])
    for name, scorer in (("METEOR", Meteor()), ("ROUGE_L", Rouge()), ("CIDEr", Cider())):
        score, scores = scorer.compute_score(gts, hyp)
        corpus[name], per_image[name] = float(score), [float(x) for x in scores]
        del scorer  # Meteor's JVM goes with it
    return {"ids": list(ids), "corpus": corpus, "per_image": per_image}


def _sha256(*paths: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def _cases(tmp: Path) -> dict[str, tuple[Path, Path, bool]]:
    """name -> (candidates, references, subset mode)."""
    cases = {s: (realdata.DERIVED / f"{s}_cands.json", realdata.DERIVED / f"{s}_refs.json", False) for s in realdata.SETS}
    # pycocoevalcap's example file against the ece285 cut of val2014, restricted to the images
    # both have (pycocoevalcap asserts on the rest, and so does vlbench: see the test below)
    known = {img["id"] for img in json.loads(ECE285_REFS.read_text())["images"]}
    sub = tmp / "fakecap_in_ece285.json"
    sub.write_text(json.dumps([r for r in json.loads(FAKECAP.read_text()) if r["image_id"] in known]))
    cases["fakecap-subset"] = (sub, ECE285_REFS, True)
    return cases


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, tuple[Path, Path, bool]]:
    return _cases(tmp_path_factory.mktemp("realdata"))


@pytest.fixture(scope="module")
def reference(request, cases) -> dict[str, dict]:
    """pycocoevalcap's values per case: computed once (Java needed), then read from pytest's cache."""
    version = importlib.metadata.version("pycocoevalcap")
    cache = getattr(request.config, "cache", None)  # absent under -p no:cacheprovider: compute each run
    out = {}
    for name, (cands, refs, _) in cases.items():
        key = f"vlbench/captioning/pycocoevalcap/{name}-{_sha256(cands, refs)[:32]}-{version}-{CACHE_VERSION}"
        value = cache.get(key, None) if cache is not None else None
        if value is None:
            if not HAVE_JAVA:
                pytest.skip("pycocoevalcap needs Java, and its values on the real sets are not cached yet")
            value = pycocoevalcap_scores(cands, refs)
            if cache is not None:
                cache.set(key, value)
        out[name] = value
    return out


@pytest.fixture(scope="module")
def ours(cases) -> dict[str, Evaluation]:
    return {
        name: score_file(cands, benchmark_override=TASK.references_benchmark(refs, subset=subset), bootstrap=0)
        for name, (cands, refs, subset) in cases.items()
    }


@pytest.mark.parametrize("name", [*realdata.SETS, "fakecap-subset"])
def test_every_metric_equals_pycocoevalcap(name, reference, ours):
    ref, ev = reference[name], ours[name]
    table = ev.items["images"]
    assert table.ids == [str(i) for i in ref["ids"]]  # same images, same order
    column = {c: table.values[:, j] for j, c in enumerate(table.columns)}
    metrics = dict(METRICS)
    metrics["METEOR"] = "METEOR"  # computed in Python, with or without Java
    for ours_key, theirs_key in metrics.items():
        tol = 1e-6 if ours_key == "METEOR" else 1e-9  # the jar prints METEOR with limited digits
        assert ev.result.scores[ours_key] == pytest.approx(ref["corpus"][theirs_key], abs=tol, rel=0), ours_key
        np.testing.assert_allclose(column[PER_IMAGE_COLUMN[ours_key]], ref["per_image"][theirs_key],
                                   rtol=0, atol=tol, err_msg=ours_key)


@pytest.mark.parametrize("name", [*realdata.SETS, "fakecap-subset"])
def test_no_caption_needs_the_whole_lexer(name, ours):
    tokenizer = ours[name].result.extra["tokenizer"]
    assert tokenizer["rare_shapes"] == 0 and tokenizer["captions"] > 0


def test_subset_mode_records_its_coverage(ours):
    result = ours["fakecap-subset"].result
    assert result.n["images"] == 134 and result.n["reference_images"] == 4800
    assert result.extra["subset"] == {"scored_images": 134, "reference_images": 4800}
    assert any("134 images" in note and "4,800" in note for note in result.extra["notes"])


def test_fakecap_against_a_cut_of_val2014(cases):
    """pycocoevalcap asserts when results name images the references lack; vlbench refuses the
    file too, naming every such image, in subset mode as in full mode."""
    from pycocotools.coco import COCO

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO(str(ECE285_REFS))
        with pytest.raises(AssertionError, match="do not correspond"):
            coco.loadRes(str(FAKECAP))
    for subset in (True, False):
        with pytest.raises(InvalidSubmission) as err:
            score_file(FAKECAP, benchmark_override=TASK.references_benchmark(ECE285_REFS, subset=subset),
                       bootstrap=0, max_errors=5)
        assert err.value.issues.by_code["unknown_image"] == 866
        assert ("missing_images" in err.value.issues.by_code) is (not subset)
