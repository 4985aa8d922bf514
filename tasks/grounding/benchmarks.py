"""Declarative benchmark records for Flickr30k Entities phrase grounding."""

from __future__ import annotations

from vlbench.benchmark import Benchmark, DataFile, Metric
from vlbench.tasks.grounding.protocol import GT_FILE, MEASURES, PROTOCOLS, TYPES
from vlbench.tasks.mini.files import mini_file
from vlbench.tasks.mini.world import ENTITY_TYPES

VERSION = "1.0"

CITATION = (
    "Plummer et al., Flickr30k Entities: Collecting Region-to-Phrase Correspondences for Richer "
    "Image-to-Sentence Models, ICCV 2015 / IJCV 2017. Protocol: Kamath et al., MDETR, ICCV 2021 "
    "(datasets/flickr_eval.py)."
)
HOMEPAGE = "https://github.com/BryanPlummer/flickr30k_entities"
LICENSE = (
    "Annotations: see github.com/BryanPlummer/flickr30k_entities; images: Flickr terms of use "
    "(not needed for scoring)"
)
SOURCE_HINT = (
    "a folder with Sentences/, Annotations/ and the split .txt files (the unzipped "
    "annotations.zip of github.com/BryanPlummer/flickr30k_entities), or a Hugging Face dataset "
    "repo id holding that tree"
)


def _metrics(types: tuple[str, ...]) -> tuple[Metric, ...]:
    names = {"": "ANY-BOX", "merged_": "MERGED-BOX"}
    out = []
    for p in PROTOCOLS:
        for m in MEASURES:
            what = "upper bound (any box in the list)" if m == "UB" else m
            out.append(Metric(f"{p}{m}", f"{names[p]} {what}, IoU >= threshold, over all phrases"))
    for p in PROTOCOLS:
        for m in MEASURES:
            for t in types:
                out.append(Metric(f"{p}{m}/{t}", f"{names[p]} {m} over phrases of type {t}"))
    return tuple(out)


METRICS = _metrics(TYPES)
# The mini world's phrases are typed by shape family (tasks/mini/world.py ENTITY_TYPES).
MINI_TYPES: tuple[str, ...] = tuple(dict.fromkeys(ENTITY_TYPES.values()))


def _options(split: str, types: tuple[str, ...] = TYPES, source: dict | None = None) -> dict:
    # box_tolerance: pixels a box may extend past the image before it is counted as outside
    # (scored unclipped either way; the count is a warning).
    # entity_types: the per-type columns, in order.
    # source: what `prepare` must find in the official release (else refused without --force).
    options = {"split": split, "iou_threshold": 0.5, "box_tolerance": 1.0, "entity_types": types}
    if source is not None:
        options["source"] = source
    return options


# The official release (BryanPlummer/flickr30k_entities, annotations.zip "Version 1.0" and the
# split files): counts as MDETR's evaluator reports them, and the sha256 of the split's image ids
# sorted numerically and joined by "\n" (independent of the split file's line endings).
TEST_SOURCE = {"images": 1000, "sentences": 4969, "phrases": 14481,
               "ids_sha256": "4f475d558a807c8ec7742b15cea64783473b762a6ef95af2272e652f396dfb05"}
VAL_SOURCE = {"images": 1000, "sentences": 4986, "phrases": 14433,
              "ids_sha256": "7be77fa12048e0708f50dbf9c1c6410425843ec5adbb99f3a336599a25e90ef5"}


FLICKR30K_ENTITIES_TEST = Benchmark(
    id="flickr30k-entities-test",
    task="grounding",
    version=VERSION,
    description="Flickr30k Entities phrase grounding, test split (1,000 images), MDETR protocol: "
    "R@1/5/10 and upper bound at IoU >= 0.5, ANY-BOX and MERGED-BOX",
    files=(DataFile("ground_truth", GT_FILE),),
    metrics=METRICS,
    main_score="R@1",
    citation=CITATION,
    license=LICENSE,
    homepage=HOMEPAGE,
    source_hint=SOURCE_HINT,
    options=_options("test", source=TEST_SOURCE),
)

FLICKR30K_ENTITIES_VAL = Benchmark(
    id="flickr30k-entities-val",
    task="grounding",
    version=VERSION,
    description="Flickr30k Entities phrase grounding, val split (1,000 images), MDETR protocol",
    files=(DataFile("ground_truth", GT_FILE),),
    metrics=METRICS,
    main_score="R@1",
    citation=CITATION,
    license=LICENSE,
    homepage=HOMEPAGE,
    source_hint=SOURCE_HINT,
    options=_options("val", source=VAL_SOURCE),
)

MINI_GROUNDING = Benchmark(
    id="mini-grounding",
    task="grounding",
    version=VERSION,
    description="vlbench-mini phrase grounding: the bundled generated world's Flickr30k "
    "Entities-format test split, scored as flickr30k-entities-test",
    files=(mini_file("ground_truth", f"mini-grounding/{GT_FILE}"),),
    metrics=_metrics(MINI_TYPES),
    main_score="R@1",
    citation="vlbench-mini (generated); protocol as flickr30k-entities-test",
    license="Apache-2.0 (generated data)",
    source_hint="the mini world folder (vlbench data mini --out DIR)",
    package_data="vlbench.tasks.mini",
    options=_options("test", MINI_TYPES),
)

BENCHMARKS: tuple[Benchmark, ...] = (
    FLICKR30K_ENTITIES_TEST,
    FLICKR30K_ENTITIES_VAL,
    MINI_GROUNDING,
)
