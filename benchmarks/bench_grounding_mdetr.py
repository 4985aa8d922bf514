"""Scoring an MDETR-format prediction file: `vlbench score --format mdetr` vs MDETR's evaluator,
each as a whole process (interpreter start, imports, reading the file, ground truth, scoring).

The file and the ground truth are the real ones when ../shared/realdata is there (the Flickr30k
Entities test tree and `derived/mdetr_preds_test_var_unclipped.json.gz`, 14,481 phrases with 1 to
25 boxes each), else a synthetic full-size split made as in bench_grounding.py.

The MDETR side is `tasks/grounding/reference.py` run the way MDETR's `flickr_eval.py` runs: parse
Sentences/ and Annotations/ of the split, `json.load` the records, `evaluate()` one protocol
(ANY-BOX, MDETR's default; a run gives one protocol) and print the recalls. It is loaded by file
path so that the process imports only what MDETR's evaluator does apart from torch: numpy and
the standard library. MDETR itself also imports torch and torchvision (for `box_iou`), which
adds about a second or more to its start-up; that is not counted here, so the MDETR-side figure
is a lower bound. vlbench computes both protocols, 72 numbers, and with `--bootstrap 1000` their
95% intervals.

Usage: python benchmarks/bench_grounding_mdetr.py [--runs 7] [--importtime]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REALDATA = Path(os.environ.get("VLBENCH_REALDATA", ROOT.parent / "shared" / "realdata"))
BENCH = "flickr30k-entities-test"


def mdetr_process(preds: str, tree: str) -> None:
    """The MDETR-style evaluator process (run in a child: `--mdetr-process FILE TREE`)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("reference", ROOT / "tasks/grounding/reference.py")
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    opener = gzip.open if preds.endswith(".gz") else open
    with opener(preds, "rt") as fh:
        records = json.load(fh)
    evaluator = reference.MdetrStyleEvaluator(Path(tree), "test", merge_boxes=False)
    results = evaluator.evaluate(records)
    for k, by_type in results.items():
        name = "Upper_bound" if k == -1 else f"Recall@{k}"
        print(name, " ".join(f"{t}={v:.4f}" for t, v in sorted(by_type.items())))


def real_inputs(tmp: Path) -> tuple[Path, Path] | None:
    archive = REALDATA / "flickr30k_entities" / "sentences_annotations_test_val.tar.gz"
    preds = REALDATA / "derived" / "mdetr_preds_test_var_unclipped.json.gz"
    if not (archive.is_file() and preds.is_file()):
        return None
    tree = tmp / "tree"
    tree.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    shutil.copy(REALDATA / "flickr30k_entities" / "test.txt", tree / "test.txt")
    return tree, preds


def synthetic_inputs(tmp: Path) -> tuple[Path, Path]:
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_grounding import mdetr_predictions, write_tree

    from vlbench.tasks.grounding.reference import MdetrStyleEvaluator

    rng = random.Random(0)
    tree = tmp / "tree"
    write_tree(tree, 1000, rng)
    ref = MdetrStyleEvaluator(tree, "test")
    import xml.etree.ElementTree as ET

    sizes = {}
    for img in ref.sentences:
        size = ET.parse(tree / "Annotations" / f"{img}.xml").getroot().find("size")
        sizes[img] = (int(size.findtext("width")), int(size.findtext("height")))
    preds = tmp / "mdetr_preds.json.gz"
    preds.write_bytes(gzip.compress(json.dumps(mdetr_predictions(ref, sizes, rng)).encode()))
    return tree, preds


