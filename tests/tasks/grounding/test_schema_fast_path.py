"""`fast_structure` may skip the JSON Schema pass only when the schema would accept."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from vlbench.errors import IssueList
from vlbench.registry import registry
from vlbench.schema import validator_for
from vlbench.tasks.grounding import TASK
from vlbench.tasks.grounding.checks import parse_predictions
from vlbench.tasks.grounding.structure import structure_ok

VALIDATOR = validator_for(str(TASK.schema_path()))

digits = st.from_regex(r"[0-9]{1,4}", fullmatch=True)
odd_keys = st.sampled_from(["", "a", "1\n", "\u0663", "12345678", "-1", "1.0", " 1"])
keys = st.one_of(digits, digits, odd_keys)
numbers = st.one_of(
    st.integers(-5, 10**6), st.floats(allow_nan=False, allow_infinity=False), st.integers(10**20, 10**30)
)
odd_values = st.one_of(st.booleans(), st.none(), st.text(max_size=2), st.just([]), st.just({}))
values = st.one_of(numbers, numbers, numbers, odd_values)
boxes_valid = st.lists(st.lists(numbers, min_size=4, max_size=4), max_size=5)
boxes_any = st.one_of(
    boxes_valid,
    st.lists(st.lists(values, min_size=3, max_size=5), max_size=5),
    st.lists(st.lists(numbers, min_size=4, max_size=4), min_size=101, max_size=102),
    odd_values,
)
phrase_ids = st.one_of(st.from_regex(r"[0-9]{1,12}", fullmatch=True), st.integers(), odd_keys)


def entries(boxes, extra: bool):
    optional = {"scores": st.lists(numbers if not extra else values, max_size=5),
                "phrase_id": phrase_ids if extra else st.from_regex(r"[0-9]{1,12}", fullmatch=True)}
    if extra:
        optional["other"] = st.integers()
    return st.fixed_dictionaries({"boxes": boxes}, optional=optional)


def documents(key_strategy, entry_strategy, leaf_noise: bool):
    entry = st.one_of(entry_strategy, odd_values) if leaf_noise else entry_strategy
    phrases = st.dictionaries(key_strategy, entry, max_size=3)
    sentences = st.dictionaries(key_strategy, phrases, max_size=3)
    return st.dictionaries(key_strategy, sentences, max_size=3)


valid_docs = documents(digits, entries(boxes_valid, extra=False), leaf_noise=False)
any_docs = st.one_of(
    valid_docs,
    documents(keys, entries(boxes_any, extra=True), leaf_noise=True),
    documents(keys, st.fixed_dictionaries({}, optional={"scores": st.just([1])}), leaf_noise=False),
    odd_values,
)


@settings(max_examples=400, deadline=None)
@given(any_docs)
def test_fast_ok_implies_schema_accepts(doc):
    if structure_ok(doc):
        assert VALIDATOR.is_valid(doc), json.dumps(doc)[:500]


@settings(max_examples=150, deadline=None)
@given(valid_docs)
def test_valid_documents_take_the_fast_path(doc):
    assert VALIDATOR.is_valid(doc)
    assert structure_ok(doc)


@settings(max_examples=200, deadline=None)
@given(any_docs)
def test_check_never_raises(hand_ground_truth, doc):
    benchmark = registry().benchmark("flickr30k-entities-test")
    issues = IssueList()
    parsed = parse_predictions(doc, hand_ground_truth, benchmark, issues)
    assert len(parsed.phrase) == len(parsed.boxes) == len(parsed.rank)


def test_bools_and_numeric_strings_never_take_the_fast_path():
    for bad in (True, False, "1.5", None, [1]):
        doc = {"1": {"0": {"0": {"boxes": [[0, 1, 2, 3], [1, 0, 3, bad]]}}}}
        assert not structure_ok(doc)
        assert not VALIDATOR.is_valid(doc)
    assert structure_ok({"1": {"0": {"0": {"boxes": [[0, 1, 2.5, 3], [1, 0, 3, 10**20]]}}}})
