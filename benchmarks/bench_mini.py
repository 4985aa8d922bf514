"""Time to generate the full vlbench-mini world (2,000 / 250 / 250 images) on one core.

Pins the process to one CPU (where the OS allows) and single-threaded BLAS, then times
`write_mini_benchmark` into a fresh temporary folder, with images (what `vlbench data mini`
does) and annotations only (what `python -m vlbench.tasks.mini.ship` needs), and reports the median of
`--repeats` runs with the number and size of the files written.
Usage: python benchmarks/bench_mini.py [--repeats 3]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402


def run(images: bool) -> tuple[float, int, int]:
    from vlbench.tasks.mini import write_mini_benchmark

    with tempfile.TemporaryDirectory(prefix="bench-mini-") as tmp:
        t0 = time.perf_counter()
        written = write_mini_benchmark(Path(tmp) / "world", images=images)
        elapsed = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in written)
    return elapsed, len(written), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    import vlbench.tasks.mini.build  # noqa: F401  (imports are not part of the generation time)

    print(f"python {platform.python_version()}, {platform.machine()}, one core")
    for images in (True, False):
        runs = [run(images) for _ in range(args.repeats)]
        times = [r[0] for r in runs]
        label = "images + annotations" if images else "annotations only"
        print(
            f"{label:22s} median {statistics.median(times):6.2f} s "
            f"(min {min(times):.2f}, max {max(times):.2f}, {args.repeats} runs); "
            f"{runs[0][1]} files, {runs[0][2] / 1e6:.1f} MB"
        )


if __name__ == "__main__":
    main()
