"""Start-up and whole-process cost of the `vlbench` command, against bare Python processes.

Times, in one run, as processes (interpreter start-up and imports included):
- `vlbench --version` against `python -c pass` (what the import of the command line costs),
- `vlbench score FILE --bootstrap 0` on a COCO-5K-shaped retrieval submission with top-100 lists
  both ways (5,000 image queries + 25,000 caption queries, integer ids) against a process that only
  does `json.load` of the same file.
The runs alternate (one of each per round) so that load from other work on a shared machine falls
on both sides alike; the ratio is of medians, with a 95% percentile interval from resampling the
rounds.
Usage: python benchmarks/bench_startup.py [--rounds 15]
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
from bench_retrieval import synthetic_karpathy

from vlbench.ground_truth import locate_ground_truth
from vlbench.registry import registry

TOP_K = 100


def vlbench_command() -> list[str]:
    """The installed console script next to this interpreter (what a user runs), else `-m vlbench`."""
    script = Path(sys.executable).with_name("vlbench")
    return [str(script)] if script.exists() else [sys.executable, "-m", "vlbench"]


def top_k_submission(tmp: Path) -> Path:
    reg = registry()
    benchmark = reg.benchmark("coco-5k")
    task = reg.task_of(benchmark)
    (tmp / "dataset_coco.json").write_text(json.dumps(synthetic_karpathy(5000)))
    task.prepare(benchmark, str(tmp), tmp / "data", force=True)  # synthetic source
    gt = task.load_ground_truth(benchmark, locate_ground_truth(benchmark, tmp / "data"))
    rng = np.random.default_rng(0)

    def ranked(queries: list[str], query_fold: np.ndarray, gallery: list[str], gallery_fold: np.ndarray) -> dict:
        members = [np.flatnonzero(gallery_fold == f) for f in range(gt.folds)]
        ids = np.asarray([int(g) for g in gallery])
        return {q: ids[rng.choice(members[f], size=TOP_K, replace=False)].tolist()
                for q, f in zip(queries, query_fold, strict=True)}

    doc = {
        "vlbench": 1, "benchmark": "coco-5k", "task": "retrieval", "meta": {"method": "synthetic top-100"},
        "predictions": {
            "image_to_text": ranked(gt.images, gt.image_fold, gt.captions, gt.caption_fold),
            "text_to_image": ranked(gt.captions, gt.caption_fold, gt.images, gt.image_fold),
        },
    }
    path = tmp / "submission.json"
    path.write_text(json.dumps(doc))
    return path


def run_once(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - start


def paired(ours: list[str], floor: list[str], rounds: int) -> tuple[list[float], list[float]]:
    run_once(ours), run_once(floor)  # warm the page cache and .pyc files
    a, b = [], []
    for _ in range(rounds):
        a.append(run_once(ours))
        b.append(run_once(floor))
    return a, b


def ratio_interval(a: list[float], b: list[float], seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    x, y = np.asarray(a), np.asarray(b)
    idx = rng.integers(0, len(x), size=(2000, len(x)))
    ratios = np.median(x[idx], axis=1) / np.median(y[idx], axis=1)
    return float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5))


def report(name: str, floor_name: str, a: list[float], b: list[float]) -> None:
    lo, hi = ratio_interval(a, b)
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"{name:44s} median {ma:6.3f} s (min {min(a):.3f})")
    print(f"{floor_name:44s} median {mb:6.3f} s (min {min(b):.3f})")
    print(f"{'ratio of medians':44s} {ma / mb:6.2f}x  (95% interval {lo:.2f}-{hi:.2f}x)\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    vlbench = vlbench_command()
    a, b = paired([*vlbench, "--version"], [sys.executable, "-c", "pass"], args.rounds)
    report("vlbench --version (process)", "python -c pass (process)", a, b)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = top_k_submission(tmp)
        print(f"submission: {path.stat().st_size / 1e6:.1f} MB, 5,000 + 25,000 queries, top-{TOP_K} lists")
        score = [*vlbench, "score", str(path), "--data-dir", str(tmp / "data"), "--bootstrap", "0"]
        load = [sys.executable, "-c", f"import json; json.load(open({str(path)!r}, 'rb'))"]
        a, b = paired(score, load, args.rounds)
        report("vlbench score --bootstrap 0 (process)", "python: json.load of the file (process)", a, b)


if __name__ == "__main__":
    main()
