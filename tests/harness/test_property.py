"""Arbitrary JSON never makes the validator raise anything but its own clean error."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.errors import InvalidSubmission, UsageError
from harness.submission import validate_file

scalars = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5), max_leaves=30)
id_like = st.one_of(st.integers(99990, 100060), st.integers(699990, 700300), st.text(max_size=8), st.booleans(), st.none(), st.floats(allow_nan=False, allow_infinity=False))
ranked = st.lists(id_like, max_size=12)
retrieval_predictions = st.fixed_dictionaries(
    {},
    optional={
        "image_to_text": st.dictionaries(st.sampled_from([str(100000 + i) for i in range(52)]) | st.text(max_size=4), ranked, max_size=6),
        "text_to_image": st.dictionaries(st.sampled_from([str(700000 + i) for i in range(260)]) | st.text(max_size=4), ranked, max_size=6),
        "other": json_values,
    },
)
envelopes = st.fixed_dictionaries(
    {"vlbench": st.sampled_from([1, 1, 2, "1", None])},
    optional={
        "benchmark": st.sampled_from(["coco-5k", "coco-1k", "flickr30k-1k", "nope", 5]),
        "task": st.sampled_from(["retrieval", "grounding", "x", None]),
        "meta": st.fixed_dictionaries({}, optional={"method": st.text(max_size=20) | st.integers(), "url": st.text(max_size=20), "x": json_values}),
        "predictions": retrieval_predictions | json_values,
        "junk": json_values,
    },
)
documents = json_values | envelopes


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(doc=documents, benchmark=st.sampled_from([None, "coco-5k", "coco-1k"]))
def test_validator_raises_only_clean_errors(doc, benchmark, retrieval_data: Path, tmp_path: Path) -> None:
    path = tmp_path / "fuzz.json"
    path.write_text(json.dumps(doc))
    try:
        validate_file(path, data_dir=retrieval_data, benchmark_id=benchmark)
    except InvalidSubmission as exc:
        assert exc.issues.total > 0
        for issue in exc.issues:
            assert issue.code and isinstance(issue.pointer, str) and issue.message
            assert issue.pointer == "" or issue.pointer.startswith("/")
    except UsageError:
        pass  # e.g. --benchmark names a benchmark the envelope contradicts in a way that is a usage error


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=200))
def test_arbitrary_bytes(raw: bytes, retrieval_data: Path, tmp_path: Path) -> None:
    path = tmp_path / "fuzz.bin"
    path.write_bytes(raw)
    try:
        validate_file(path, data_dir=retrieval_data)
    except InvalidSubmission as exc:
        assert exc.issues.total > 0


@settings(max_examples=300, deadline=None)
@given(predictions=retrieval_predictions | json_values)
def test_fast_structure_check_implies_schema_valid(predictions) -> None:
    """The retrieval fast path may skip the JSON Schema only for documents the schema accepts."""
    from harness.errors import IssueList
    from harness.registry import registry
    from harness.schema import schema_issues

    reg = registry()
    benchmark = reg.benchmark("coco-5k")
    task = reg.task_of(benchmark)
    if task.fast_structure_ok(predictions, benchmark):
        issues = IssueList()
        schema_issues(predictions, task.schema_path(), issues)
        assert not issues, issues.report()
