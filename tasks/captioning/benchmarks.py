"""Benchmark records of the caption-scoring task."""

from __future__ import annotations

from vlbench.benchmark import Benchmark, DataFile, Metric
from vlbench.tasks.mini.files import mini_file

METRICS = (
    Metric("BLEU-1", "corpus BLEU with unigrams (pycocoevalcap Bleu_1)", display="float", decimals=3),
    Metric("BLEU-2", "corpus BLEU up to bigrams (Bleu_2)", display="float", decimals=3),
    Metric("BLEU-3", "corpus BLEU up to trigrams (Bleu_3)", display="float", decimals=3),
    Metric("BLEU-4", "corpus BLEU up to 4-grams (Bleu_4)", display="float", decimals=3),
    Metric("METEOR", "Meteor 1.5 corpus score from summed statistics (the jar)", display="float", decimals=3),
    Metric("ROUGE-L", "mean per-image ROUGE-L, beta 1.2, P and R maxima over references", display="float", decimals=3),
    Metric("CIDEr-D", "mean CIDEr-D (what pycocoevalcap calls CIDEr), x10 scale", display="float", decimals=3),
    Metric("CIDEr", "mean original CIDEr (no clipping, no length penalty, no x10)", display="float", decimals=3),
    Metric("SPICE", "mean SPICE F-score (only where its jar and CoreNLP 3.6.0 models exist)", display="float", decimals=3),
)

CITATION_COCO = (
    "Chen et al., Microsoft COCO Captions: Data Collection and Evaluation Server, arXiv:1504.00325, 2015; "
    "Karpathy and Fei-Fei, Deep Visual-Semantic Alignments for Generating Image Descriptions, CVPR 2015"
)

COCO_KARPATHY_TEST = Benchmark(
    id="coco-karpathy-test",
    task="captioning",
    version="1.0",
    description="COCO captions, Karpathy test split (5,000 val2014 images, about 5 references each)",
    files=(DataFile("references", "references.json", sha256=None),),
    metrics=METRICS,
    main_score="CIDEr-D",
    citation=CITATION_COCO,
    license="COCO annotations: CC BY 4.0",
    homepage="https://cocodataset.org/#captions-eval",
    source_hint="a folder with captions_val2014.json and dataset_coco.json, or the hub dataset yerevann/coco-karpathy",
    options={"split": "test", "images": 5000},
)

MINI_CAPTIONS = Benchmark(
    id="mini-captions",
    task="captioning",
    version="1.0",
    description="vlbench-mini captions: test split of the generated mini world (no download)",
    files=(mini_file("references", "captions/references.json"),),
    metrics=METRICS,
    main_score="CIDEr-D",
    citation="vlbench-mini (generated)",
    license="Apache-2.0",
    package_data="vlbench.tasks.mini",
    source_hint="a mini world folder written by `vlbench data mini`",
)

BENCHMARKS = (COCO_KARPATHY_TEST, MINI_CAPTIONS)
