"""D' sources: the train images with their objects and captions."""

from __future__ import annotations

from vlbench.baselines.synthetic.sources import SourceImage


def test_mini_sources_carry_objects_and_phrase_spans(sources: list[SourceImage]) -> None:
    first = sources[0]
    assert first.path.is_file() and len(first.captions) == 5 and len(first.phrases) == 5
    assert {c for c, _ in first.objects} == {c for spans in first.phrases for _, cs in spans for c in cs}
