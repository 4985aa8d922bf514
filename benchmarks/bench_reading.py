"""Reading untrusted .json.gz files in bounded memory (`harness/bounded_read.py`), against the
stdlib's `gzip.decompress` (unbounded: it holds whatever the file inflates to) in one run.

A valid file that inflates to more than `KEEP_WHILE_COUNTING` (64 MiB) is inflated twice (counted,
then kept): that is the price of refusing a bomb in bounded memory. Each case runs in its own
process, so that its peak memory (VmHWM) is its own.

    python benchmarks/bench_reading.py [--mib 256] [--runs 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

CASES = {
    "gzip.decompress (stdlib, unbounded)": "import gzip; data = gzip.decompress(open(PATH, 'rb').read())",
    "vlbench bounded_read": textwrap.dedent("""
        from vlbench.bounded_read import read_bytes_capped
        from vlbench.errors import IssueList
        issues = IssueList()
        data, _, _ = read_bytes_capped(PATH, issues, 1 << 30, 1 << 31)
        assert data is not None or issues
    """),
}
MEASURE = textwrap.dedent("""
    import sys, time
    PATH = sys.argv[1]
    started = time.perf_counter()
    {body}
    elapsed = time.perf_counter() - started
    with open("/proc/self/status") as status:
        peak = int(next(line.split()[1] for line in status if line.startswith("VmHWM:"))) / 1024
    print(elapsed, peak)
""")


def measure(body: str, path: Path) -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-c", MEASURE.format(body=body.strip()), str(path)],
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256, help="what the valid file inflates to (MiB)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        valid = Path(tmp) / "valid.json.gz"
        numbers = list(range(args.mib * (1 << 20) // 9))  # about 9 bytes per number as JSON text
        valid.write_bytes(gzip.compress(json.dumps(numbers).encode(), 1))
        bomb = Path(tmp) / "bomb.json.gz"
        member = gzip.compress(b" " * (64 << 20), 9)
        bomb.write_bytes(member * 33)  # 2.1 GB inflated from about 2 MB
        for name, path in (("valid", valid), ("bomb: 2.1 GB inflated, past vlbench's cap of 2 GiB here", bomb)):
            print(f"\n{name}: {path.stat().st_size / 2**20:.1f} MiB on disk")
            for case, body in CASES.items():
                results = [measure(body, path) for _ in range(args.runs)]
                best = min(r[0] for r in results)
                peak = max(r[1] for r in results)
                print(f"  {case}: {best:.2f} s (best of {args.runs}), peak {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
