"""Scoring a set of candidate captions against their references: PTB tokenization, then BLEU,
METEOR, ROUGE-L, CIDEr-D, CIDEr and SPICE, with the per-image statistics the bootstrap resamples."""

from __future__ import annotations

from typing import Any

import numpy as np

from vlbench.errors import UsageError
from vlbench.item_table import ItemTable
from vlbench.task_type import TaskScores
from vlbench.tasks.captioning.bleu import BLEU_COLUMNS, bleu_from_stats, bleu_stats, corpus_bleu
from vlbench.tasks.captioning.cider import cider_scores
from vlbench.tasks.captioning.corpus import MAX_N, Corpus
from vlbench.tasks.captioning.loaders import References
from vlbench.tasks.captioning.meteor import (
    METEOR_COLUMNS,
    MeteorProcess,
    MeteorUnavailable,
    meteor_aggregate,
    meteor_from_stats,
    meteor_perfect,
)
from vlbench.tasks.captioning.ptb import (
    TokenizerUnavailable,
    pycoco_successors,
    rare_shape_lexer,
    tokenize,
)
from vlbench.tasks.captioning.rouge import rouge_l
from vlbench.tasks.captioning.spice import run_spice, spice_status

POPULATION = "images"
PER_IMAGE = [f"{k}@image" for k in ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR")]


# pycocoevalcap's names for vlbench's keys (vlbench's CIDEr, the original one, has none there)
PYCOCOEVALCAP_NAMES = {
    "BLEU-1": "Bleu_1", "BLEU-2": "Bleu_2", "BLEU-3": "Bleu_3", "BLEU-4": "Bleu_4",
    "METEOR": "METEOR", "ROUGE-L": "ROUGE_L", "CIDEr-D": "CIDEr", "SPICE": "SPICE",
}
CIDER_NAME_NOTE = (
    'CIDEr-D is the score pycocoevalcap reports as "CIDEr"; vlbench\'s CIDEr is the original CIDEr '
    "(no clipping, no length penalty, in [0, 1])"
)


def score_captions(captions: list[str], refs: References, warnings: list[str] | None = None,
                   meteor: bool = True, spice: bool = True,
                   meteor_process: MeteorProcess | None = None) -> TaskScores:
    """Score candidates (aligned with `refs.ids`) against the references.

    `meteor_process`: a started Meteor JVM to reuse (left open); by default one is started here
    and closed at the end."""
    warnings = list(warnings or [])
    unavailable: dict[str, str] = {}
    proc: MeteorProcess | None = meteor_process
    if meteor_process is not None:
        pass
    elif meteor:
        try:
            proc = MeteorProcess().start()  # JVM start-up overlaps tokenization and the other metrics
        except MeteorUnavailable as exc:
            unavailable["METEOR"] = str(exc)
    else:
        unavailable["METEOR"] = "disabled"
    try:
        n = refs.n_images
        flat_refs = [r for rs in refs.captions for r in rs]
        flat = list(captions) + flat_refs
        try:
            # pycocoevalcap's temp files: the references in image order, the candidates likewise
            tok, n_rare = tokenize(flat, pycoco_successors([captions, flat_refs]))
        except TokenizerUnavailable as exc:  # only with the cross-check switch VLBENCH_PTB=jar
            raise UsageError(
                f"VLBENCH_PTB=jar sends {len(exc.captions)} caption(s) of rare shapes to the CoreNLP PTB "
                f"tokenizer jar, which cannot run ({exc}); e.g. {exc.captions[0][:80]!r}. Unset "
                "VLBENCH_PTB to tokenize them in Python, or install Java and the captions extra "
                "(pip install 'vlbench[captions]')"
            ) from None
        cands = tok[:n]
        tok_refs: list[list[str]] = []
        pos = n
        for rs in refs.captions:
            tok_refs.append(tok[pos : pos + len(rs)])
            pos += len(rs)

        corpus = Corpus.build(cands, tok_refs)
        bleu_counts = bleu_stats(corpus)
        bleu = corpus_bleu(bleu_counts)
        bleu_img = bleu_from_stats(bleu_counts)
        cider_d, cider = cider_scores(corpus)
        rouge = rouge_l(cands, tok_refs, corpus=corpus)

        meteor_stats = None
        if proc is not None:
            try:
                meteor_stats = proc.stats(cands, tok_refs)
            except MeteorUnavailable as exc:
                unavailable["METEOR"] = str(exc)
    finally:
        if proc is not None and meteor_process is None:
            proc.close()

    scores: dict[str, float | None] = {f"BLEU-{k + 1}": float(bleu[k]) for k in range(MAX_N)}
    # "n_images" is constant, so its mean in any bootstrap replicate is the set size.
    columns: list[str] = [*BLEU_COLUMNS, "n_images"]
    blocks: list[np.ndarray] = [bleu_counts, np.full((n, 1), float(n))]
    if meteor_stats is not None:
        agg_ready = meteor_stats.copy()
        agg_ready[meteor_perfect(meteor_stats), 20] = 0.0
        scores["METEOR"] = float(meteor_from_stats(meteor_aggregate(meteor_stats)))
        columns += METEOR_COLUMNS
        blocks.append(agg_ready)
    else:
        scores["METEOR"] = None
    scores["ROUGE-L"] = float(np.mean(rouge))
    scores["CIDEr-D"] = float(np.mean(cider_d))
    scores["CIDEr"] = float(np.mean(cider))
    columns += ["ROUGE-L", "CIDEr-D", "CIDEr"]
    blocks.append(np.stack([rouge, cider_d, cider], axis=1))

    if spice:
        jar, reason = spice_status()
        if jar is None:
            unavailable["SPICE"] = reason
        else:
            try:
                sp = run_spice(jar, refs.ids, cands, tok_refs)
                scores["SPICE"] = float(np.mean(sp))
                if np.isnan(sp).any():
                    warnings.append(f"SPICE gave no score for {int(np.isnan(sp).sum())} image(s); the mean is NaN as in pycocoevalcap")
                columns.append("SPICE")
                blocks.append(sp[:, None])
            except Exception as exc:  # a present but broken SPICE install is reported, not faked
                unavailable["SPICE"] = f"SPICE jar present but failed: {exc}"

    columns += PER_IMAGE[:4]
    blocks.append(bleu_img)
    if meteor_stats is not None:
        columns.append(PER_IMAGE[4])
        blocks.append(meteor_from_stats(meteor_stats)[:, None])
    values = np.concatenate([b.reshape(len(refs.ids), -1) for b in blocks], axis=1)
    table = ItemTable([str(i) for i in refs.ids], columns, values, unit="image")
    extra: dict[str, Any] = {
        "notes": [CIDER_NAME_NOTE],
        "pycocoevalcap_names": PYCOCOEVALCAP_NAMES,
        # captions of rare shapes: tokenized by the whole PTB lexer in Python (or the jar, VLBENCH_PTB=jar)
        "tokenizer": {"captions": len(flat), "rare_shapes": n_rare, "rare_shapes_by": rare_shape_lexer()},
        "cider_document_frequency": f"from the references of the {n} scored images (fixed for bootstrap replicates)",
    }
    if warnings:
        extra["warnings"] = warnings
    if unavailable:
        extra["unavailable"] = unavailable
    return TaskScores(
        scores=scores,
        items={POPULATION: table},
        n={"images": n, "references": int(sum(len(r) for r in refs.captions))},
        extra=extra,
    )
