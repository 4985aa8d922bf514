"""The drop-ins against the libraries they replace, in process, in one run.

Captions (the lmms-eval run): on the 5,000-image x 5-reference synthetic set of
bench_captioning.py (or, with --real-captions, the first 5,000 images of the real sets A-E),
`PTBTokenizer().tokenize(gts)`, `.tokenize(res)`, then `Bleu(4)`, `Meteor()`, `Rouge()` and
`Cider()`, each constructed and its `compute_score(gts, res)` called, as lmms-eval's coco_cap task
does: pycocoevalcap 1.2 (its jars: two PTB runs, the Meteor JVM loading the whole paraphrase
table) against vlbench.compat.pycocoevalcap, whose Meteor is closed at the end (a machine's first
run waits there for its paraphrase index to be written). vlbench twice per repeat: "first run" with
an empty METEOR index folder (VLBENCH_METEOR_CACHE set to a fresh temporary folder: the index is
built during the run, as on a new machine) and "later run" with the index in place. Runs are
interleaved (pycocoevalcap, first, later) and the medians compared. Every score, corpus and per
image, is checked equal first (1e-12; METEOR 1e-9).

Grounding: `FlickrEvaluator(flickr_path, "test")`, `update(records)`,
`synchronize_between_processes()`, `summarize()` on the real Flickr30k Entities test tree and
MDETR-format predictions of ../shared/realdata (14,481 phrases; `--preds` picks the file), printed
tables discarded. The reference is MDETR's own `datasets/flickr_eval.py`, read from a checkout of
ashkamath/mdetr (`--mdetr` DIR: a work tree or a bare git dir, whose `datasets/flickr_eval.py` and
`util/dist.py` are read with `git show HEAD:...`; it needs torch and prettytable; torch's import is
not timed). Without it, `tasks/grounding/reference.py` (MDETR's loop restated) stands in, and the
output says so. vlbench "cold" reads the tree and writes its cache (fresh VLBENCH_COMPAT_CACHE),
"warm" reads the cache. Runs are interleaved (reference, cold, warm); each is timed in wall-clock
and in this process's CPU seconds (less sensitive to other jobs on a shared machine), medians
compared, and the load average is printed at each repeat. Results are checked equal.

Usage: python benchmarks/bench_compat.py [--repeats 3] [--what captions|grounding|both]
       [--real-captions] [--mdetr DIR] [--preds FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import importlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
REALDATA = Path(os.environ.get("VLBENCH_REALDATA", ROOT.parent / "shared" / "realdata"))
sys.path.insert(0, str(Path(__file__).parent))
from bench_captioning import make_set, real_images  # noqa: E402


def lmms_run(package: str) -> tuple[dict, float]:
    """One lmms-eval-style run on the module-level set; (scores, seconds)."""
    tok = importlib.import_module(f"{package}.tokenizer.ptbtokenizer")
    ev = importlib.import_module(f"{package}.eval")
    gts = {i: [{"caption": r} for r in rs] for i, rs in enumerate(REFS)}
    res = {i: [{"caption": c}] for i, c in enumerate(CANDS)}
    out = {}
    with contextlib.redirect_stdout(io.StringIO()):
        t = time.perf_counter()
        tokenizer = tok.PTBTokenizer()
        g = tokenizer.tokenize(gts)
        r = tokenizer.tokenize(res)
        for name, make in (("Bleu", lambda: ev.Bleu(4)), ("METEOR", ev.Meteor), ("ROUGE_L", ev.Rouge),
                           ("CIDEr", ev.Cider)):
            scorer = make()
            out[name] = scorer.compute_score(g, r)
            if hasattr(scorer, "close"):
                scorer.close()
        seconds = time.perf_counter() - t
    return out, seconds


def check_equal(real: dict, ours: dict) -> float:
    worst = 0.0
    for name, (score, per) in real.items():
        tol = 1e-9 if name == "METEOR" else 1e-12
        a = np.concatenate([np.ravel(np.array(score, dtype=float)), np.ravel(np.array(per, dtype=float))])
        b = np.concatenate([np.ravel(np.array(ours[name][0], dtype=float)), np.ravel(np.array(ours[name][1], dtype=float))])
        d = float(np.max(np.abs(a - b)))
        assert d <= tol, (name, d)
        worst = max(worst, d)
    return worst


def bench_captions(repeats: int) -> None:
    times: dict[str, list[float]] = {"pycocoevalcap": [], "first run": [], "later run": []}
    warm_cache = Path(tempfile.mkdtemp(prefix="bench-compat-meteor-warm-"))
    try:
        os.environ["VLBENCH_METEOR_CACHE"] = str(warm_cache)
        lmms_run("vlbench.compat.pycocoevalcap")  # builds the warm index (and imports), untimed
        for _ in range(repeats):
            real, t = lmms_run("pycocoevalcap")
            times["pycocoevalcap"].append(t)
            with tempfile.TemporaryDirectory(prefix="bench-compat-meteor-cold-") as cold:
                os.environ["VLBENCH_METEOR_CACHE"] = cold
                first, t = lmms_run("vlbench.compat.pycocoevalcap")
                times["first run"].append(t)
            os.environ["VLBENCH_METEOR_CACHE"] = str(warm_cache)
            later, t = lmms_run("vlbench.compat.pycocoevalcap")
            times["later run"].append(t)
            worst = max(check_equal(real, first), check_equal(real, later))
    finally:
        shutil.rmtree(warm_cache, ignore_errors=True)
    ref = statistics.median(times["pycocoevalcap"])
    print(f"captions: {len(CANDS):,} images x {sum(map(len, REFS)) / len(REFS):.1f} references, lmms-eval-style "
          f"run (tokenize, Bleu(4), Meteor, Rouge, Cider); equal to {worst:.1e}; load average {os.getloadavg()[0]:.1f}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"  {name:14s} median {med:7.2f} s  (runs {', '.join(f'{t:.2f}' for t in ts)})  {ref / med:6.1f}x")


def mdetr_module(checkout: Path | None):
    """MDETR's flickr_eval module read from a checkout (None: not available)."""
    if checkout is None or not checkout.exists():
        return None
    tmp = Path(tempfile.mkdtemp(prefix="bench-compat-mdetr-"))
    for rel in ("datasets/flickr_eval.py", "util/dist.py"):
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).parent.joinpath("__init__.py").touch()
        (tmp / rel).write_bytes(subprocess.run(["git", "-C", str(checkout), "show", f"HEAD:{rel}"],
                                               check=True, capture_output=True).stdout)
    sys.path.insert(0, str(tmp))
    return importlib.import_module("datasets.flickr_eval")


