"""Retrieval scoring speed at full COCO-5K size, against a bare `json.loads` of the same file.

Builds a synthetic Karpathy test split (5,000 images x 5 captions), prepares it as `coco-5k`,
writes a submission with top-10 lists both ways (30,000 lists), then times in one process:
- `json.loads` of the submission file (the floor any JSON-based scorer pays),
- `vlbench score` end to end in-process: read + sha256 + strict parse + envelope + validation +
  ground-truth load + scoring (no bootstrap),
- the same with the default 1,000 bootstrap resamples,
- the `vlbench score` command as a subprocess (interpreter start-up and imports included).
Usage: python benchmarks/bench_retrieval.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from vlbench.ground_truth import locate_ground_truth
from vlbench.registry import registry
from vlbench.scoring import score_file


def synthetic_karpathy(n_images: int) -> dict:
    images = []
    for i in range(n_images):
        sentences = [{"sentid": 700000 + 5 * i + j, "raw": f"caption {j} of image {i}", "tokens": []} for j in range(5)]
        images.append(
            {"split": "test", "cocoid": 100000 + i, "filename": f"{i}.jpg",
             "sentids": [s["sentid"] for s in sentences], "sentences": sentences}
        )
    return {"images": images}


def timed(fn, repeats: int) -> tuple[float, float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    reg = registry()
    benchmark = reg.benchmark("coco-5k")
    task = reg.task_of(benchmark)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "dataset_coco.json").write_text(json.dumps(synthetic_karpathy(5000)))
        task.prepare(benchmark, str(tmp), tmp / "data", force=True)  # synthetic source
        gt = task.load_ground_truth(benchmark, locate_ground_truth(benchmark, tmp / "data"))
        preds = task.random_predictions(gt, benchmark, seed=0)
        rng = np.random.default_rng(0)
        # Integer ids, as most exporters write them; a third of queries get a correct top-1.
        i2t = {im: [int(c) for c in lst] for im, lst in preds["image_to_text"].items()}
        for i in rng.choice(5000, 1700, replace=False):
            i2t[gt.images[i]][0] = int(gt.captions[5 * i])
        t2i = {cap: [int(im) for im in lst] for cap, lst in preds["text_to_image"].items()}
        doc = {"vlbench": 1, "benchmark": "coco-5k", "task": "retrieval", "meta": {"method": "synthetic"},
               "predictions": {"image_to_text": i2t, "text_to_image": t2i}}
        path = tmp / "submission.json"
        path.write_text(json.dumps(doc))
        size = path.stat().st_size

        loads_min, loads_med = timed(lambda: json.loads(path.read_bytes()), args.repeats)
        score_min, score_med = timed(lambda: score_file(path, data_dir=tmp / "data", bootstrap=0), args.repeats)
        boot_min, boot_med = timed(lambda: score_file(path, data_dir=tmp / "data", bootstrap=1000), max(3, args.repeats // 2))
        cmd = [sys.executable, "-m", "vlbench", "score", str(path), "--data-dir", str(tmp / "data"), "--bootstrap", "0"]
        cli_min, cli_med = timed(lambda: subprocess.run(cmd, check=True, capture_output=True), 3)
        result = score_file(path, data_dir=tmp / "data", bootstrap=0).result

    print(f"submission: {size / 1e6:.2f} MB, 5,000 image queries + 25,000 caption queries, top-10 lists")
    print(f"scores: i2t_R@1 {result.scores['i2t_R@1']:.4f}, RSUM {result.scores['RSUM']:.2f}")
    print(f"{'what':58s} {'min s':>8s} {'median s':>9s} {'x json.loads':>13s}")
    rows = [
        ("json.loads of the file (read included)", loads_min, loads_med),
        ("vlbench score, in-process, no bootstrap", score_min, score_med),
        ("vlbench score, in-process, 1,000 bootstrap resamples", boot_min, boot_med),
        ("vlbench score CLI subprocess, no bootstrap (start-up incl.)", cli_min, cli_med),
    ]
    for name, lo, med in rows:
        print(f"{name:58s} {lo:8.3f} {med:9.3f} {med / loads_med:12.2f}x")


if __name__ == "__main__":
    main()
