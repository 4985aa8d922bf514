"""METEOR's per-segment work in one process: the Python aligner (`meteor/aligner.py`) against the C
aligner (`meteor/native.py`, `_meteor_align.c`), on bench_captioning's synthetic set (5,000 images x
5 references: 25,000 hypothesis-reference pairs), after both are checked equal bit for bit.

Timed (median of --repeats, the jar's data files and the run's word information
already loaded, as they are once per run):
- Python aligner: `Aligner.matches` + `align` + `stats` + `segment_score` for every pair
  (`meteor.python_meteor._segment_stats`, one process);
- C aligner: the extension call alone (its paraphrase trie included), on one thread, then with the
  segments split over the available cores (the default);
- C glue: the run vocabulary and the extension's arrays (`meteor.native.native_arguments`);
- `PythonMeteor.stats_of_lines` whole, each way (tokens, paraphrase filtering and word information
  included; the Python aligner forks its 2 workers there, the C one does not).
Usage: python benchmarks/bench_meteor_aligner.py [--images 5000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from bench_captioning import make_set, ptb_tokenized

from vlbench.tasks.captioning.meteor import MeteorProcess, paraphrase, paraphrase_index, score_line
from vlbench.tasks.captioning.meteor import native as meteor_native
from vlbench.tasks.captioning.meteor.aligner import Aligner, ParaphraseTrie
from vlbench.tasks.captioning.meteor.python_meteor import _segment_stats, read_entries


def median_time(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    if not meteor_native.built():
        raise SystemExit("the C aligner is not built (pip install -e . with a C compiler)")
    cands, refs = make_set(args.images)
    tc, tr, _ = ptb_tokenized(cands, refs)
    lines = [score_line(h, r) for h, r in zip(tc, tr)]
    with MeteorProcess(backend="python") as mp:
        mp.start()
        meteor = mp._python
        assert meteor is not None
        index = meteor.index if isinstance(meteor.index, paraphrase_index.ParaphraseIndex) else mp._build.wait()
        segments = meteor._tokens(lines)
        flat = [toks for seg in segments for toks in seg]
        entries = read_entries(index, index.keep(paraphrase.ngram_keys(flat, index.max_n)))
        pairs = sum(len(seg) - 1 for seg in segments)

        def python_aligner() -> np.ndarray:
            aligner = Aligner(meteor.res, ParaphraseTrie(entries) if entries else None)
            for toks in flat:  # the run's word information, computed once per run outside this part
                for w in toks:
                    aligner._word_info(w)
            t = time.perf_counter()
            out = _segment_stats(aligner, segments)
            python_aligner.seconds = time.perf_counter() - t  # type: ignore[attr-defined]
            return out

        py_times = []
        for _ in range(args.repeats):
            py_out = python_aligner()
            py_times.append(python_aligner.seconds)  # type: ignore[attr-defined]
        t_py = statistics.median(py_times)
        t_glue, arguments = median_time(lambda: meteor_native.native_arguments(meteor.res, entries, segments),
                                        args.repeats)
        t_c, c_out = median_time(lambda: meteor_native.native_stats(arguments, threads=1), args.repeats)
        t_threads, threaded = median_time(lambda: meteor_native.native_stats(arguments), args.repeats)
        assert np.array_equal(np.asarray(threaded).view(np.int64), np.asarray(c_out).view(np.int64))
        assert np.array_equal(np.asarray(py_out).view(np.int64), np.asarray(c_out).view(np.int64))
        whole = {}
        for aligner in ("python", "c"):
            os.environ["VLBENCH_METEOR_ALIGNER"] = aligner
            whole[aligner], out = median_time(lambda: meteor.stats_of_lines(lines), args.repeats)
            assert np.array_equal(np.asarray(out).view(np.int64), np.asarray(c_out).view(np.int64))
        del os.environ["VLBENCH_METEOR_ALIGNER"]
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"METEOR per-segment work, {len(segments)} images, {pairs} hypothesis-reference pairs, {len(entries)} "
          f"paraphrase entries; median of {args.repeats}, seconds; load average {' '.join(load)}\n")
    print("| part | seconds | Python / this |\n| --- | --- | --- |")
    print(f"| Python aligner (matches, beam search, statistics, score), 1 process | {t_py:.3f} | 1.0x |")
    print(f"| C aligner, extension call, 1 thread | {t_c:.4f} | {t_py / t_c:.0f}x |")
    print(f"| C aligner, segments split over {meteor_native._available_cores()} core(s) | {t_threads:.4f} | {t_py / t_threads:.0f}x |")
    print(f"| C glue: vocabulary and arrays | {t_glue:.4f} | |")
    print(f"| C aligner (default, split) + glue | {t_threads + t_glue:.4f} | {t_py / (t_threads + t_glue):.0f}x |")
    print(f"| `stats_of_lines`, Python aligner (2 forked workers) | {whole['python']:.3f} | |")
    print(f"| `stats_of_lines`, C aligner | {whole['c']:.3f} | |")


if __name__ == "__main__":
    main()
