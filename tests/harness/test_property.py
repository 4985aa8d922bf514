"""Arbitrary JSON never makes the validator raise anything but its own clean error."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vlbench.errors import InvalidSubmission, UsageError
from vlbench.submission import validate

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
        validate(path, data_dir=retrieval_data, benchmark_id=benchmark)
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
        validate(path, data_dir=retrieval_data)
    except InvalidSubmission as exc:
        assert exc.issues.total > 0


@settings(max_examples=300, deadline=None)
@given(predictions=retrieval_predictions | json_values)
def test_fast_structure_check_implies_schema_valid(predictions) -> None:
    """The retrieval fast path may skip the JSON Schema only for documents the schema accepts."""
    from vlbench.errors import IssueList
    from vlbench.registry import registry
    from vlbench.schema import schema_issues

    reg = registry()
    benchmark = reg.benchmark("coco-5k")
    task = reg.task_of(benchmark)
    if task.fast_structure(predictions, benchmark).ok:
        issues = IssueList()
        schema_issues(predictions, task.schema_path(), issues)
        assert not issues, issues.report()


def _mutations(doc):
    """Structure-preserving damage to a valid predictions document: one leaf replaced."""
    leaf_values = st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6) | st.just([]) | st.just({})

    def paths(node, prefix=()):
        if isinstance(node, dict):
            for k, v in list(node.items())[:5]:
                yield from paths(v, (*prefix, k))
        elif isinstance(node, list):
            for i, v in enumerate(node[:5]):
                yield from paths(v, (*prefix, i))
        yield prefix

    candidates = list(paths(doc))

    @st.composite
    def mutate(draw):
        import copy

        new = copy.deepcopy(doc)
        path = draw(st.sampled_from(candidates))
        value = draw(leaf_values)
        if not path:
            return value
        parent = new
        for p in path[:-1]:
            parent = parent[p]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
        return new

    return mutate()


MINI = ("mini-retrieval", "mini-decorrelated", "mini-grounding", "mini-captions")


def _random_doc(benchmark_id: str):
    from vlbench.ground_truth import locate_ground_truth
    from vlbench.registry import registry

    reg = registry()
    b = reg.benchmark(benchmark_id)
    task = reg.task_of(b)
    gt = task.load_ground_truth(b, locate_ground_truth(b, None))
    return {"vlbench": 1, "benchmark": b.id, "task": b.task, "meta": {"method": "fuzz"},
            "predictions": task.random_predictions(gt, b, seed=0)}


_DOCS = {b: _random_doc(b) for b in MINI}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_every_task_reports_damage_cleanly(data, tmp_path: Path) -> None:
    """Each mini benchmark's valid chance-floor file, damaged at one random place: the validator
    either accepts it or raises its own clean error, never anything else."""
    benchmark_id = data.draw(st.sampled_from(MINI))
    doc = _DOCS[benchmark_id]
    predictions = data.draw(_mutations(doc["predictions"]) | json_values)
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps({**doc, "predictions": predictions}))
    try:
        validate(path)
    except InvalidSubmission as exc:
        assert exc.issues.total > 0
        assert all(i.pointer == "" or i.pointer.startswith("/") for i in exc.issues)
