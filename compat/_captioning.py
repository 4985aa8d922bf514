"""The one module of `vlbench.compat` that imports vlbench's captioning internals.

Everything the pycocoevalcap drop-in computes goes through the functions here, each a thin call
into `vlbench.tasks.captioning` (the same code `vlbench score` runs): so when that package moves
its modules, only the imports below change. Inputs are plain lists, in the order pycocoevalcap
iterates its dicts; outputs are numpy arrays and floats.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlbench.tasks.captioning.bleu import bleu_from_stats, bleu_stats, corpus_bleu
from vlbench.tasks.captioning.cider import CIDER_SIGMA, cider_scores
from vlbench.tasks.captioning.corpus import MAX_N, Corpus
from vlbench.tasks.captioning.java import JavaUnavailable, java_command
from vlbench.tasks.captioning.meteor import (
    MeteorProcess,
    MeteorUnavailable,
    meteor_aggregate,
    meteor_from_stats,
)
from vlbench.tasks.captioning.ptb import tokenize
from vlbench.tasks.captioning.ptb.lines import LINE_BREAKS
from vlbench.tasks.captioning.rouge import ROUGE_BETA, rouge_l
from vlbench.tasks.captioning.spice import ADD_OPENS, spice_status

__all__ = [
    "CIDER_SIGMA", "MAX_N", "ROUGE_BETA", "LINE_BREAKS", "MeteorProcess", "MeteorUnavailable",
    "bleu", "cider_d", "meteor", "ptb_tokenize", "rouge", "spice_jar_or_reason", "run_spice_jar",
]


def ptb_tokenize(captions: Sequence[str]) -> list[str]:
    """Tokenize captions as one run of pycocoevalcap's PTB jar over one file holding them in this
    order (the lexer's look-ahead across line ends included); no Java."""
    return tokenize(captions)[0]


def _corpus(cands: Sequence[str], refs: Sequence[Sequence[str]]) -> Corpus:
    return Corpus.build(list(cands), [list(r) for r in refs])


def bleu(cands: Sequence[str], refs: Sequence[Sequence[str]], n: int) -> tuple[np.ndarray, list[float], np.ndarray]:
    """(per-image statistics (I, 10), corpus BLEU-1..n, per-image BLEU (I, n)); "closest"
    reference length. Orders above n never enter BLEU-n, so the first n columns are BLEU(n)'s."""
    stats = bleu_stats(_corpus(cands, refs)) if cands else np.zeros((0, 2 * MAX_N + 2))
    return stats, corpus_bleu(stats)[:n], bleu_from_stats(stats)[:, :n]


def rouge(cands: Sequence[str], refs: Sequence[Sequence[str]], beta: float = ROUGE_BETA) -> np.ndarray:
    """Per-image ROUGE-L, tokens split on single spaces as pycocoevalcap splits them."""
    if not cands:
        return np.zeros(0)
    return rouge_l(list(cands), [list(r) for r in refs], beta=beta)


def cider_d(cands: Sequence[str], refs: Sequence[Sequence[str]]) -> np.ndarray:
    """Per-image CIDEr-D (pycocoevalcap's Cider: n = 4, sigma = 6), document frequency from
    these references."""
    return cider_scores(_corpus(cands, refs))[0]


def meteor(process: MeteorProcess, cands: Sequence[str], refs: Sequence[Sequence[str]]) -> tuple[float, np.ndarray]:
    """(corpus METEOR, per-image METEOR) from the Meteor 1.5 statistics, aggregated as the jar
    aggregates them."""
    stats = process.stats(list(cands), [list(r) for r in refs])
    return float(meteor_from_stats(meteor_aggregate(stats))[()]), meteor_from_stats(stats)


def spice_jar_or_reason() -> tuple[Path | None, str]:
    """(spice-1.0.jar, "") where SPICE can run; (None, what is missing) elsewhere."""
    return spice_status()


def run_spice_jar(jar: Path, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The SPICE jar's output records for pycocoevalcap's input records, run as vlbench runs it
    (`-subset -silent`, a cache folder, the `--add-opens` flags Java 17 needs)."""
    try:
        java = java_command()
    except JavaUnavailable as exc:
        raise RuntimeError(str(exc)) from None
    with tempfile.TemporaryDirectory(prefix="vlbench-compat-spice-") as tmp:
        src, out, cache = Path(tmp) / "in.json", Path(tmp) / "out.json", Path(tmp) / "cache"
        cache.mkdir()
        src.write_text(json.dumps(records, indent=2), encoding="utf-8")
        cmd = [*java, *ADD_OPENS, "-Xmx8G", "-jar", str(jar), str(src), "-cache", str(cache),
               "-out", str(out), "-subset", "-silent"]
        done = subprocess.run(cmd, cwd=str(jar.parent), capture_output=True, check=False)
        if done.returncode != 0 or not out.exists():
            raise RuntimeError(f"SPICE failed (exit {done.returncode}): "
                               f"{done.stderr.decode(errors='replace')[-800:]}")
        return json.loads(out.read_text(encoding="utf-8"))
