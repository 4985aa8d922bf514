"""Caption scoring speed: pycocoevalcap 1.2 and vlbench on the same 5,000-image x 5-reference set,
in one run.

The set is synthetic and COCO-like: Zipf(1.0) over a 3,000-word vocabulary, 8-15 words, first
word capitalised, a final period on 90% of captions, a comma or a clitic ('s, n't) now and then.
Timed (wall seconds, median of --repeats runs, fresh scorer objects each time):
- pycocoevalcap: PTBTokenizer on references and on candidates (two JVM runs), Bleu(4), Rouge(),
  Cider(), Meteor() (its JVM start-up included, as every user pays it);
- vlbench: tokenization (all in Python: fast paths, then the whole lexer for rare shapes), BLEU-1..4,
  ROUGE-L, CIDEr-D and CIDEr; METEOR alone (in Python, the default; the jar path with the filtered
  paraphrase table and the index already cached, JVM start-up included; the jar with the whole
  table; and the jar path once cold: index built first); and the whole `score_captions`.
Every vlbench value is checked against pycocoevalcap's before timings are printed.

With --realdata DIR (../shared/realdata): PTB tokenization of the 42,657 real captions of caption
sets A-E (references and candidates, in pycocoevalcap's file order), by pycocoevalcap's
PTBTokenizer (two jar runs per set), by vlbench (all in Python), and by vlbench's earlier path
(the Python fast path, then the jar for every caption outside it); the tokens are asserted equal.
With --meteor-processes: METEOR alone as whole processes (interpreter and JVM start-up, imports
and data files included), pycocoevalcap's Meteor vs vlbench in Python (with the C aligner, and with
the Python one that installs without a C compiler get) vs vlbench's jar path, warm (index cached)
and cold (empty index cache: the first run on a machine builds it), with the peak resident memory
of the largest process (GNU time); the scores are asserted equal first. With --realdata DIR as well:
on the first --images images of the real caption sets A-E instead of the synthetic set.
Usage: python benchmarks/bench_captioning.py [--images 5000] [--repeats 3] [--realdata DIR] [--meteor-processes]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from vlbench.tasks.captioning.bleu import bleu_stats, corpus_bleu
from vlbench.tasks.captioning.cider import cider_scores
from vlbench.tasks.captioning.corpus import Corpus
from vlbench.tasks.captioning.loaders import References
from vlbench.tasks.captioning.meteor import MeteorProcess, meteor_aggregate, meteor_from_stats
from vlbench.tasks.captioning.ptb import jar_tokenize, pycoco_successors, tokenize
from vlbench.tasks.captioning.ptb.fast import fast_tokenize_many
from vlbench.tasks.captioning.rouge import rouge_l
from vlbench.tasks.captioning.scoring import score_captions

SYLLABLES = ["ba", "be", "bi", "bo", "bu", "ca", "co", "da", "de", "di", "do", "fa", "fe", "fi", "ga", "go", "ha", "he", "hi", "ja", "ka", "ke", "ki", "la", "le", "li", "lo", "ma", "me", "mi", "mo", "na", "ne", "ni", "no", "pa", "pe", "pi", "po", "ra", "re", "ri", "ro", "sa", "se", "si", "so", "ta", "te", "ti", "to", "va", "ve", "vi", "wa", "we"]


def vocabulary(n: int = 3000, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    common = ["a", "the", "of", "on", "in", "with", "and", "is", "are", "man", "woman", "dog", "cat", "people", "two", "table", "street", "sitting", "standing", "next", "to", "holding", "riding", "plate", "food", "train", "bus", "water", "field"]
    words = list(common)
    seen = set(words)
    while len(words) < n:
        w = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3)))
        if w not in seen and len(w) > 1:
            seen.add(w)
            words.append(w)
    return words


def caption(rng: random.Random, words: list[str], weights: np.ndarray) -> str:
    n = rng.randint(8, 15)
    toks = [words[int(i)] for i in np.searchsorted(weights, [rng.random() for _ in range(n)])]
    toks[-1] = rng.choice(words[10:40])  # end on a noun-like word, as COCO captions do
    if rng.random() < 0.08:
        toks[rng.randrange(n - 1)] += rng.choice(["'s", ","])
    if rng.random() < 0.02:
        toks[rng.randrange(n - 1)] = rng.choice(["doesn't", "isn't", "can't"])
    text = " ".join(toks)
    text = text[0].upper() + text[1:]
    return text + "." if rng.random() < 0.9 else text


def make_set(n_images: int, seed: int = 0) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    words = vocabulary()
    zipf = 1.0 / np.arange(1, len(words) + 1)
    cdf = np.cumsum(zipf) / zipf.sum()
    cands = [caption(rng, words, cdf) for _ in range(n_images)]
    refs = [[caption(rng, words, cdf) for _ in range(5)] for _ in range(n_images)]
    return cands, refs


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def run_pycoco(cands, refs):
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.meteor.meteor import Meteor
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    gts = {i: [{"caption": r} for r in rs] for i, rs in enumerate(refs)}
    res = {i: [{"caption": c}] for i, c in enumerate(cands)}
    t = {}
    t["tokenize"], (tg, tr) = timed(lambda: (PTBTokenizer().tokenize(gts), PTBTokenizer().tokenize(res)))
    t["BLEU"], bleu = timed(lambda: Bleu(4).compute_score(tg, tr, verbose=0))
    t["ROUGE-L"], rouge = timed(lambda: Rouge().compute_score(tg, tr))
    t["CIDEr-D"], cider = timed(lambda: Cider().compute_score(tg, tr))

    def meteor():
        m = Meteor()
        out = m.compute_score(tg, tr)
        del m
        return out

    t["METEOR"], met = timed(meteor)
    return t, {"bleu": bleu, "rouge": rouge, "cider": cider, "meteor": met}


def run_vlbench(cands, refs):
    t = {}

    def fast_part():
        tc, tr, n_rare = ptb_tokenized(cands, refs)
        corpus = Corpus.build(tc, tr)
        stats = bleu_stats(corpus)
        cd, c = cider_scores(corpus)
        return tc, tr, n_rare, corpus_bleu(stats), rouge_l(tc, tr, corpus=corpus), cd, c

    t["tokenize+BLEU+ROUGE-L+CIDEr-D+CIDEr"], (tc, tr, n_rare, bleu, rouge, cider_d, _) = timed(fast_part)

    def meteor(**kw):
        with MeteorProcess(**kw) as p:
            st = p.stats(tc, tr)
            assert p.warning is None, p.warning
        return st

    # METEOR in Python (the default), index already built ("warm")
    t["METEOR"], met_stats = timed(meteor)
    met = float(meteor_from_stats(meteor_aggregate(met_stats)))
    # the jar with the filtered table, and with the whole table: identical statistics
    t["METEOR jar"], jar_stats = timed(lambda: meteor(backend="jar"))
    t["METEOR plain"], plain_stats = timed(lambda: meteor(backend="jar", filtered=False))
    assert np.array_equal(met_stats, jar_stats) and np.array_equal(met_stats, plain_stats)
    t["score_captions (all metrics)"], full = timed(
        lambda: score_captions(cands, References(list(range(len(cands))), refs, "bench"), spice=False)
    )
    return t, {"bleu": bleu, "rouge": rouge, "cider_d": cider_d, "meteor": met, "n_rare": n_rare, "full": full}


def ptb_tokenized(cands: list[str], refs: list[list[str]]) -> tuple[list[str], list[list[str]], int]:
    """Candidates and references PTB-tokenized as pycocoevalcap tokenizes them, split back per image,
    and how many captions took the rare-shape lexer."""
    flat_refs = [r for rs in refs for r in rs]
    tok, n_rare = tokenize(cands + flat_refs, pycoco_successors([cands, flat_refs]))
    n = len(cands)
    tc, tr, pos = tok[:n], [], n
    for rs in refs:
        tr.append(tok[pos : pos + len(rs)])
        pos += len(rs)
    return tc, tr, n_rare


def meteor_cold(cands, refs) -> tuple[float, float]:
    """METEOR with an empty index cache: (index build seconds, whole first run seconds)."""
    tc, tr, _ = ptb_tokenized(cands, refs)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        with MeteorProcess(cache=Path(tmp), backend="jar") as p:
            t_build = timed(p.start)[0]  # builds the index
            p.stats(tc, tr)
        total = time.perf_counter() - t0
    return t_build, total


# One METEOR run as a whole process (interpreter start-up, imports, data files, JVM if any):
# argv: mode (pycocoevalcap | python | jar), a json file of PTB-tokenized candidates and references.
_METEOR_WORKER = r"""
import json, sys
mode, data = sys.argv[1], json.load(open(sys.argv[2]))
tc, tr = data["cands"], data["refs"]
if mode == "pycocoevalcap":
    from pycocoevalcap.meteor.meteor import Meteor
    m = Meteor()
    score, _ = m.compute_score({i: rs for i, rs in enumerate(tr)}, {i: [c] for i, c in enumerate(tc)})
    del m
