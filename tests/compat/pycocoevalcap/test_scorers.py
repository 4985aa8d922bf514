"""pycocoevalcap 1.2's behaviour around the numbers, one quirk at a time: argument checks, return
types, what is printed, the tokenizer's per-call look-ahead, the parameters it accepts. Where the
real library can run the same call here, the test runs it too."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from compat_inputs import needs_java

from vlbench.compat.pycocoevalcap.bleu.bleu import Bleu
from vlbench.compat.pycocoevalcap.cider.cider import Cider
from vlbench.compat.pycocoevalcap.rouge.rouge import Rouge
from vlbench.compat.pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

GTS = {3: ["a dog runs on the grass", "the dog is running"], 1: ["a cat on a mat"], 2: ["two birds fly"]}
RES = {3: ["a dog is running"], 1: ["a cat sits"], 2: ["birds fly"]}


def _quiet(f, *args, **kwargs):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        return f(*args, **kwargs), buf.getvalue()


@pytest.mark.parametrize("scorer", [Bleu(4), Rouge(), Cider()])
def test_the_checks_of_pycocoevalcap_raise_assertion_errors(scorer):
    with pytest.raises(AssertionError, match="same image ids"):
        _quiet(scorer.compute_score, GTS, {3: RES[3]})
    with pytest.raises(AssertionError, match="exactly one caption"):
        _quiet(scorer.compute_score, GTS, {**RES, 1: ["a", "b"]})
    with pytest.raises(AssertionError, match="must be a list"):
        _quiet(scorer.compute_score, GTS, {**RES, 1: ("a cat",)})
    with pytest.raises(AssertionError, match="no reference"):
        _quiet(scorer.compute_score, {**GTS, 2: []}, RES)


def test_return_types_and_image_order_follow_gts():
    (bleu, bleu_img), printed = _quiet(Bleu(4).compute_score, GTS, RES)
    assert type(bleu) is list and all(type(x) is float for x in bleu)
    assert type(bleu_img) is list and all(type(x) is list and len(x) == 3 for x in bleu_img)
    # by hand: candidates of 4, 3 and 2 words; closest references of 4, 5 and 3 words
    assert printed.splitlines()[0] == "{'testlen': 9, 'reflen': 12, 'guess': [9, 6, 3, 1], 'correct': [8, 5, 1, 0]}"
    assert printed.splitlines()[1] == f"ratio: {(9 + 1e-15) / (12 + 1e-9)!r}"
    from pycocoevalcap.bleu.bleu import Bleu as RealBleu

    assert printed == _quiet(RealBleu(4).compute_score, GTS, RES)[1]
    rouge, rouge_img = Rouge().compute_score(GTS, RES)
    assert type(rouge) is np.float64 and type(rouge_img) is np.ndarray
    assert rouge_img[1] == pytest.approx(Rouge().calc_score(RES[1], GTS[1]))
    cider, cider_img = Cider().compute_score(GTS, RES)
    assert type(cider) is np.float64 and cider_img.shape == (3,)
    # the per-image lists are in gts' order (3, 1, 2), not sorted
    _, again = Cider().compute_score({k: GTS[k] for k in (1, 2, 3)}, RES)
    np.testing.assert_allclose(cider_img, again[[2, 0, 1]], rtol=0, atol=1e-15)


def test_bleu_n_and_cider_parameters_as_pycocoevalcap_takes_them():
    from pycocoevalcap.bleu.bleu import Bleu as RealBleu
    from pycocoevalcap.cider.cider import Cider as RealCider

    for n in (1, 2, 3):
        ours, _ = _quiet(Bleu(n).compute_score, GTS, RES)
        real, _ = _quiet(RealBleu(n).compute_score, GTS, RES)
        assert np.allclose(ours[0], real[0], rtol=0, atol=1e-12) and len(ours[0]) == n
    with pytest.raises(ValueError, match="n must be 1 to 4"):
        Bleu(5)
    # Cider(n=6): pycocoevalcap's two empty orders lower the mean; Cider(n=3) fails there too
    ours6 = Cider(n=6).compute_score(GTS, RES)
    real6 = RealCider(n=6).compute_score(GTS, RES)
    assert abs(ours6[0] - real6[0]) < 1e-12 and np.allclose(ours6[1], real6[1], rtol=0, atol=1e-12)
    with pytest.raises(IndexError):
        RealCider(n=3).compute_score(GTS, RES)
    with pytest.raises(ValueError, match="at least 4"):
        Cider(n=3)
    with pytest.raises(ValueError, match="sigma"):
        Cider(sigma=4.0)
    assert Cider(test="ignored", refs="ignored").method() == "CIDEr"


def test_edge_inputs_as_pycocoevalcap_treats_them():
    from pycocoevalcap.bleu.bleu import Bleu as RealBleu
    from pycocoevalcap.cider.cider import Cider as RealCider

    assert _quiet(Bleu(4).compute_score, {}, {})[0] == _quiet(RealBleu(4).compute_score, {}, {})[0]
    one = ({"x": ["a b c"]}, {"x": ["a b"]})
    assert Cider().compute_score(*one)[0] == RealCider().compute_score(*one)[0] == 0.0  # log(1) = 0
    with pytest.raises(ValueError):
        RealCider().compute_score({}, {})
    with pytest.raises(ValueError, match="at least one image"):
        Cider().compute_score({}, {})


def test_tokenizer_shapes_and_an_image_without_captions():
    out = PTBTokenizer().tokenize({"b": [{"caption": "A Dog (brown)."}, {"caption": "it's\nhere!"}],
                                   "a": [], "c": [{"caption": ""}]})
    assert out == {"b": ["a dog -lrb- brown -rrb-", "it 's here"], "c": [""]}
    with pytest.raises(TypeError, match="image 'x'"):
        PTBTokenizer().tokenize({"x": [{"caption": 3}]})
    with pytest.warns(RuntimeWarning, match="shift every later caption"):
        PTBTokenizer().tokenize({"x": [{"caption": "a\rb"}]})


def test_tokenizer_looks_across_captions_of_one_call_only():
    """The jar splits the period off "video i." only when the next line starts with a sentence
    starter; pycocoevalcap runs the jar once per tokenize() call, so the next caption counts only
    within a call."""
    tok = PTBTokenizer()
    both = tok.tokenize({1: [{"caption": "a video i."}, {"caption": "However it ends"}]})
    alone = tok.tokenize({1: [{"caption": "a video i."}]})
    assert both[1][0] == "a video i" and alone[1][0] == "a video i."


@needs_java
def test_tokenizer_equals_the_jar_per_call():
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer as RealTokenizer

    calls = [
        {1: [{"caption": "a video i."}, {"caption": "However it ends"}]},
        {1: [{"caption": "a video i."}]},
        {2: [{"caption": "Mr. Smith at 5 p.m. in St. Louis"}], 1: [{"caption": ":) x"}, {"caption": "so :)"}]},
        {"k": [{"caption": "e-mail me@x.org, http://x.com/a_b ok"}, {"caption": "  "}, {"caption": "The end."}]},
    ]
    for call in calls:
        assert PTBTokenizer().tokenize(call) == RealTokenizer().tokenize(call)


def test_the_drop_list_constant_is_pycocoevalcaps():
    from pycocoevalcap.tokenizer import ptbtokenizer as real

    from vlbench.compat.pycocoevalcap.tokenizer.ptbtokenizer import PUNCTUATIONS

    assert PUNCTUATIONS == real.PUNCTUATIONS
