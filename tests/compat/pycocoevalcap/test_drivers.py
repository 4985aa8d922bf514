"""The drivers of real callers (lmms-eval, LAVIS/BLIP, a plain script, training scripts) run against
pycocoevalcap 1.2 and against vlbench.compat.pycocoevalcap: every output equal (eval, imgToEval,
evalImgs in order, per-image lists and arrays with their types, printed text), BLEU, ROUGE-L and
CIDEr to 1e-12, METEOR to 1e-9. pycocoevalcap's tokenizer and METEOR run its jars, so those runs
need Java; its BLEU, ROUGE-L and CIDEr run everywhere."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from compat_compare import max_difference
from compat_drivers import (
    OURS,
    REAL,
    coco_caption_eval,
    lmms_eval_style,
    scorer_calls,
    write_coco_files,
)
from compat_inputs import HAVE_JAVA, caption_realdata, caption_sets, needs_java

SETS = caption_sets.SETS
REAL_SETS = list(caption_realdata.SETS) if caption_realdata.available() else []
# pycocoevalcap's whole evaluate() on a real set takes 25-55 s here (its METEOR JVM loads the full
# paraphrase table): two sets by default (coco-caption's fakecap on COCO references, Flickr30k),
# all five with VLBENCH_COMPAT_ALL_REAL=1
EVALUATE_SETS = REAL_SETS if os.environ.get("VLBENCH_COMPAT_ALL_REAL") == "1" else [s for s in REAL_SETS if s in "BD"]
needs_realdata = pytest.mark.skipif(not REAL_SETS, reason="../shared/realdata is absent")


class StubSpice:
    """What users put in place of SPICE (`pycocoevalcap.eval.Spice = ...`): a number per image
    made from the candidate's length, in sorted image order as SPICE returns them."""

    def compute_score(self, gts, res):
        per = [{"All": {"f": len(res[i][0]) / 100.0, "pr": 0.5, "re": 0.25}} for i in sorted(gts)]
        return np.mean(np.array([p["All"]["f"] for p in per])), per

    def method(self):
        return "SPICE"


def _lmms_records(cands, refs, ids=None):
    ids = ids if ids is not None else list(range(len(cands)))
    return [{"image_id": i, "pred": c, "answer": rs} for i, c, rs in zip(ids, cands, refs)]


@pytest.fixture(scope="module")
def stubbed(request):
    mp = pytest.MonkeyPatch()
    import pycocoevalcap.eval

    import vlbench.compat.pycocoevalcap.eval

    mp.setattr(pycocoevalcap.eval, "Spice", StubSpice)
    mp.setattr(vlbench.compat.pycocoevalcap.eval, "Spice", StubSpice)
    yield
    mp.undo()


@needs_java
@pytest.mark.parametrize("name", sorted(SETS))
def test_lmms_eval_driver(name):
    cands, refs = SETS[name]
    records = _lmms_records(cands, refs, [7 * i + 3 for i in range(len(cands))])
    real = lmms_eval_style(REAL, records)
    ours = lmms_eval_style(OURS, records)
    assert max_difference(real, ours) <= 1e-9
    assert set(ours["scores"]) == set(real["scores"]) and len(ours["per_image"]["CIDEr"]) == len(cands)