else:
    from vlbench.tasks.captioning.bleu import bleu_stats, corpus_bleu
    from vlbench.tasks.captioning.cider import cider_scores
    from vlbench.tasks.captioning.corpus import Corpus
    from vlbench.tasks.captioning.rouge import rouge_l
    from vlbench.tasks.captioning.meteor import MeteorProcess, meteor_aggregate, meteor_from_stats
    with MeteorProcess(backend=mode) as p:
        st = p.stats(tc, tr)
    score = float(meteor_from_stats(meteor_aggregate(st)))
print(json.dumps({"score": score}))
"""


def meteor_process_run(mode: str, data: Path, cache: Path | None,
                       extra_env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """(wall seconds, peak RSS in MB of the largest process of the run, METEOR) of one whole
    process, measured by GNU time (`%M`: the largest resident set of the process and of its waited
    children, e.g. pycocoevalcap's JVM)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env.pop("VLBENCH_METEOR_ALIGNER", None)
    if cache is not None:
        env["VLBENCH_METEOR_CACHE"] = str(cache)
    env.update(extra_env or {})
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "vlbench-time %e %M", sys.executable, "-c", _METEOR_WORKER,
                           mode, str(data)], capture_output=True, text=True, env=env, check=True)
    wall = time.perf_counter() - t0
    line = [x for x in proc.stderr.splitlines() if x.startswith("vlbench-time ")][-1]
    rss_mb = int(line.split()[2]) / 1024
    return wall, rss_mb, json.loads(proc.stdout.strip().splitlines()[-1])["score"]