def run(argv: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the child: user + sys, stdout) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed ({done.returncode}):\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--importtime", action="store_true",
                        help="also print the slowest imports of the vlbench process")
    parser.add_argument("--mdetr-process", nargs=2, metavar=("PREDS", "TREE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mdetr_process:
        mdetr_process(*args.mdetr_process)
        return
    python = sys.executable
    vlbench = [python, "-m", "vlbench"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        inputs = real_inputs(tmp)
        origin = "real (../shared/realdata)" if inputs else "synthetic"
        tree, preds = inputs or synthetic_inputs(tmp)
        data = tmp / "data"
        prepare = [*vlbench, "data", "prepare", BENCH, "--source", str(tree), "--data-dir", str(data)]
        if inputs is None:
            prepare.append("--force")  # a synthetic split is deliberately not the release
        run(prepare)
        score = [*vlbench, "score", str(preds), "--benchmark", BENCH, "--format", "mdetr",
                 "--data-dir", str(data)]
        sub = tmp / "sub.json"
        commands = {
            "MDETR-style evaluator process (one protocol)":
                [python, __file__, "--mdetr-process", str(preds), str(tree)],
            "vlbench score --format mdetr --bootstrap 0 (both protocols)": [*score, "--bootstrap", "0"],
            "vlbench score --format mdetr (default --bootstrap 1000)": score,
            "before: vlbench import grounding, then vlbench score --bootstrap 0 (2 processes)": None,
            "python -c pass (interpreter start alone)": [python, "-c", "pass"],
        }
        timings: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        outputs: dict[str, str] = {}
        for _ in range(args.runs):  # interleaved, so that load on a shared machine hits all alike
            for name, argv in commands.items():
                if argv is None:
                    a = run([*vlbench, "import", "grounding", str(preds), "--benchmark", BENCH,
                             "--out", str(sub), "--data-dir", str(data)])
                    b = run([*vlbench, "score", str(sub), "--data-dir", str(data), "--bootstrap", "0"])
                    timings[name].append((a[0] + b[0], a[1] + b[1]))
                    continue
                wall, cpu, out = run(argv)
                timings[name].append((wall, cpu))
                outputs[name] = out
        n_boxes = sum(len(b) for r in json.loads(gzip.decompress(preds.read_bytes()))
                      for b in r["boxes"])
        print(f"{origin} file {preds.name}: {preds.stat().st_size / 1e6:.1f} MB gzip, {n_boxes:,} "
              f"boxes; {args.runs} interleaved runs of each process; Python {sys.version.split()[0]}")
        print("| process | wall s (min) | wall s (median) | CPU s (median, user+sys) |")
        print("|---|---|---|---|")
        summary = {}
        for name, rows in timings.items():
            walls, cpus = [w for w, _ in rows], [c for _, c in rows]
            summary[name] = (min(walls), statistics.median(walls), statistics.median(cpus))
            print(f"| {name} | {min(walls):.3f} | {statistics.median(walls):.3f} | "
                  f"{statistics.median(cpus):.3f} |")
        mdetr = summary["MDETR-style evaluator process (one protocol)"]
        for name in list(commands)[1:4]:
            v = summary[name]
            print(f"| ratio MDETR-style / {name.split(' (')[0]}"
                  f"{' (' + name.split(' (')[1] if ' (' in name else ''} | {mdetr[0] / v[0]:.2f}x | "
                  f"{mdetr[1] / v[1]:.2f}x | {mdetr[2] / v[2]:.2f}x |")
        # Same numbers on both sides (ANY-BOX, all phrases).
        recall1 = next(line for line in outputs["MDETR-style evaluator process (one protocol)"]
                       .splitlines() if line.startswith("Recall@1 "))
        print("MDETR-style", recall1.split()[1])
        print("vlbench   ", next(line for line in outputs[
            "vlbench score --format mdetr --bootstrap 0 (both protocols)"].splitlines()
            if line.startswith("R@1 ")))
        if args.importtime:
            done = subprocess.run([python, "-X", "importtime", *score[1:], "--bootstrap", "0"],
                                  capture_output=True, text=True, check=True)
            rows = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")
                    and "cumulative" not in line]
            top = sorted(((int(c), n.rstrip()) for _, c, n in rows if not n.startswith("  ")),
                         reverse=True)[:12]
            print("slowest top-level imports of the vlbench process (cumulative us):")
            for us, name in top:
                print(f"  {us:>8} {name.strip()}")


if __name__ == "__main__":
    main()
