"""Drivers that call pycocoevalcap and MDETR's evaluator the way real callers do, written for the
tests from reading those callers (not copied). Each takes the package to import from (the real one,
or vlbench's drop-in: the one-line change) and returns every output the caller sees, printed text
included.

- `lmms_eval_style`: lmms-eval's `lmms_eval/tasks/coco_cap/utils.py` (`coco_aggregation_result`):
  a COCO object built in memory from the results, `COCOEvalCap(coco, coco_result)` only for its
  `params["image_id"]`, `imgToAnns` gathered by hand, `PTBTokenizer` on references then candidates,
  then each scorer's `compute_score` (Bleu(4) picks BLEU-n from the list).
- `coco_caption_eval`: LAVIS's and BLIP's `coco_caption_eval`: `COCO(annotation_file)`,
  `loadRes(results_file)`, `COCOEvalCap(...).evaluate()`, print `eval`; with `subset`, the
  pycocoevalcap example's `params["image_id"] = coco_result.getImgIds()` (a plain script).
- `scorer_calls`: training scripts calling the scorers directly on their own (untokenized) dicts.
- `mdetr_engine`: MDETR's `engine.evaluate` with a `FlickrEvaluator`: records added batch by batch
  with `update`, then `synchronize_between_processes()`, then `summarize()`.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import re
from pathlib import Path
from typing import Any

REAL = "pycocoevalcap"
OURS = "vlbench.compat.pycocoevalcap"
LMMS_METRICS = ["Bleu_4", "Bleu_3", "Bleu_2", "Bleu_1", "METEOR", "ROUGE_L", "CIDEr"]


def _printed(buf: io.StringIO) -> str:
    """What the caller saw, less pycocotools' timings ("Done (t=0.01s)")."""
    return re.sub(r"\(t=[0-9.]+s\)", "(t=...)", buf.getvalue())


def _module(package: str, name: str) -> Any:
    return importlib.import_module(f"{package}.{name}")


def lmms_eval_style(package: str, results: list[dict[str, Any]], metrics: list[str] = LMMS_METRICS) -> dict[str, Any]:
    """`results`: lmms-eval's per-sample records {"image_id", "pred", "answer": [references]}."""
    from pycocotools.coco import COCO

    ev = _module(package, "eval")  # lmms-eval imports the scorers from pycocoevalcap.eval
    tok_mod = _module(package, "tokenizer.ptbtokenizer")
    out: dict[str, Any] = {"scores": {}, "per_image": {}}
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        scorers = [(ev.Bleu(4), "Bleu_1"), (ev.Bleu(4), "Bleu_2"), (ev.Bleu(4), "Bleu_3"), (ev.Bleu(4), "Bleu_4"),
                   (ev.Meteor(), "METEOR"), (ev.Rouge(), "ROUGE_L"), (ev.Cider(), "CIDEr")]
        by_metric = {m: s for s, m in scorers}
        dataset: dict[str, list] = {"annotations": [], "images": []}
        stored = []
        idx = 0
        for r in results:
            stored.append({"image_id": int(r["image_id"]), "caption": r["pred"]})
            for a in r["answer"]:
                dataset["annotations"].append({"image_id": int(r["image_id"]), "caption": a, "id": idx})
                idx += 1
            dataset["images"].append({"id": r["image_id"]})
        coco = COCO()
        coco.dataset = dataset
        coco.createIndex()
        coco_result = coco.loadRes(stored)
        coco_eval = ev.COCOEvalCap(coco, coco_result)
        gts, res = {}, {}
        for img in coco_eval.params["image_id"]:
            gts[img] = coco_eval.coco.imgToAnns[img]
            res[img] = coco_eval.cocoRes.imgToAnns[img]
        tokenizer = tok_mod.PTBTokenizer()
        gts = tokenizer.tokenize(gts)
        res = tokenizer.tokenize(res)
        out["tokenized"] = (gts, res)
        for metric in metrics:
            score, scores = by_metric[metric].compute_score(gts, res)
            if type(score) is list:
                n = int(metric.split("_")[-1])
                score, scores = score[n - 1], scores[n - 1]
            out["scores"][metric] = score
            out["per_image"][metric] = scores
        for scorer, _ in scorers:  # lmms-eval leaves them to the garbage collector
            if hasattr(scorer, "close"):
                scorer.close()
    out["printed"] = _printed(buf)
    return out


def coco_caption_eval(package: str, annotation_file: Path, results_file: Path, subset: bool = False) -> dict[str, Any]:
    from pycocotools.coco import COCO

    ev = _module(package, "eval")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        coco = COCO(str(annotation_file))
        coco_result = coco.loadRes(str(results_file))
        coco_eval = ev.COCOEvalCap(coco, coco_result)
        if subset:
            coco_eval.params["image_id"] = coco_result.getImgIds()
        coco_eval.evaluate()
        for metric, score in coco_eval.eval.items():
            print(f"{metric}: {score:.3f}")
    return {"eval": coco_eval.eval, "imgToEval": coco_eval.imgToEval, "evalImgs": coco_eval.evalImgs,
            "printed": _printed(buf)}


def scorer_calls(package: str, gts: dict[Any, list[str]], res: dict[Any, list[str]], meteor: bool) -> dict[str, Any]:
    """Each scorer's `compute_score` on the caller's own dicts, as training scripts call them."""
    buf = io.StringIO()
    out: dict[str, Any] = {}
    with contextlib.redirect_stdout(buf):
        out["Bleu"] = _module(package, "bleu.bleu").Bleu(4).compute_score(gts, res)
        out["Bleu_2"] = _module(package, "bleu.bleu").Bleu(2).compute_score(gts, res, verbose=2)
        out["Rouge"] = _module(package, "rouge.rouge").Rouge().compute_score(gts, res)
        out["Cider"] = _module(package, "cider.cider").Cider().compute_score(gts, res)
        if meteor:
            m = _module(package, "meteor.meteor").Meteor()
            out["Meteor"] = m.compute_score(gts, res)
            if hasattr(m, "close"):
                m.close()
    out["printed"] = _printed(buf)
    return out


def write_coco_files(folder: Path, cands: list[str], refs: list[list[str]], ids: list[int] | None = None) -> tuple[Path, Path]:
    """A COCO captions annotation file and a results file for candidates and references."""
    ids = ids if ids is not None else list(range(len(cands)))
    ann, k = [], 0
    for i, rs in zip(ids, refs):
        for r in rs:
            ann.append({"image_id": i, "id": k, "caption": r})
            k += 1
    doc = {"images": [{"id": i} for i in ids], "annotations": ann, "type": "captions",
           "info": {}, "licenses": []}
    a, r = folder / "captions.json", folder / "results.json"
    a.write_text(json.dumps(doc))
    r.write_text(json.dumps([{"image_id": i, "caption": c} for i, c in zip(ids, cands)]))
    return a, r


def mdetr_engine(evaluator: Any, records: list[dict[str, Any]], batch: int = 8) -> dict[str, Any]:
    """MDETR's evaluation loop around a FlickrEvaluator: per batch `update(flickr_res)`, then
    `synchronize_between_processes()` and `stats["flickr"] = summarize()`."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        for start in range(0, len(records), batch):
            evaluator.update(records[start : start + batch])
        evaluator.synchronize_between_processes()
        flickr = evaluator.summarize()
    return {"flickr": flickr, "results": evaluator.results, "printed": _printed(buf)}
