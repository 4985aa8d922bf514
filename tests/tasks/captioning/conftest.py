"""Shared caption sets and the pycocoevalcap reference run on them (once per session)."""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from gen import adversarial_caption, realistic_caption  # noqa: E402

from vlbench.tasks.captioning.java import java_disabled  # noqa: E402
from vlbench.tasks.captioning.loaders import References  # noqa: E402

# VLBENCH_JAVA=none runs this directory as on a machine without Java (pycocoevalcap's own
# reference runs need Java too, so they are skipped along with it).
HAVE_JAVA = shutil.which("java") is not None and not java_disabled()
needs_java = pytest.mark.skipif(not HAVE_JAVA, reason="java is not installed (or VLBENCH_JAVA=none)")

# The two-image example of seed 004 (CIDEr worked through by hand).
SEED_CANDS = ["a girl explaining how to upload a music", "a animation is shown to help learn colors"]
SEED_REFS = [
    [
        "a clip showing a computer screen which contains instructions",
        "a person explaining how to download song",
        "a person is showing what to do on their computer",
        "a person provides instructions on searching for music downloads online",
        "a screencast demonstration of how to download music from the internet is shown",
    ],
    [
        "a animation is shown to help learn colors",
        "a commercial for paint",
        "a pain can singing",
        "a purple paint can is moving around",
        "a song about colors with paint cans",
    ],
]

EDGE_CANDS = [
    "",  # empty candidate
    "dog",  # one word
    "A man riding a wave on top of a surfboard.",
    "A man's dog (brown) runs [fast] {here}... wow?!",
    "Cost is $1,000.50 & 50% off... \"great\" -- isn't it?",
    "Ein Café in München, naïve façade — très chic!",
    "a a a a bus bus bus red red",
    "Two giraffes standing next to each other in a field",
    "Mr. Smith cannot believe it's 5:30 p.m. in St. Louis Inc.",
    "smile :) :-( ;) #1 e-mail child/baby 20-year-old dogs' toys",
    " ".join(["a man and a dog walk on the beach near the water"] * 8),  # 96 tokens
]
EDGE_REFS = [
    ["A dog sitting on a couch.", "a brown dog on a sofa"],
    ["A dog.", "A black dog lying down.", "The dog sleeps."],
    ["A man riding a wave on top of a surfboard."] * 3,  # duplicate references
    ["A man's brown dog runs fast here.", "a dog (brown) runs [quickly]."],
    ["The cost is $1,000.50, 50% off!", "It costs 1000 dollars...", "\"Great\" price -- half off."],
    ["A café in Munich with a naïve façade.", "Ein Café — très chic."],
    ["A red bus.", "A red double decker bus on a street", "red bus bus", "a bus that is red", "A bus."],
    [f"Two giraffes number {k} standing in a grassy field." for k in range(8)],  # 8 references
    ["Mr. Smith is in St. Louis at 5:30 p.m.", "A man named Smith can't believe it."],
    ["A smiling child with a toy :)"],  # 1 reference
    [" ".join(["a dog and a man walk along the beach by water"] * 7), "A man and his dog."],  # 70 tokens
]


def generated_set(n: int = 300, seed: int = 0, adversarial_share: float = 0.1) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)

    def cap() -> str:
        return adversarial_caption(rng) if rng.random() < adversarial_share else realistic_caption(rng)

    cands = [cap() for _ in range(n)]
    refs = [[cap() for _ in range(rng.randint(1, 8))] for _ in range(n)]
    return cands, refs


def refs_of(refs: list[list[str]]) -> References:
    return References(list(range(len(refs))), refs, "test")


SETS = {
    "seed004": (SEED_CANDS, SEED_REFS),
    "edge": (EDGE_CANDS, EDGE_REFS),
    "generated": generated_set(),
}


@pytest.fixture(scope="session")
def pyco_tokenized():
    """pycocoevalcap's PTBTokenizer on every set, as COCOEvalCap calls it (one run for the
    references, one for the candidates, per set): {set: (gts, res)}."""
    if not HAVE_JAVA:
        pytest.skip("java is not installed")
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    out = {}
    for name, (cands, refs) in SETS.items():
        res = {i: [{"caption": c}] for i, c in enumerate(cands)}
        gts = {i: [{"caption": r} for r in rs] for i, rs in enumerate(refs)}
        out[name] = (PTBTokenizer().tokenize(gts), PTBTokenizer().tokenize(res))
    return out


@pytest.fixture(params=["c", "numpy"])
def scanner(request, monkeypatch):
    """Each test runs with the C table pass and matcher (`_paraphrase_scan`) and with numpy's."""
    from vlbench.tasks.captioning.meteor import paraphrase_index as PI
    from vlbench.tasks.captioning.meteor import paraphrase_table as PT

    if request.param == "c" and PI._paraphrase_scan is None:
        pytest.skip("the C table pass is not built (no C compiler)")
    if request.param == "numpy":
        monkeypatch.setattr(PI, "_paraphrase_scan", None)
        monkeypatch.setattr(PT, "_paraphrase_scan", None)
    return request.param
