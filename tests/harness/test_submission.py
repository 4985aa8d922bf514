"""`vlbench.submission`: the one way in (`validate(source, options)`), its options record, and
how in-memory documents, other tools' formats and bad options are told apart."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest

from vlbench.errors import InvalidSubmission, IssueList, UsageError
from vlbench.jsonio import DEFAULT_MAX_BYTES, DEFAULT_MAX_DECOMPRESSED, load_document
from vlbench.submission import (
    IN_MEMORY,
    ValidationOptions,
    options_of,
    validate,
    validate_document,
)

REPO = Path(__file__).resolve().parents[2]
RANDOM = REPO / "submissions" / "mini-retrieval" / "random.json"


def test_the_options_record_holds_the_whole_bundle_with_the_command_line_defaults() -> None:
    assert [f.name for f in fields(ValidationOptions)] == [
        "benchmark_id", "data_dir", "max_bytes", "max_decompressed", "max_errors",
        "benchmark_override", "input_format", "strict"]
    o = ValidationOptions()
    assert (o.max_bytes, o.max_decompressed, o.max_errors, o.strict) == (
        DEFAULT_MAX_BYTES, DEFAULT_MAX_DECOMPRESSED, 50, False)


def test_keyword_fields_override_the_record() -> None:
    base = ValidationOptions(benchmark_id="mini-retrieval", max_errors=7)
    assert options_of(base, {}) is base
    assert options_of(base, {"strict": True}) == ValidationOptions(
        benchmark_id="mini-retrieval", max_errors=7, strict=True)
    assert options_of(None, {"max_errors": 3}) == ValidationOptions(max_errors=3)
    with pytest.raises(TypeError):
        options_of(None, {"max_error": 3})  # a misspelt option is an error, not ignored


def test_a_shipped_submission_validates_the_same_by_record_or_by_keywords() -> None:
    by_record = validate(RANDOM, ValidationOptions(max_errors=5))
    by_keywords = validate(RANDOM, max_errors=5)
    assert by_record.benchmark.id == by_keywords.benchmark.id == "mini-retrieval"
    assert by_record.submission_sha256 == by_keywords.submission_sha256
    assert by_record.ground_truth_sha256 == by_keywords.ground_truth_sha256
    assert by_record.input_format is None and not by_record.bare


def test_a_document_read_from_memory_is_named_as_such(tmp_path: Path) -> None:
    doc = json.loads(RANDOM.read_text())
    loaded = load_document(doc, IssueList(), DEFAULT_MAX_BYTES)
    assert validate(loaded).benchmark.id == "mini-retrieval"
    del doc["predictions"]["image_to_text"]
    with pytest.raises(InvalidSubmission) as exc:
        validate(load_document(doc, IssueList(), DEFAULT_MAX_BYTES))
    assert exc.value.source == IN_MEMORY
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InvalidSubmission) as exc:
        validate(path)
    assert exc.value.source == str(path)


def test_a_bare_document_needs_the_benchmark_and_gets_it(tmp_path: Path) -> None:
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(json.loads(RANDOM.read_text())["predictions"]))
    with pytest.raises(InvalidSubmission) as exc:
        validate(bare)
    assert [i.code for i in exc.value.issues] == ["not_an_envelope"]
    sub = validate(bare, benchmark_id="mini-retrieval")
    assert sub.bare and sub.meta == {"method": "unnamed (bare predictions file)"}


def test_format_options_are_usage_errors_when_they_cannot_apply(tmp_path: Path) -> None:
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(json.loads(RANDOM.read_text())["predictions"]))
    with pytest.raises(UsageError, match="give --benchmark ID too"):
        validate(bare, input_format="mdetr")
    with pytest.raises(UsageError, match="--format is one of vlbench, not 'mdetr'"):
        validate(bare, benchmark_id="mini-retrieval", input_format="mdetr")
    # "vlbench" forces the own format: an envelope is read as one
    assert validate(RANDOM, input_format="vlbench").input_format is None


def test_validate_document_takes_the_same_options() -> None:
    doc = json.loads(RANDOM.read_text())
    with pytest.raises(InvalidSubmission) as exc:
        validate_document(doc, ValidationOptions(benchmark_id="mini-captions"))
    assert [i.code for i in exc.value.issues] == ["benchmark_mismatch"]
    with pytest.raises(UsageError, match="unknown benchmark 'nope'"):
        validate_document(doc, benchmark_id="nope")
