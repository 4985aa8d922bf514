"""pycocoevalcap 1.2's `COCOEvalCap`: tokenize, then BLEU-1..4, METEOR, ROUGE-L, CIDEr-D and
SPICE over `params["image_id"]`, results in `eval`, `imgToEval` and `evalImgs`.

`evaluate()` builds its scorers from this module's names (`Bleu`, `Meteor`, `Rouge`, `Cider`,
`Spice`, `PTBTokenizer`) when it runs, as pycocoevalcap's does, so code that replaces one of them
here (a stub for SPICE, say) keeps working. Where SPICE cannot run, every other metric is computed
and a `SpiceLeftOutWarning` says why SPICE is missing from `eval`.
"""

from __future__ import annotations

import warnings
from typing import Any

from .bleu.bleu import Bleu
from .cider.cider import Cider
from .meteor.meteor import Meteor
from .rouge.rouge import Rouge
from .spice.spice import Spice, SpiceUnavailable
from .tokenizer.ptbtokenizer import PTBTokenizer

__all__ = ["COCOEvalCap", "PTBTokenizer", "Bleu", "Meteor", "Rouge", "Cider", "Spice", "SpiceLeftOutWarning"]

_Meteor = Meteor  # the class closed after scoring (not a replacement put in its place)


class SpiceLeftOutWarning(RuntimeWarning):
    """`evaluate()` left SPICE out: it cannot run on this machine (the message says why)."""


class COCOEvalCap:
    def __init__(self, coco: Any, cocoRes: Any) -> None:
        self.evalImgs: list[dict[str, Any]] = []
        self.eval: dict[str, Any] = {}
        self.imgToEval: dict[Any, dict[str, Any]] = {}
        self.coco = coco
        self.cocoRes = cocoRes
        self.params = {"image_id": coco.getImgIds()}

    def evaluate(self) -> None:
        imgIds = self.params["image_id"]
        gts = {}
        res = {}
        for imgId in imgIds:
            gts[imgId] = self.coco.imgToAnns[imgId]
            res[imgId] = self.cocoRes.imgToAnns[imgId]

        print("tokenization...")
        tokenizer = PTBTokenizer()
        gts = tokenizer.tokenize(gts)
        res = tokenizer.tokenize(res)

        print("setting up scorers...")
        scorers: list[tuple[Any, Any]] = [
            (Bleu(4), ["Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4"]),
            (Meteor(), "METEOR"),
            (Rouge(), "ROUGE_L"),
            (Cider(), "CIDEr"),
        ]
        try:
            scorers.append((Spice(), "SPICE"))
        except SpiceUnavailable as exc:
            warnings.warn(f"SPICE is left out of the results: {exc}", SpiceLeftOutWarning, stacklevel=2)

        try:
            for scorer, method in scorers:
                print(f"computing {scorer.method()} score...")
                score, scores = scorer.compute_score(gts, res)
                if type(method) is list:
                    for sc, scs, m in zip(score, scores, method):
                        self.setEval(sc, m)
                        self.setImgToEvalImgs(scs, gts.keys(), m)
                        print("%s: %0.3f" % (m, sc))  # noqa: UP031 (pycocoevalcap's format, for any score type)
                else:
                    self.setEval(score, method)
                    self.setImgToEvalImgs(scores, gts.keys(), method)
                    print("%s: %0.3f" % (method, score))  # noqa: UP031
        finally:
            for scorer, _ in scorers:
                if isinstance(scorer, _Meteor):
                    scorer.close()
        self.setEvalImgs()

    def setEval(self, score: Any, method: str) -> None:
        self.eval[method] = score

    def setImgToEvalImgs(self, scores: Any, imgIds: Any, method: str) -> None:
        # zip: per-image scores are matched to gts' image order (SPICE's come sorted by id: a
        # pycocoevalcap quirk, kept)
        for imgId, score in zip(imgIds, scores):
            if imgId not in self.imgToEval:
                self.imgToEval[imgId] = {}
                self.imgToEval[imgId]["image_id"] = imgId
            self.imgToEval[imgId][method] = score

    def setEvalImgs(self) -> None:
        self.evalImgs = [eval for imgId, eval in self.imgToEval.items()]
