"""ODmAP@k at full COCO size: 5,000 queries, top-10 over a 616,767-caption gallery.

Builds a synthetic manifest (80 classes; caption mentions drawn with COCO-like skew: person in
about half of the captions), writes it, then times: the ground-truth load, `check` (id lookups,
validation), `score`, a 1,000-replicate bootstrap, and a direct pure-Python implementation of
the paper's definition (set logic per retrieved caption) as the reference; the two must agree.

    /work/venv/bin/python benchmarks/bench_decorrelated.py [--captions 616767] [--queries 5000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from vlbench.benchmark import Benchmark, DataFile
from vlbench.errors import IssueList
from vlbench.ground_truth import GroundTruthFiles
from vlbench.stats import bootstrap_ci
from vlbench.tasks.decorrelated import TASK
from vlbench.tasks.decorrelated.benchmarks import METRICS
from vlbench.tasks.decorrelated.manifest import Gallery, Query, build_manifest, write_manifest
from vlbench.tasks.decorrelated.mentions import COCO_CLASSES, coco_matcher
from vlbench.tasks.decorrelated.metrics import relevance

BENCH = Benchmark(
    id="bench-decorrelated",
    task="decorrelated_retrieval",
    version="0",
    description="synthetic",
    files=(DataFile("manifest", "manifest.json"),),
    metrics=METRICS,
    main_score="ODmAP@1",
)


def synthetic(n_captions: int, n_queries: int, seed: int = 0) -> tuple[Gallery, list[Query]]:
    rng = np.random.default_rng(seed)
    n = len(COCO_CLASSES)
    weights = 1.0 / np.arange(1, n + 1) ** 1.1
    weights /= weights.sum()
    sizes = rng.choice(5, size=n_captions, p=[0.1, 0.35, 0.3, 0.15, 0.1])
    flat = rng.choice(n, size=int(sizes.sum()), p=weights)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    mentions = [sorted(set(flat[a:b].tolist())) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    ids = (np.arange(n_captions) * 7 + 3).tolist()  # sparse ints, like Karpathy sentids
    queries = []
    for q in range(n_queries):
        cls = rng.choice(n, size=int(rng.integers(2, 6)), replace=False, p=weights)
        cut = int(rng.integers(1, len(cls)))
        queries.append(
            Query(
                id=f"{q}-x", source_image_id=q, file_name=f"{q}.png", source_file="",
                removed_classes=tuple(COCO_CLASSES[c] for c in sorted(cls[:cut])),
                present_classes=tuple(COCO_CLASSES[c] for c in sorted(cls[cut:])),
                removed_boxes=((0.0, 0.0, 1.0, 1.0),),
            )
        )  # fmt: skip
    return Gallery(ids, mentions), queries


def reference_odmap(doc: dict, predictions: dict) -> dict[str, float]:
    """The paper's definition written directly: sets of class names, loops, no arrays."""
    classes = doc["classes"]
    g = doc["gallery"]
    ptr, flat = g["mention_indptr"], g["mention_classes"]
    mentions = {
        str(cid): {classes[c] for c in flat[ptr[i] : ptr[i + 1]]} for i, cid in enumerate(g["caption_ids"])
    }
    out = {}
    for k in (1, 5, 10):
        total = 0.0
        for q in doc["queries"]:
            removed, present = set(q["removed_classes"]), set(q["present_classes"])
            hits, ap = 0, 0.0
            for i, cid in enumerate(predictions[q["id"]][:k], start=1):
                m = mentions[str(cid)]
                if not (m & removed) and (m & present):
                    hits += 1
                    ap += hits / i
            total += ap / min(k, q["n_relevant"])
        out[f"ODmAP@{k}"] = total / len(doc["queries"])
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--captions", type=int, default=616_767)
    p.add_argument("--queries", type=int, default=5_000)
    a = p.parse_args()

    matcher = coco_matcher()
    lines = [
        "A man riding a skateboard down a street next to a hot dog stand.",
        "Two dogs playing with a frisbee in the grass near some people.",
        "A kitchen with a refrigerator, an oven and a dining table with chairs.",
        "A traffic light and a stop sign at an intersection with cars and a bus.",
    ] * 5000
    t = time.perf_counter()
    for line in lines:
        matcher.mentions(line)
    per_caption = (time.perf_counter() - t) / len(lines)

    t = time.perf_counter()
    gallery, queries = synthetic(a.captions, a.queries)
    doc = build_manifest(BENCH.id, COCO_CLASSES, queries, gallery, {"synthetic": True})
    t_build = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        path = write_manifest(Path(tmp) / "manifest.json", doc)
        size_mb = path.stat().st_size / 1e6
        loads = []
        for _ in range(3):
            t = time.perf_counter()
            gt = TASK.load_ground_truth(BENCH, GroundTruthFiles({"manifest": path}, {}))
            loads.append(time.perf_counter() - t)
        t_load = min(loads)

    rng = np.random.default_rng(1)
    ids = gt.caption_index.ids()
    preds: dict[str, list] = {
        qid: [int(ids[i]) for i in rng.choice(len(ids), size=10, replace=False)] for qid in gt.query_ids
    }
    # Random lists are almost never correct; put 0-5 known-correct captions at random ranks so
    # the numbers compared with the reference are far from 0.
    sample = rng.choice(len(ids), size=20_000, replace=False)
    masks = gt.caption_masks[sample]
    ok = relevance(np.broadcast_to(masks, (len(gt.query_ids), *masks.shape)), gt.removed, gt.present)
    for qi, qid in enumerate(gt.query_ids):
        good = sample[np.flatnonzero(ok[qi])][: int(rng.integers(0, 6))]
        for slot, i in zip(rng.choice(10, size=len(good), replace=False), good, strict=True):
            if int(ids[i]) not in preds[qid]:
                preds[qid][slot] = int(ids[i])
    submission = {"image_to_text": preds}
    text = json.dumps(submission)
    t = time.perf_counter()
    submission = json.loads(text)
    t_parse = time.perf_counter() - t

    # Best of 5: the machine is shared, the minimum is the least disturbed run.
    checks, scorings = [], []
    for _ in range(5):
        t = time.perf_counter()
        fast = TASK.fast_structure(submission, BENCH).ok
        issues = IssueList()
        parsed = TASK.check(submission, gt, BENCH, issues)
        checks.append(time.perf_counter() - t)
        assert fast and not issues and parsed is not None, issues.report()
        t = time.perf_counter()
        scores = TASK.score(parsed, gt, BENCH)
        scorings.append(time.perf_counter() - t)
    t_check, t_score = min(checks), min(scorings)
    t = time.perf_counter()
    bootstrap_ci(scores.items, lambda m: TASK.metrics_from_means(BENCH, m), n_resamples=1000, seed=0)
    t_boot = time.perf_counter() - t

    t = time.perf_counter()
    ref = reference_odmap(gt.raw, preds)
    t_ref = time.perf_counter() - t
    diff = max(abs(ref[k] - scores.scores[k]) for k in ref)
    assert diff < 1e-12, (ref, scores.scores)

    print(f"gallery {a.captions:,} captions, {len(gt.query_ids):,} queries, manifest {size_mb:.1f} MB")
    print(f"mention matching: {per_caption * 1e6:.1f} us/caption, {per_caption * a.captions:.1f} s for the gallery")
    print(f"prepare-time manifest build (mentions given, R per query): {t_build:.2f} s")
    print(f"ground truth load (json + CSR -> bit masks + id index):    {t_load:.2f} s (best of 3)")
    print(f"submission json.loads (not part of scoring):               {t_parse:.3f} s")
    print(f"check (structure + 50,000 id lookups):                     {t_check:.3f} s")
    print(f"score (relevance + AP@1/5/10):                             {t_score:.4f} s")
    print(f"check + score:                                             {t_check + t_score:.3f} s (best of 5 each)")
    print(f"bootstrap, 1,000 replicates:                               {t_boot:.3f} s")
    print(f"reference (pure-Python set logic, incl. its mention dict): {t_ref:.2f} s")
    print("scores: " + ", ".join(f"{k}={v:.4f}" for k, v in scores.scores.items()) + f"; max |diff| vs reference {diff:.1e}")


if __name__ == "__main__":
    main()