@needs_java
@pytest.mark.parametrize("name", sorted(SETS))
def test_coco_caption_eval_driver(name, tmp_path, stubbed):
    """LAVIS/BLIP's coco_caption_eval, SPICE replaced in both modules: also checks that evaluate()
    takes its scorers from the module's names, and the SPICE ordering quirk (sorted, then zipped
    with gts' order): the ids are not in sorted order here."""
    cands, refs = SETS[name]
    ids = [(37 * i) % 1009 + 1 for i in range(len(cands))]
    ann, res = write_coco_files(tmp_path, cands, refs, ids)
    real = coco_caption_eval(REAL, ann, res)
    ours = coco_caption_eval(OURS, ann, res)
    assert max_difference(real, ours) <= 1e-9
    assert list(ours["eval"]) == ["Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "METEOR", "ROUGE_L", "CIDEr", "SPICE"]


@needs_java
@needs_realdata
@pytest.mark.parametrize("name", EVALUATE_SETS)
def test_plain_script_on_real_sets(name, stubbed):
    """pycocoevalcap's example script (`params["image_id"] = coco_result.getImgIds()`) on the real
    caption sets."""
    cands_path, refs_path, _, _ = caption_realdata.load_set(name)
    real = coco_caption_eval(REAL, refs_path, cands_path, subset=True)
    ours = coco_caption_eval(OURS, refs_path, cands_path, subset=True)
    assert max_difference(real, ours) <= 1e-9


@needs_java
@needs_realdata
def test_lmms_eval_driver_on_real_captions():
    _, _, cands, doc = caption_realdata.load_set("B")
    by_image = {}
    for a in doc["annotations"]:
        by_image.setdefault(a["image_id"], []).append(a["caption"])
    records = [{"image_id": c["image_id"], "pred": c["caption"], "answer": by_image[c["image_id"]]} for c in cands]
    assert max_difference(lmms_eval_style(REAL, records), lmms_eval_style(OURS, records)) <= 1e-9


def _raw_dicts(cands, refs):
    """Untokenized captions as a training script may pass them: punctuation, capitals, double
    spaces and tabs reach the scorers (BLEU and CIDEr split on any whitespace, ROUGE-L on one
    space)."""
    gts = {f"img{i}": [r + ("  ok" if i % 3 == 0 else "") for r in rs] for i, rs in enumerate(refs)}
    res = {f"img{i}": [c.replace(" ", "\t", 1) if i % 4 == 0 else c] for i, c in enumerate(cands)}
    return gts, res


@pytest.mark.parametrize("name", sorted(SETS))
def test_scorer_calls_on_raw_dicts(name):
    """BLEU (verbose=2 prints every image), ROUGE-L and CIDEr: pycocoevalcap runs them without
    Java, so this comparison runs everywhere; METEOR on untokenized text joins where Java is
    present, on the edge set (its JVM takes 10-20 s; the other sets' METEOR is in the drivers
    above)."""
    gts, res = _raw_dicts(*SETS[name])
    meteor = HAVE_JAVA and name == "edge"
    real = scorer_calls(REAL, gts, res, meteor=meteor)
    ours = scorer_calls(OURS, gts, res, meteor=meteor)
    assert max_difference(real, ours) <= 1e-9


@needs_realdata
@pytest.mark.parametrize("name", REAL_SETS)
def test_scorer_calls_on_real_tokens(name):
    """The real sets as vlbench tokenizes them (equal to the jar, tested in tests/tasks/captioning):
    BLEU, ROUGE-L and CIDEr per image and corpus against pycocoevalcap, without Java."""
    cands, refs = caption_realdata.pycoco_tokenized(name)
    gts = {i: rs for i, rs in enumerate(refs)}
    res = {i: [c] for i, c in enumerate(cands)}
    real = scorer_calls(REAL, gts, res, meteor=False)
    ours = scorer_calls(OURS, gts, res, meteor=False)
    assert max_difference(real, ours) <= 1e-12


@needs_java
def test_evaluate_without_spice_warns_and_keeps_every_other_metric(tmp_path, stubbed, monkeypatch):
    """Unstubbed, SPICE cannot run here (no CoreNLP jars): evaluate() warns and reports the rest,
    equal to the stubbed run's."""
    import vlbench.compat.pycocoevalcap.eval as ours_eval
    from vlbench.compat.pycocoevalcap.spice.spice import Spice

    cands, refs = SETS["seed004"]
    ann, res = write_coco_files(tmp_path, cands, refs)
    with_stub = coco_caption_eval(OURS, ann, res)
    monkeypatch.setattr(ours_eval, "Spice", Spice)
    try:
        Spice()
        pytest.skip("SPICE can run on this machine")
    except ours_eval.SpiceUnavailable:
        pass
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plain = coco_caption_eval(OURS, ann, res)
    left_out = [w for w in caught if issubclass(w.category, ours_eval.SpiceLeftOutWarning)]
    assert len(left_out) == 1 and "stanford-corenlp-3.6.0" in str(left_out[0].message)
    assert "SPICE" not in plain["eval"]
    del with_stub["eval"]["SPICE"]
    for row in with_stub["imgToEval"].values():
        del row["SPICE"]
    assert max_difference({k: with_stub[k] for k in ("eval", "imgToEval", "evalImgs")},
                          {k: plain[k] for k in ("eval", "imgToEval", "evalImgs")}) == 0.0
    kept = [line for line in with_stub["printed"].splitlines() if "SPICE" not in line]
    assert plain["printed"].splitlines() == kept
