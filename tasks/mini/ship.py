"""Regenerate the shipped mini ground truth: `python -m vlbench.tasks.mini.ship`.

1. Write the mini world (annotations only; images are not needed to make ground truth) to a
   temporary folder.
2. For each registered `mini-*` benchmark, run its task's own `prepare` on that folder, exactly as
   `vlbench data prepare` would for real data, and copy the files into `tasks/mini/data/`.
3. Pin their sha256 in `tasks/mini/files.py`.
4. Write the chance-floor submission `submissions/<id>/random.json` from the task's
   `random_predictions`, and check that it validates against the freshly shipped files.

Benchmarks whose task is not registered yet are skipped with a message. Running it twice gives
identical files.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from vlbench.hashing import sha256_file

MINI_BENCHMARKS = ("mini-retrieval", "mini-decorrelated", "mini-grounding", "mini-captions", "mini-shapes-retrieval")
HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
FILES_PY = HERE / "files.py"
REPO = HERE.parent.parent
SUBMISSIONS = REPO / "submissions"

FILES_TEMPLATE = '''"""Pinned sha256 of the mini benchmark's ground-truth files shipped in `tasks/mini/data/`.

Written by `python -m vlbench.tasks.mini.ship`, which regenerates the mini world and runs each task's
own `prepare` on it. Benchmark records import `mini_file` so their sha256 is pinned here.
"""

from __future__ import annotations

from vlbench.benchmark import PACKAGE, DataFile

SHA256: dict[str, str] = {{
{entries}}}


def mini_file(name: str, path: str) -> DataFile:
    """A DataFile shipped in the package under tasks/mini/data/."""
    return DataFile(name=name, path=f"data/{{path}}", sha256=SHA256.get(path), location=PACKAGE)
'''


def _shipped_path(path: str) -> str:
    if not path.startswith("data/"):
        raise ValueError(f"mini file path {path!r} does not start with 'data/'")
    return path[len("data/") :]


def _prepared_file(root: Path, rel: str, returned: list[Path], n_files: int) -> Path:
    """Where `prepare` put the file shipped as `data/<rel>`: the convention is `<id>/<rel>`;
    a single-file benchmark's one returned path, or a returned path ending in `rel`'s name, is
    accepted too (prepare steps differ in whether they repeat the id folder)."""
    if (root / rel).exists():
        return root / rel
    if n_files == 1 and len(returned) == 1:
        return returned[0]
    for p in returned:
        if p.name == Path(rel).name:
            return p
    raise FileNotFoundError(f"prepare did not write {rel} under {root}")


def write_files_py(sha: dict[str, str]) -> None:
    entries = "".join(f'    "{k}": "{v}",\n' for k, v in sorted(sha.items()))
    FILES_PY.write_text(FILES_TEMPLATE.format(entries=entries), encoding="utf-8")


def _envelope(benchmark, task, predictions) -> dict:
    return {
        "vlbench": 1,
        "benchmark": benchmark.id,
        "task": task.name,
        "meta": {
            "method": "random (chance floor)",
            "team": "vlbench",
            "description": (
                "Uniformly random rankings (seed 0) made by the task's random_predictions: the "
                "chance floor every real method must beat. Written by python -m vlbench.tasks.mini.ship."
            ),
            "reference": True,
            "baseline": "random",
        },
        "predictions": predictions,
    }


def ship(seed: int = 0) -> int:
    from dataclasses import replace

    from vlbench.registry import registry
    from vlbench.tasks.mini import write_mini_benchmark
    from vlbench.tasks.mini.build import world_config

    reg = registry()
    # Keep the pins of benchmarks skipped this time, so a partial run does not unpin them.
    old = importlib.import_module("vlbench.tasks.mini.files").SHA256
    sha: dict[str, str] = dict(old)
    shipped: list[str] = []
    with tempfile.TemporaryDirectory(prefix="vlbench-mini-") as tmp:
        prepared = Path(tmp) / "prepared"
        worlds: dict[str, Path] = {}  # each world named by a benchmark's `mini_world`, written once
        for bid in MINI_BENCHMARKS:
            benchmark = reg.benchmarks.get(bid)
            if benchmark is None:
                print(f"skip {bid}: not registered (its task is not there yet)")
                continue
            name = benchmark.option("mini_world", "v2")
            if name not in worlds:
                worlds[name] = Path(tmp) / f"world-{name}"
                # --seed moves the default world only; a named world keeps its pre-registered seed
                config = world_config(name)
                config = replace(config, seed=seed) if name == "v2" else config
                write_mini_benchmark(worlds[name], config=config, images=False)
            task = reg.task_of(benchmark)
            returned = [Path(p) for p in task.prepare(benchmark, str(worlds[name]), prepared)]
            for f in benchmark.files:
                rel = _shipped_path(f.path)
                src = _prepared_file(prepared / bid, rel, returned, len(benchmark.files))
                dst = DATA / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
                sha[rel] = sha256_file(dst)
                shipped.append(bid)
                print(f"{bid}: {rel} {dst.stat().st_size / 1e6:.2f} MB sha256 {sha[rel][:12]}")
    write_files_py(sha)

    # A fresh interpreter, so the benchmark records pick up the new pins.
    bids = list(dict.fromkeys(shipped))
    floors = subprocess.run(
        [sys.executable, "-m", "vlbench.tasks.mini.ship", "--floors", *bids], check=False
    )
    total = sum((DATA / k).stat().st_size for k in sha if (DATA / k).exists())
    print(f"shipped {len(sha)} files, {total / 1e6:.2f} MB in {DATA}")
    return floors.returncode


def write_floors(bids: list[str]) -> int:
    """Write and validate `submissions/<id>/random.json` for each benchmark id."""
    from vlbench.ground_truth import load_ground_truth
    from vlbench.registry import registry

    reg = registry()
    failures = 0
    for bid in bids:
        benchmark = reg.benchmark(bid)
        task = reg.task_of(benchmark)
        gt, _ = load_ground_truth(benchmark, None, task)
        try:
            predictions = task.random_predictions(gt, benchmark, seed=0)
        except NotImplementedError as exc:
            print(f"{bid}: no random submission ({exc})")
            continue
        out = SUBMISSIONS / bid / "random.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        doc = _envelope(benchmark, task, predictions)
        out.write_text(
            json.dumps(doc, ensure_ascii=True, separators=(",", ":")) + "\n", encoding="utf-8"
        )
        failures += _check_valid(out)
    return 1 if failures else 0


def _check_valid(path: Path) -> int:
    from vlbench.errors import InvalidSubmission
    from vlbench.submission import validate

    try:
        validate(path)
    except InvalidSubmission as exc:
        print(f"{path}: INVALID\n{exc}")
        return 1
    print(f"{path}: valid")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--floors",
        nargs="*",
        metavar="ID",
        help="only write the random submissions of these benchmarks",
    )
    args = parser.parse_args(argv)
    if args.floors is not None:
        return write_floors(args.floors)
    return ship(args.seed)


if __name__ == "__main__":
    raise SystemExit(main())
