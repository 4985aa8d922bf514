"""Phrase grounding: vlbench end to end vs a per-phrase loop written as MDETR's evaluator works.

Builds a full-size synthetic Flickr30k Entities split in the official format (1,000 images,
5 captions each, about 14,500 gradable phrases, multi-box and shared-box chains, nobndbox and
scene chains), prepares vlbench's ground truth from it, writes a submission with 10 ranked boxes
per phrase, then times, in one run:
- vlbench: `harness.scoring.score_file` (read + envelope + fast schema check + GT load +
  semantic validation + ANY-BOX and MERGED-BOX scoring), without and with the bootstrap;
- the reference: `tasks.grounding.reference.MdetrStyleEvaluator.evaluate` (only the per-phrase
  loop: its own GT parsing and JSON reading are not counted), once per protocol.
The scores of both are compared for equality.

Usage: python benchmarks/bench_grounding.py [--images 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from harness.registry import registry
from harness.scoring import score_file
from tasks.grounding import TASK
from tasks.grounding.importers import from_mdetr
from tasks.grounding.loaders import load_ground_truth_file
from tasks.grounding.reference import MdetrStyleEvaluator

TYPES = ["people", "clothing", "bodyparts", "animals", "vehicles", "instruments", "scene", "other"]
BENCH = "flickr30k-entities-test"


def write_tree(tree: Path, n_images: int, rng: random.Random) -> None:
    (tree / "Sentences").mkdir(parents=True)
    (tree / "Annotations").mkdir(parents=True)
    ids = [str(10**9 + 7919 * i) for i in range(n_images)]
    for image_id in ids:
        w, h = rng.randint(300, 500), rng.randint(300, 500)
        chains = [str(rng.randint(1, 10**6)) for _ in range(rng.randint(4, 6))]
        chains = list(dict.fromkeys(chains))
        objects = []
        for c in chains:
            if rng.random() < 0.08:
                flags = (int(rng.random() < 0.5), 1)
                objects.append(f"<object><name>{c}</name><scene>{flags[0]}</scene>"
                               f"<nobndbox>{flags[1]}</nobndbox></object>")
                continue
            for _ in range(rng.choice([1, 1, 1, 2, 3])):
                x1, y1 = rng.randint(1, w - 20), rng.randint(1, h - 20)
                x2, y2 = rng.randint(x1 + 10, w), rng.randint(y1 + 10, h)
                names = [c] + ([rng.choice(chains)] if rng.random() < 0.05 else [])
                name_xml = "".join(f"<name>{n}</name>" for n in dict.fromkeys(names))
                objects.append(f"<object>{name_xml}<bndbox><xmin>{x1}</xmin><ymin>{y1}</ymin>"
                               f"<xmax>{x2}</xmax><ymax>{y2}</ymax></bndbox></object>")
        xml = (f"<annotation><filename>{image_id}.jpg</filename><size><width>{w}</width>"
               f"<height>{h}</height><depth>3</depth></size>{''.join(objects)}</annotation>")
        (tree / "Annotations" / f"{image_id}.xml").write_text(xml)
        lines = []
        for _ in range(5):
            words = ["A"]
            for _ in range(rng.choice([3, 3, 3, 4, 4])):
                c = rng.choice(chains) if rng.random() < 0.93 else "0"
                ty = "notvisual" if c == "0" else "/".join(rng.sample(TYPES, rng.choice([1] * 9 + [2])))
                words.append(f"[/EN#{c}/{ty} the thing]")
                words.append("near")
            lines.append(" ".join(words + ["."]))
        (tree / "Sentences" / f"{image_id}.txt").write_text("\n".join(lines) + "\n")
    (tree / "test.txt").write_text("\n".join(ids) + "\n")


def mdetr_predictions(ref: MdetrStyleEvaluator, sizes: dict, rng: random.Random) -> list[dict]:
    out = []
    for img, sentences in ref.sentences.items():
        w, h = sizes[img]
        for sid, phrases in enumerate(sentences):
            if phrases is None:
                continue
            per_phrase = []
            for phrase in phrases:
                gts = ref.boxes[img][phrase["phrase_id"]]
                boxes = []
                for _ in range(10):
                    g = rng.choice(gts)
                    s = rng.choice([1.0, 5.0, 20.0, 60.0])
                    x1 = min(max(g[0] + rng.gauss(0, s), 0.0), w - 2.0)
                    y1 = min(max(g[1] + rng.gauss(0, s), 0.0), h - 2.0)
                    x2 = min(max(g[2] + rng.gauss(0, s), x1 + 1.0), float(w))
                    y2 = min(max(g[3] + rng.gauss(0, s), y1 + 1.0), float(h))
                    boxes.append([round(x1, 2), round(y1, 2), round(x2, 2), round(y2, 2)])
                per_phrase.append(boxes)
            out.append({"image_id": int(img), "sentence_id": sid, "boxes": per_phrase})
    return out


def timed(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--images", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_tree(tmp / "tree", args.images, rng)
        benchmark = registry().benchmark(BENCH)
        t0 = time.perf_counter()
        (gt_path,) = TASK.prepare(benchmark, str(tmp / "tree"), tmp / "data")
        t_prepare = time.perf_counter() - t0
        gt = load_ground_truth_file(gt_path)
        sizes = {i: (int(gt.width[k]), int(gt.height[k])) for k, i in enumerate(gt.image_ids)}

        t0 = time.perf_counter()
        ref_any = MdetrStyleEvaluator(tmp / "tree", "test", merge_boxes=False)
        ref_merged = MdetrStyleEvaluator(tmp / "tree", "test", merge_boxes=True)
        t_ref_init = (time.perf_counter() - t0) / 2
        mdetr = mdetr_predictions(ref_any, sizes, rng)
        envelope = {"vlbench": 1, "benchmark": BENCH, "task": "grounding",
                    "meta": {"method": "synthetic"}, "predictions": from_mdetr(mdetr, gt)}
        sub = tmp / "submission.json"
        sub.write_text(json.dumps(envelope, separators=(",", ":")))

        score_file(sub, data_dir=tmp / "data", bootstrap=0)  # warm imports and schema cache
        t_vl, ev = timed(lambda: score_file(sub, data_dir=tmp / "data", bootstrap=0), args.repeat)
        t_vl_boot, _ = timed(lambda: score_file(sub, data_dir=tmp / "data", bootstrap=1000), 1)
        t_any, rep_any = timed(lambda: ref_any.evaluate(mdetr), max(1, args.repeat // 2))
        t_merged, rep_merged = timed(lambda: ref_merged.evaluate(mdetr), max(1, args.repeat // 2))
        t_any_set, _ = timed(lambda: ref_any.evaluate(mdetr, all_ids_as_list=False),
                             max(1, args.repeat // 2))

        scores = ev.result.scores
        agree = all(
            scores[f"{p}{name}"] == rep[k]["all"]
            and all(scores[f"{p}{name}/{t}"] == rep[k].get(t) for t in TYPES)
            for p, rep in (("", rep_any), ("merged_", rep_merged))
            for k, name in ((1, "R@1"), (5, "R@5"), (10, "R@10"), (-1, "UB"))
        )
        n_boxes = sum(len(b) for r in mdetr for b in r["boxes"])
        print(f"synthetic split: {len(gt.image_ids)} images, {gt.n_phrases} phrases in "
              f"{gt.n_sentences_scored} sentences, {n_boxes} predicted boxes, "
              f"submission {sub.stat().st_size / 1e6:.1f} MB")
        print(f"vlbench R@1 {scores['R@1']:.4f} merged_R@1 {scores['merged_R@1']:.4f}; "
              f"identical to the reference loop on all 72 numbers: {agree}")
        print(f"prepare (official tree -> compact GT, once): {t_prepare:.2f} s; "
              f"reference GT parse per protocol: {t_ref_init:.2f} s")
        print("| what | time |")
        print("|---|---|")
        print(f"| vlbench `score_file`, both protocols, end to end (median of {args.repeat}) "
              f"| {t_vl:.3f} s |")
        print(f"| vlbench `score_file` with 1,000 bootstrap resamples | {t_vl_boot:.2f} s |")
        print(f"| MDETR-style loop, ANY-BOX only (evaluate() only) | {t_any:.3f} s |")
        print(f"| MDETR-style loop, MERGED-BOX only (evaluate() only) | {t_merged:.3f} s |")
        print(f"| same ANY-BOX loop with MDETR's id list replaced by a set | {t_any_set:.3f} s |")
        print(f"| speed-up, both protocols (loops summed / vlbench) | "
              f"{(t_any + t_merged) / t_vl:.1f}x |")
        print(f"| speed-up vs one protocol's loop | {t_any / t_vl:.1f}x |")
        print(f"| speed-up vs one protocol's loop with a set | {t_any_set / t_vl:.1f}x |")


if __name__ == "__main__":
    main()