def bench_meteor_processes(cands: list[str], refs: list[list[str]], repeats: int) -> None:
    """METEOR alone at full size, as whole processes: pycocoevalcap's Meteor, vlbench in Python and
    vlbench's jar path, warm (index cached) and cold (first run on a machine, an empty index folder:
    the index is built), all interleaved."""
    from vlbench.tasks.captioning.meteor import paraphrase_index

    tc, tr, _ = ptb_tokenized(cands, refs)
    warm_cache = paraphrase_index.cache_root()
    MeteorProcess(backend="python").start().close()  # the index exists in the user's cache (not timed)
    rows: dict[str, list[tuple[float, float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "captions.json"
        data.write_text(json.dumps({"cands": tc, "refs": tr}))
        for _ in range(repeats):  # interleaved, so machine load hits all alike
            for mode in ("pycocoevalcap", "python", "jar"):
                rows.setdefault(f"{mode} warm", []).append(meteor_process_run(mode, data, warm_cache))
                if mode != "pycocoevalcap":  # a first run: an empty index folder
                    with tempfile.TemporaryDirectory(dir=tmp) as cold:
                        rows.setdefault(f"{mode} cold", []).append(meteor_process_run(mode, data, Path(cold)))
            rows.setdefault("python-aligner warm", []).append(
                meteor_process_run("python", data, warm_cache, {"VLBENCH_METEOR_ALIGNER": "python"}))
    scores = {k: v[0][2] for k, v in rows.items()}
    ours = {k: s for k, s in scores.items() if not k.startswith("pycocoevalcap")}
    assert len(set(ours.values())) == 1, scores  # identical statistics, so identical floats
    assert abs(scores["python warm"] - scores["pycocoevalcap warm"]) < 1e-6, scores

    def med(key: str, i: int) -> float:
        return statistics.median(r[i] for r in rows[key])

    ref_wall = med("pycocoevalcap warm", 0)
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    n_refs = sum(len(r) for r in refs)
    print(f"METEOR alone, {len(cands)} images, {n_refs} references, whole processes (median of {repeats}), "
          f"wall seconds and peak RSS of the largest process; load average after the run {load}\n")
    print("| run | wall s | vs pycocoevalcap | peak RSS MB |\n| --- | --- | --- | --- |")
    labels = {
        "pycocoevalcap warm": "pycocoevalcap `Meteor()` (JVM, whole table; every run is cold)",
        "python warm": "vlbench in Python, index cached (C aligner)",
        "python-aligner warm": "vlbench in Python, index cached, Python aligner (`VLBENCH_METEOR_ALIGNER=python`: no C compiler)",
        "jar warm": "vlbench jar path (VLBENCH_METEOR=jar), index cached",
        "python cold": "vlbench in Python, first run on a machine: index built meanwhile (C aligner)",
        "jar cold": "vlbench jar path, first run on a machine: index built first",
    }
    for key, label in labels.items():
        w = med(key, 0)
        print(f"| {label} | {w:.3f} | {ref_wall / w:.1f}x | {med(key, 1):.0f} |")
    print(f"\nPython vs the jar path, warm: {med('jar warm', 0) / med('python warm', 0):.2f}x; "
          f"METEOR = {scores['python warm']!r} (vlbench, all runs), {scores['pycocoevalcap warm']!r} (pycocoevalcap)")


def set_images(root: Path, name: str) -> list[tuple[str, list[str]]]:
    """(candidate, its references) per image of caption set A-E, as pycocoevalcap writes them:
    images in the references' order, each image's references in file order."""
    cands = json.loads((root / "derived" / f"{name}_cands.json").read_text())
    refs = json.loads((root / "derived" / f"{name}_refs.json").read_text())
    cand_of = {c["image_id"]: c["caption"] for c in cands}
    by_img: dict[object, list[str]] = {}
    for a in refs["annotations"]:
        by_img.setdefault(a["image_id"], []).append(a["caption"])
    return [(cand_of[img["id"]], by_img.get(img["id"], [])) for img in refs["images"] if img["id"] in cand_of]


def real_sets(root: Path) -> dict[str, tuple[list[str], list[str]]]:
    """Caption sets A-E as pycocoevalcap writes them: (candidates, references)."""
    out = {}
    for name in "ABCDE":
        images = set_images(root, name)
        out[name] = ([c for c, _ in images], [r for _, rs in images for r in rs])
    return out


def real_images(root: Path, n_images: int) -> tuple[list[str], list[list[str]]]:
    """The first `n_images` images of caption sets A-E, in order: (candidate, its references)."""
    images = [im for name in "ABCDE" for im in set_images(root, name)][:n_images]
    return [c for c, _ in images], [rs for _, rs in images]


def bench_realdata(root: Path, repeats: int) -> None:
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    sets = real_sets(root)

    def pycoco():
        out = []
        for cands, refs in sets.values():
            r = PTBTokenizer().tokenize({0: [{"caption": c} for c in refs]})[0]
            c = PTBTokenizer().tokenize({0: [{"caption": c} for c in cands]})[0]
            out.append(c + r)
        return out

    def ours():
        return [tokenize(c + r, pycoco_successors([c, r]))[0] for c, r in sets.values()]

    def earlier():  # the fast path, then the jar (one JVM per set) for every caption outside it
        out = []
        for c, r in sets.values():
            flat, succ = c + r, pycoco_successors([c, r])
            tok = fast_tokenize_many(flat)
            slow = [i for i, t in enumerate(tok) if t is None]
            for i, t in zip(slow, jar_tokenize([flat[i] for i in slow], [succ[i] for i in slow]), strict=True):
                tok[i] = t
            out.append(tok)
        return out

    # the worst case for vlbench: every caption outside the fast path (set C with curly
    # apostrophes and the word "a" in curly quotes)
    curly = {"C-curly": tuple([x.replace("'", "\u2019").replace(" a ", " \u201ca\u201d ") for x in part]
                              for part in sets["C"])}

    def pycoco_curly():
        c, r = curly["C-curly"]
        return [PTBTokenizer().tokenize({0: [{"caption": x} for x in c]})[0]
                + PTBTokenizer().tokenize({0: [{"caption": x} for x in r]})[0]]

    def ours_curly():
        c, r = curly["C-curly"]
        return [tokenize(c + r, pycoco_successors([c, r]))[0]]

    runs: dict[str, list[float]] = {"pycocoevalcap": [], "vlbench": [], "earlier": [], "curly-pycocoevalcap": [],
                                    "curly-vlbench": []}
    for _ in range(repeats):
        t, ref_curly = timed(pycoco_curly)
        runs["curly-pycocoevalcap"].append(t)
        t, toks = timed(ours_curly)
        runs["curly-vlbench"].append(t)
        # a handful of these captions still go to the jar (quote pairs); tokens equal all the same
        assert toks == ref_curly
        for key, fn in (("pycocoevalcap", pycoco), ("vlbench", ours), ("earlier", earlier)):
            t, toks = timed(fn)
            runs[key].append(t)
            if key == "pycocoevalcap":
                reference = toks
            else:
                assert toks == reference, key  # same tokens as pycocoevalcap, every caption
    n = sum(len(c) + len(r) for c, r in sets.values())
    n_rare = sum(tokenize(c + r, pycoco_successors([c, r]))[1] for c, r in sets.values())
    n_outside = sum(t is None for c, r in sets.values() for t in fast_tokenize_many(c + r))
    med = {k: statistics.median(v) for k, v in runs.items()}
    print(f"real caption sets A-E: {n} captions, {n_outside} outside the fast path, {n_rare} given to the whole "
          f"lexer by vlbench; median of {repeats} runs, wall seconds\n")
    print("| PTB tokenization of sets A-E | seconds | pycocoevalcap / this |\n| --- | --- | --- |")
    print(f"| pycocoevalcap PTBTokenizer (10 jar runs) | {med['pycocoevalcap']:.3f} | 1.0x |")
    print(f"| vlbench, all in Python | {med['vlbench']:.3f} | {med['pycocoevalcap'] / med['vlbench']:.1f}x |")
    print(f"| vlbench's earlier path: fast path, then the jar for {n_outside} captions | {med['earlier']:.3f} | "
          f"{med['pycocoevalcap'] / med['earlier']:.1f}x |")
    c, r = curly["C-curly"]
    n_c = len(c) + len(r)
    outside = sum(t is None for t in fast_tokenize_many(c + r))
    rare_c = tokenize(c + r, pycoco_successors([c, r]))[1]
    print(f"\nworst case: set C with curly apostrophes and quotes, {n_c} captions, {outside} outside the fast "
          f"path, {rare_c} given to the whole lexer by vlbench\n")
    print("| PTB tokenization, worst case | seconds | pycocoevalcap / this |\n| --- | --- | --- |")
    print(f"| pycocoevalcap PTBTokenizer (2 jar runs) | {med['curly-pycocoevalcap']:.3f} | 1.0x |")
    print(f"| vlbench | {med['curly-vlbench']:.3f} | {med['curly-pycocoevalcap'] / med['curly-vlbench']:.1f}x |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--realdata", type=Path, help="time PTB tokenization on the real caption sets of this folder "
                    "(with --meteor-processes: METEOR on their first --images images)")
    ap.add_argument("--meteor-processes", action="store_true",
                    help="only METEOR, as whole processes: pycocoevalcap, vlbench in Python, vlbench's jar path")
    args = ap.parse_args()
    if args.meteor_processes and args.realdata:
        cands, refs = real_images(args.realdata, args.images)
        bench_meteor_processes(cands, refs, args.repeats)
        return
    if args.realdata:
        bench_realdata(args.realdata, args.repeats)
        return
    cands, refs = make_set(args.images)
    if args.meteor_processes:
        bench_meteor_processes(cands, refs, args.repeats)
        return
    cold_build, cold_total = meteor_cold(cands, refs)
    MeteorProcess().start().close()  # the user's index cache, built here if missing (not timed)
    py_runs, vl_runs = [], []
    for _ in range(args.repeats):  # interleaved, so machine load hits both alike
        py_t, py_v = run_pycoco(cands, refs)
        vl_t, vl_v = run_vlbench(cands, refs)
        py_runs.append(py_t)
        vl_runs.append(vl_t)

    # the values agree before any timing is reported
    assert np.allclose(vl_v["bleu"], py_v["bleu"][0], rtol=0, atol=1e-9)
    assert abs(float(np.mean(vl_v["rouge"])) - py_v["rouge"][0]) < 1e-9
    assert abs(float(np.mean(vl_v["cider_d"])) - py_v["cider"][0]) < 1e-9
    assert abs(vl_v["meteor"] - py_v["meteor"][0]) < 1e-6
    full = vl_v["full"].scores
    assert abs(full["CIDEr-D"] - py_v["cider"][0]) < 1e-9 and abs(full["METEOR"] - py_v["meteor"][0]) < 1e-6

    def med(runs, key):
        return statistics.median(r[key] for r in runs)

    py_fast = statistics.median(r["tokenize"] + r["BLEU"] + r["ROUGE-L"] + r["CIDEr-D"] for r in py_runs)
    py_total = statistics.median(sum(r.values()) for r in py_runs)
    vl_fast = med(vl_runs, "tokenize+BLEU+ROUGE-L+CIDEr-D+CIDEr")
    print(f"{args.images} images x 5 references; captions given to the whole PTB lexer by vlbench: "
          f"{vl_v['n_rare']} of {6 * args.images}; median of {args.repeats} runs, wall seconds\n")
    print("| stage | pycocoevalcap | vlbench | ratio |\n| --- | --- | --- | --- |")
    for key in ("tokenize", "BLEU", "ROUGE-L", "CIDEr-D"):
        print(f"| {key} | {med(py_runs, key):.3f} | | |")
    print(f"| tokenize + BLEU + ROUGE-L + CIDEr-D (vlbench: + CIDEr) | {py_fast:.3f} | {vl_fast:.3f} | "
          f"{py_fast / vl_fast:.1f}x |")
    py_met = med(py_runs, "METEOR")
    print(f"| METEOR (pycocoevalcap: JVM start-up included; vlbench: in Python, index cached) | {py_met:.3f} | "
          f"{med(vl_runs, 'METEOR'):.3f} | {py_met / med(vl_runs, 'METEOR'):.1f}x |")
    print(f"| METEOR, vlbench's jar path (VLBENCH_METEOR=jar: filtered table, index cached) | {py_met:.3f} | "
          f"{med(vl_runs, 'METEOR jar'):.3f} | {py_met / med(vl_runs, 'METEOR jar'):.1f}x |")
    print(f"| METEOR, vlbench with the whole paraphrase table (identical statistics) | {py_met:.3f} | "
          f"{med(vl_runs, 'METEOR plain'):.3f} | {py_met / med(vl_runs, 'METEOR plain'):.1f}x |")
    print(f"| METEOR cold, jar path: first run, index built ({cold_build:.1f} s) | {py_met:.3f} | {cold_total:.3f} | "
          f"{py_met / cold_total:.1f}x |")
    vl_full = med(vl_runs, "score_captions (all metrics)")
    print(f"| everything (pycocoevalcap: sum of stages; vlbench: score_captions) | {py_total:.3f} | "
          f"{vl_full:.3f} | {py_total / vl_full:.1f}x |")


if __name__ == "__main__":
    main()
