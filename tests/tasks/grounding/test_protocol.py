"""`protocol.py`: the names the benchmark records and the scoring share."""

from __future__ import annotations

from vlbench.registry import registry
from vlbench.tasks.grounding.metrics import KS
from vlbench.tasks.grounding.protocol import GT_FILE, MEASURES, PROTOCOLS, TYPES
from vlbench.tasks.grounding.scores import metric_keys


def test_the_records_declare_the_metrics_the_scoring_computes() -> None:
    assert MEASURES == ("R@1", "R@5", "R@10", "UB") and tuple(f"R@{k}" for k in KS) == MEASURES[:3]
    assert PROTOCOLS == ("", "merged_") and len(TYPES) == 8 and "notvisual" not in TYPES
    for benchmark_id in ("flickr30k-entities-test", "flickr30k-entities-val"):
        b = registry().benchmark(benchmark_id)
        assert [m.key for m in b.metrics] == metric_keys(TYPES)
        assert [f.path for f in b.files] == [GT_FILE]