def bench_grounding(repeats: int, checkout: Path | None, preds: Path) -> None:
    from vlbench.compat.mdetr import FlickrEvaluator
    from vlbench.tasks.grounding.reference import MdetrStyleEvaluator

    tree = Path(tempfile.mkdtemp(prefix="bench-compat-entities-"))
    with tarfile.open(REALDATA / "flickr30k_entities" / "sentences_annotations_test_val.tar.gz") as tar:
        tar.extractall(tree)
    shutil.copy(REALDATA / "flickr30k_entities" / "test.txt", tree / "test.txt")
    records = json.loads(gzip.decompress(preds.read_bytes()))
    mdetr = mdetr_module(checkout)

    def run(make) -> tuple[float, float, object]:
        """(wall seconds, CPU seconds of this process, outputs) of one construct-to-summarize run."""
        with contextlib.redirect_stdout(io.StringIO()):
            t, c = time.perf_counter(), time.process_time()
            ev = make()
            ev.update(records)
            ev.synchronize_between_processes()
            out = ev.summarize()
            return time.perf_counter() - t, time.process_time() - c, (out, ev.results)

    if mdetr is not None:
        reference = "MDETR's datasets/flickr_eval.py"
        make_ref = lambda: mdetr.FlickrEvaluator(tree, "test")  # noqa: E731
    else:
        reference = "tasks/grounding/reference.py (MDETR's loop restated; MDETR's checkout not found)"

        class Restated:  # MDETR's FlickrEvaluator calls, on the restated loop
            def __init__(self):
                self.ev, self.predictions, self.results = MdetrStyleEvaluator(tree, "test"), [], None

            def update(self, p):
                self.predictions += p

            def synchronize_between_processes(self):
                pass

            def summarize(self):
                self.results = self.ev.evaluate(self.predictions)
                return self.results

        make_ref = Restated
    warm = Path(tempfile.mkdtemp(prefix="bench-compat-cache-"))
    times: dict[str, list[float]] = {"reference": [], "vlbench cold": [], "vlbench warm": []}
    cpu: dict[str, list[float]] = {name: [] for name in times}
    loads = []
    try:
        for _ in range(repeats):
            loads.append(os.getloadavg()[0])
            t, c, ref_out = run(make_ref)
            times["reference"].append(t)
            cpu["reference"].append(c)
            with tempfile.TemporaryDirectory(prefix="bench-compat-cold-") as cold:
                os.environ["VLBENCH_COMPAT_CACHE"] = cold
                t, c, cold_out = run(lambda: FlickrEvaluator(tree, "test"))
                times["vlbench cold"].append(t)
                cpu["vlbench cold"].append(c)
            os.environ["VLBENCH_COMPAT_CACHE"] = str(warm)
            t, c, ours = run(lambda: FlickrEvaluator(tree, "test"))
            times["vlbench warm"].append(t)
            cpu["vlbench warm"].append(c)
            assert ours == cold_out and ours[1] == ref_out[1], "results differ"
    finally:
        shutil.rmtree(warm, ignore_errors=True)
        shutil.rmtree(tree, ignore_errors=True)
    ref, ref_cpu = statistics.median(times["reference"]), statistics.median(cpu["reference"])
    n_phrases = sum(len(r["boxes"]) for r in records)
    print(f"grounding: FlickrEvaluator on the real test set ({n_phrases:,} phrases, {preds.name}), "
          f"construct + update + synchronize + summarize; reference: {reference}; results equal; "
          f"{repeats} interleaved repeats; load average {min(loads):.1f}-{max(loads):.1f} "
          f"(median {statistics.median(loads):.1f})")
    for name, ts in times.items():
        med, med_cpu = statistics.median(ts), statistics.median(cpu[name])
        print(f"  {name:14s} median {med:7.3f} s {ref / med:5.1f}x, CPU {med_cpu:6.3f} s {ref_cpu / med_cpu:5.1f}x  "
              f"(runs {', '.join(f'{t:.3f}' for t in ts)})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--what", choices=("captions", "grounding", "both"), default="both")
    ap.add_argument("--images", type=int, default=5000)
    ap.add_argument("--real-captions", action="store_true", help="the real caption sets A-E instead of the synthetic set")
    ap.add_argument("--mdetr", type=Path, default=Path(os.environ.get("MDETR_REPO", "/work/.mirror/ashkamath+mdetr/repo")),
                    help="a checkout (or bare git dir) of ashkamath/mdetr")
    ap.add_argument("--preds", type=Path, default=REALDATA / "derived" / "mdetr_preds_test_jitter.json.gz")
    args = ap.parse_args()
    global CANDS, REFS
    if args.what in ("captions", "both"):
        CANDS, REFS = real_images(REALDATA, args.images) if args.real_captions else make_set(args.images)
        bench_captions(args.repeats)
    if args.what in ("grounding", "both"):
        bench_grounding(max(args.repeats, 5), args.mdetr, args.preds)


CANDS: list[str] = []
REFS: list[list[str]] = []

if __name__ == "__main__":
    main()
