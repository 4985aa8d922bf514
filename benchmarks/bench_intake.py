"""`vlbench leaderboard intake --merge` over 100 open pull requests, against a stand-in hub on
127.0.0.1, as a maintainer runs it (a fresh process; HF_ENDPOINT and HF_TOKEN), and the floor it
is measured against: `vlbench leaderboard build` scoring the same submission files locally.

The 100 pull requests, each from its own account, opened on a board whose main holds the shipped
mini submissions: 80 valid new entries (mini-retrieval, mini-decorrelated, mini-grounding; random
rankings and boxes, one seed each), 10 invalid files, 5 gzip bombs (each inflating past the cap),
5 that also change files outside submissions/ (closed). Timed as processes, in order:
0. leaderboard build of main's submissions (the board as the maintainers last built it; its score
   cache is what intake reads main's entries from, as a scheduled job keeps it);
1. intake --merge on the 100: every pull request read, diffed, checked, scored with 1,000 bootstrap
   resamples, ranked against main (which grows with every merge), commented, merged or closed;
2. the same command again: nothing new (what a scheduled run costs when nothing happened);
3. the floor: leaderboard build of main plus the 80 valid files with the cache of step 0, which
   scores (and ranks) exactly the 80 new entries: the work run 1 cannot avoid.
The stand-in serves from a thread of this process, on the same 2 cores (its CPU is not in the
processes' CPU times).
Usage: python benchmarks/bench_intake.py [--prs 100] [--bootstrap 1000]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.harness.hub.standin import MAINTAINER, HubStandIn, running_standin  # noqa: E402
from tests.harness.leaderboard.conftest import mini_random  # noqa: E402

BENCHMARKS = ("mini-retrieval", "mini-decorrelated", "mini-grounding")
BOARD = "org/board"


def shipped_submissions() -> dict[str, bytes]:
    root = REPO / "submissions"
    return {f"submissions/{p.relative_to(root).as_posix()}": p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and p.parent.name in BENCHMARKS}


def open_pulls(hub: HubStandIn, count: int) -> dict[str, bytes]:
    """Opens `count` pull requests; returns the valid files they add (repo path -> bytes)."""
    repo = hub.add_repo("dataset", BOARD, {"README.md": b"# board\n", **shipped_submissions()})
    valid: dict[str, bytes] = {}
    for i in range(count):
        author = f"user{i:03d}"
        benchmark = BENCHMARKS[i % len(BENCHMARKS)]
        path = f"submissions/{benchmark}/{author}.json"
        data = json.dumps(mini_random(benchmark, 1000 + i, {"method": f"Method {i}", "team": author})).encode()
        added = {path: data}
        slot = i % 20
        if slot in (3, 13):  # invalid: a part of the predictions of the wrong type
            doc = json.loads(data)
            doc["predictions"][next(iter(doc["predictions"]))] = "oops"
            added = {path: json.dumps(doc).encode()}
        elif slot == 7:  # a gzip bomb
            head = f'{{"vlbench": 1, "benchmark": "{benchmark}", "task": "x", "predictions": '.encode()
            added = {path + ".gz": gzip.compress(head + b" " * (40 * 1024 * 1024), compresslevel=9)}
        elif slot == 17:  # also edits the README
            added["README.md"] = b"# my board\n"
        else:
            valid[path] = data
        pull = hub.open_pull(repo, author, f"Submission {i}", "", draft=False)
        hub.commit_to(repo, pull.ref, author, f"Submission {i}", added)
    return valid


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, subprocess.CompletedProcess]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[2:5])} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, cpu, done


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prs", type=int, default=100)
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, running_standin(lifetime_s=7200) as hub:
        valid = open_pulls(hub, args.prs)
        repo = hub.repos[("dataset", BOARD)]
        main_before = dict(repo.files())
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING_FACE"))}
        env.update(HF_ENDPOINT=hub.url, HF_TOKEN=MAINTAINER, HF_HOME=str(Path(tmp) / "hf-home"),
                   HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_PROGRESS_BARS="1")
        work = Path(tmp)
        main_subs, full_subs = work / "main", work / "full"
        for root, files in ((main_subs, main_before), (full_subs, {**main_before, **valid})):
            for path, data in files.items():
                if path.startswith("submissions/"):
                    (root / path).parent.mkdir(parents=True, exist_ok=True)
                    (root / path).write_bytes(data)
        boot = ["--bootstrap", str(args.bootstrap)]
        build = [sys.executable, "-m", "vlbench", "leaderboard", "build", "--quiet", *boot]
        before_wall, before_cpu, _ = timed([*build, "--submissions", str(main_subs / "submissions"),
                                            "--out", str(work / "leaderboard")], env)
        shutil.copytree(work / "leaderboard", work / "floor")
        intake = [sys.executable, "-m", "vlbench", "leaderboard", "intake", "--repo-id", BOARD, "--merge", *boot,
                  "--out", str(work / "leaderboard")]
        requests0 = len(hub.requests)
        first_wall, first_cpu, first = timed(intake, env)
        requests1 = len(hub.requests)
        second_wall, second_cpu, second = timed(intake, env)
        requests2 = len(hub.requests)
        statuses = [d.status for d in repo.discussions.values()]
        comments = sum(e["type"] == "comment" and e["author"]["name"] == "maintainer"
                       for d in repo.discussions.values() for e in d.events)
        build_wall, build_cpu, built = timed([*build, "--submissions", str(full_subs / "submissions"),
                                              "--out", str(work / "floor")], env)
    print(f"{args.prs} open pull requests ({len(valid)} valid new entries), bootstrap {args.bootstrap}, "
          f"{os.cpu_count()} CPUs")
    print(f"main's board built before (step 0, {len(main_before) - 2} files): {before_wall:.1f} s wall, "
          f"{before_cpu:.1f} s CPU")
    print(f"first run (intake --merge): {first_wall:.1f} s wall, {first_cpu:.1f} s CPU, "
          f"{requests1 - requests0} requests; {first_wall / args.prs:.2f} s per pull request")
    print(f"  {first.stdout.strip().splitlines()[-1]}")
    print(f"  statuses after: {statuses.count('merged')} merged, {statuses.count('closed')} closed, "
          f"{statuses.count('open')} open; {comments} comments")
    print(f"second run (nothing new): {second_wall:.1f} s wall, {second_cpu:.1f} s CPU, {requests2 - requests1} requests")
    print(f"  {second.stdout.strip().splitlines()[-1]}")
    print(f"leaderboard build of main + the {len(valid)} valid files with step 0's cache (the floor): {build_wall:.1f} s wall, {build_cpu:.1f} s CPU")
    print(f"  {built.stdout.strip().splitlines()[-1]}")
    print(f"ratio first intake run / build: {first_wall / build_wall:.2f}x wall, {first_cpu / build_cpu:.2f}x CPU")


if __name__ == "__main__":
    main()
