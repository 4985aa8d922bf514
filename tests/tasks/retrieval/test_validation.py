"""Malformed retrieval submissions: each gets its stable error code at the right JSON pointer."""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vlbench.backports import strict_zip
from vlbench.errors import InvalidSubmission
from vlbench.ground_truth import locate_ground_truth
from vlbench.registry import registry
from vlbench.submission import validate


def load_gt(benchmark_id: str, data_dir: Path):
    b = registry().benchmark(benchmark_id)
    return registry().task_of(b).load_ground_truth(b, locate_ground_truth(b, data_dir))


def perfect_predictions(gt) -> dict[str, Any]:
    """Ground-truth items first, then the rest of the query's fold, as JSON would carry them."""
    i2t, t2i = {}, {}
    image_fold, caption_fold = gt.image_fold, gt.caption_fold
    for i, image in enumerate(gt.images):
        own = [gt.captions[c] for c in range(len(gt.captions)) if gt.caption_image[c] == i]
        rest = [gt.captions[c] for c in range(len(gt.captions)) if gt.caption_image[c] != i and caption_fold[c] == image_fold[i]]
        i2t[image] = [int(x) for x in own + rest][:10]
    for c, caption in enumerate(gt.captions):
        own = gt.images[gt.caption_image[c]]
        rest = [im for j, im in enumerate(gt.images) if im != own and image_fold[j] == caption_fold[c]]
        t2i[caption] = [own, *rest][:10] if len(rest) >= 9 else [own, *rest]
    return {"image_to_text": i2t, "text_to_image": t2i}


def envelope(predictions: Any, benchmark: str = "coco-5k", **overrides: Any) -> dict[str, Any]:
    doc = {
        "vlbench": 1,
        "benchmark": benchmark,
        "task": "retrieval",
        "meta": {"method": "test method", "team": "vlbench tests"},
        "predictions": predictions,
    }
    doc.update(overrides)
    return doc


@pytest.fixture
def coco(retrieval_data: Path) -> dict[str, Any]:
    gt = load_gt("coco-5k", retrieval_data)
    return {"gt": gt, "doc": envelope(perfect_predictions(gt)), "data": retrieval_data}


def issues_of(path: Path, data_dir: Path, **kwargs: Any) -> list[tuple[str, str]]:
    with pytest.raises(InvalidSubmission) as info:
        validate(path, data_dir=data_dir, **kwargs)
    return [(i.code, i.pointer) for i in info.value.issues]


def first_image(gt) -> str:
    return gt.images[0]


def first_caption(gt) -> str:
    return gt.captions[0]


# Each case: (name, mutate(doc, gt) -> doc, expected code, expected pointer builder).
Mutation = Callable[[dict[str, Any], Any], Any]
CASES: list[tuple[str, Mutation, str, Callable[[Any], str]]] = [
    ("envelope version", lambda d, gt: {**d, "vlbench": 2}, "schema.const", lambda gt: "/vlbench"),
    ("no meta", lambda d, gt: {k: v for k, v in d.items() if k != "meta"}, "schema.required", lambda gt: ""),
    ("meta without method", lambda d, gt: {**d, "meta": {"team": "x"}}, "schema.required", lambda gt: "/meta"),
    ("html in method", lambda d, gt: {**d, "meta": {"method": "<script>alert(1)</script>"}}, "schema.pattern", lambda gt: "/meta/method"),
    ("html in team", lambda d, gt: {**d, "meta": {"method": "m", "team": "<b>us</b>"}}, "schema.pattern", lambda gt: "/meta/team"),
    ("control char in method", lambda d, gt: {**d, "meta": {"method": "a\u0007b"}}, "schema.pattern", lambda gt: "/meta/method"),
    ("javascript url", lambda d, gt: {**d, "meta": {"method": "m", "url": "javascript:alert(1)"}}, "schema.pattern", lambda gt: "/meta/url"),
    ("empty method", lambda d, gt: {**d, "meta": {"method": ""}}, "schema.minLength", lambda gt: "/meta/method"),
    ("unknown meta field", lambda d, gt: {**d, "meta": {"method": "m", "colour": "red"}}, "schema.additionalProperties", lambda gt: "/meta"),
    ("extra top-level field", lambda d, gt: {**d, "score": 100}, "schema.additionalProperties", lambda gt: ""),
    ("unknown benchmark", lambda d, gt: {**d, "benchmark": "coco-6k"}, "unknown_benchmark", lambda gt: "/benchmark"),
    ("wrong task", lambda d, gt: {**d, "task": "grounding"}, "task_mismatch", lambda gt: "/task"),
    ("task not a task", lambda d, gt: {**d, "task": "guessing"}, "schema.enum", lambda gt: "/task"),
    ("predictions a list", lambda d, gt: {**d, "predictions": []}, "schema.type", lambda gt: "/predictions"),
    ("missing direction", lambda d, gt: {**d, "predictions": {"image_to_text": d["predictions"]["image_to_text"]}}, "schema.required", lambda gt: "/predictions"),
    ("extra direction", lambda d, gt: {**d, "predictions": {**d["predictions"], "image_to_image": {}}}, "schema.additionalProperties", lambda gt: "/predictions"),
    ("ranked list is a string", lambda d, gt: _set(d, "image_to_text", first_image(gt), "1 2 3"), "schema.type", lambda gt: f"/predictions/image_to_text/{first_image(gt)}"),
    ("boolean id", lambda d, gt: _set_item(d, "image_to_text", first_image(gt), 0, True), "schema.type", lambda gt: f"/predictions/image_to_text/{first_image(gt)}/0"),
    ("integral float id", lambda d, gt: _set_item(d, "text_to_image", first_caption(gt), 0, 100000.0), "float_id", lambda gt: f"/predictions/text_to_image/{first_caption(gt)}/0"),
    ("fractional float id", lambda d, gt: _set_item(d, "text_to_image", first_caption(gt), 0, 100000.5), "schema.type", lambda gt: f"/predictions/text_to_image/{first_caption(gt)}/0"),
    ("null id", lambda d, gt: _set_item(d, "text_to_image", first_caption(gt), 2, None), "schema.type", lambda gt: f"/predictions/text_to_image/{first_caption(gt)}/2"),
    ("object id", lambda d, gt: _set_item(d, "text_to_image", first_caption(gt), 1, {"id": 1}), "schema.type", lambda gt: f"/predictions/text_to_image/{first_caption(gt)}/1"),
    ("unknown caption id", lambda d, gt: _set_item(d, "image_to_text", first_image(gt), 3, 123), "unknown_id", lambda gt: f"/predictions/image_to_text/{first_image(gt)}/3"),
    ("image id used as caption id", lambda d, gt: _set_item(d, "image_to_text", first_image(gt), 0, int(first_image(gt))), "unknown_id", lambda gt: f"/predictions/image_to_text/{first_image(gt)}/0"),
    ("non-canonical id string", lambda d, gt: _set_item(d, "text_to_image", first_caption(gt), 0, "0" + first_image(gt)), "unknown_id", lambda gt: f"/predictions/text_to_image/{first_caption(gt)}/0"),
    ("train image ranked", lambda d, gt: _set_item(d, "text_to_image", first_caption(gt), 4, 100050), "unknown_id", lambda gt: f"/predictions/text_to_image/{first_caption(gt)}/4"),
    ("unknown image query", lambda d, gt: _set(d, "image_to_text", "999", d["predictions"]["image_to_text"][first_image(gt)]), "unknown_query_id", lambda gt: "/predictions/image_to_text/999"),
    ("unknown caption query", lambda d, gt: _set(d, "text_to_image", "abc", d["predictions"]["text_to_image"][first_caption(gt)]), "unknown_query_id", lambda gt: "/predictions/text_to_image/abc"),
    ("missing image query", lambda d, gt: _drop(d, "image_to_text", first_image(gt)), "missing_query", lambda gt: f"/predictions/image_to_text/{first_image(gt)}"),
    ("missing caption query", lambda d, gt: _drop(d, "text_to_image", gt.captions[-1]), "missing_query", lambda gt: f"/predictions/text_to_image/{gt.captions[-1]}"),
    ("duplicate in ranked list", lambda d, gt: _dup(d, "image_to_text", first_image(gt), 5, 2), "duplicate_id_in_list", lambda gt: f"/predictions/image_to_text/{first_image(gt)}/5"),
    ("duplicate as int and string", lambda d, gt: _set_item(d, "text_to_image", first_caption(gt), 1, str(d["predictions"]["text_to_image"][first_caption(gt)][0])), "duplicate_id_in_list", lambda gt: f"/predictions/text_to_image/{first_caption(gt)}/1"),
    ("list too short", lambda d, gt: _set(d, "image_to_text", first_image(gt), d["predictions"]["image_to_text"][first_image(gt)][:9]), "list_too_short", lambda gt: f"/predictions/image_to_text/{first_image(gt)}"),
    ("empty list", lambda d, gt: _set(d, "text_to_image", first_caption(gt), []), "list_too_short", lambda gt: f"/predictions/text_to_image/{first_caption(gt)}"),
    ("predictions null", lambda d, gt: {**d, "predictions": None}, "schema.type", lambda gt: "/predictions"),
    ("direction a list", lambda d, gt: {**d, "predictions": {**d["predictions"], "text_to_image": []}}, "schema.type", lambda gt: "/predictions/text_to_image"),
]


def _set(doc: dict, direction: str, key: str, value: Any) -> dict:
    doc = copy.deepcopy(doc)
    doc["predictions"][direction][key] = value
    return doc


def _set_item(doc: dict, direction: str, key: str, pos: int, value: Any) -> dict:
    doc = copy.deepcopy(doc)
    doc["predictions"][direction][key][pos] = value
    return doc


def _drop(doc: dict, direction: str, key: str) -> dict:
    doc = copy.deepcopy(doc)
    del doc["predictions"][direction][key]
    return doc


def _dup(doc: dict, direction: str, key: str, pos: int, source: int) -> dict:
    doc = copy.deepcopy(doc)
    ranked = doc["predictions"][direction][key]
    ranked[pos] = ranked[source]
    return doc


def test_perfect_submission_is_valid(coco, write_json) -> None:
    sub = validate(write_json(coco["doc"]), data_dir=coco["data"])
    assert sub.benchmark.id == "coco-5k"


@pytest.mark.parametrize(("name", "mutate", "code", "where"), CASES, ids=[c[0] for c in CASES])
def test_malformed_submission(coco, write_json, name, mutate, code, where) -> None:
    doc = mutate(coco["doc"], coco["gt"])
    found = issues_of(write_json(doc), coco["data"])
    assert (code, where(coco["gt"])) in found, found


RAW_CASES: list[tuple[str, bytes, str]] = [
    ("syntax error", b'{"vlbench": 1,', "json_syntax"),
    ("empty file", b"", "json_syntax"),
    ("duplicate key", b'{"vlbench": 1, "vlbench": 1}', "duplicate_key"),
    ("NaN literal", b'{"vlbench": NaN}', "non_finite_literal"),
    ("Infinity literal", b'[1, Infinity]', "non_finite_literal"),
    ("negative Infinity", b'[-Infinity]', "non_finite_literal"),
    ("not UTF-8", '{"meta": "caf\u00e9"}'.encode("latin-1"), "not_utf8"),
    ("lone surrogate", b'{"vlbench": 1, "meta": {"method": "\\ud800"}}', "lone_surrogate"),
    ("huge integer", b"[" + b"9" * 5000 + b"]", "json_number"),
    ("too deep", b"[" * 100000 + b"]" * 100000, "json_too_deep"),
    ("top-level list without --benchmark", b"[]", "not_an_envelope"),
    ("object without envelope", b'{"image_to_text": {}}', "not_an_envelope"),
]


@pytest.mark.parametrize(("name", "raw", "code"), RAW_CASES, ids=[c[0] for c in RAW_CASES])
def test_malformed_bytes(tmp_path: Path, retrieval_data: Path, name: str, raw: bytes, code: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(raw)
    codes = [c for c, _ in issues_of(path, retrieval_data)]
    assert code in codes


def test_file_too_large(coco, write_json) -> None:
    path = write_json(coco["doc"])
    assert ("file_too_large", "") in issues_of(path, coco["data"], max_bytes=1000)


def test_gzip_bomb_is_refused_without_inflating(tmp_path: Path, retrieval_data: Path) -> None:
    path = tmp_path / "bomb.json.gz"
    # 64 MiB of spaces compresses to about 64 KiB; the cap stops inflation at 1 MiB.
    with gzip.open(path, "wb") as fh:
        for _ in range(64):
            fh.write(b" " * (1 << 20))
    assert path.stat().st_size < 200_000
    assert ("decompressed_too_large", "") in issues_of(path, retrieval_data, max_decompressed=1 << 20)


def test_corrupt_and_truncated_gzip(coco, tmp_path: Path) -> None:
    data = gzip.compress(json.dumps(coco["doc"]).encode())
    for name, blob in (("truncated", data[: len(data) // 2]), ("corrupt", data[:20] + b"\x00" * 50 + data[70:])):
        path = tmp_path / f"{name}.json.gz"
        path.write_bytes(blob)
        assert "bad_gzip" in [c for c, _ in issues_of(path, coco["data"])], name


def test_gzip_submission_is_accepted(coco, tmp_path: Path) -> None:
    path = tmp_path / "ok.json.gz"
    path.write_bytes(gzip.compress(json.dumps(coco["doc"]).encode()))
    assert validate(path, data_dir=coco["data"]).benchmark.id == "coco-5k"


def test_benchmark_flag_mismatch(coco, write_json) -> None:
    found = issues_of(write_json(coco["doc"]), coco["data"], benchmark_id="flickr30k-1k")
    assert ("benchmark_mismatch", "/benchmark") in found


def test_bare_predictions_with_benchmark_flag(coco, write_json) -> None:
    sub = validate(write_json(coco["doc"]["predictions"]), data_dir=coco["data"], benchmark_id="coco-5k")
    assert sub.bare and sub.meta["method"].startswith("unnamed")


def test_every_problem_is_listed_across_layers(coco, write_json) -> None:
    doc = _set_item(coco["doc"], "image_to_text", first_image(coco["gt"]), 0, 123)
    doc = _drop(doc, "text_to_image", first_caption(coco["gt"]))
    doc["meta"] = {"method": "<i>x</i>"}
    doc = _set_item(doc, "text_to_image", coco["gt"].captions[1], 0, True)
    codes = {c for c, _ in issues_of(write_json(doc), coco["data"])}
    assert {"unknown_id", "missing_query", "schema.pattern", "schema.type"} <= codes


def test_error_list_is_capped_but_counted(coco, write_json) -> None:
    doc = copy.deepcopy(coco["doc"])
    doc["predictions"]["text_to_image"] = {}
    with pytest.raises(InvalidSubmission) as info:
        validate(write_json(doc), data_dir=coco["data"], max_errors=5)
    issues = info.value.issues
    assert len(issues.kept) == 5
    assert issues.total == len(coco["gt"].captions)
    assert issues.omitted == issues.total - 5
    assert "more" in issues.report()


def test_coco_1k_needs_ten_ids_inside_the_fold(retrieval_data: Path, write_json) -> None:
    gt5 = load_gt("coco-5k", retrieval_data)
    gt1 = load_gt("coco-1k", retrieval_data)
    # A 5K-style ranking of the first image whose top 10 lie outside its fold.
    doc = envelope(perfect_predictions(gt1), benchmark="coco-1k")
    validate(write_json(doc), data_dir=retrieval_data)
    other_fold = [int(c) for c, f in strict_zip(gt5.captions, gt1.caption_fold) if f != 0]
    doc = _set(doc, "image_to_text", gt1.images[0], other_fold[:10] + doc["predictions"]["image_to_text"][gt1.images[0]][:3])
    found = issues_of(write_json(doc), retrieval_data)
    assert ("list_too_short", f"/predictions/image_to_text/{gt1.images[0]}") in found


def test_missing_ground_truth_is_a_usage_error(coco, write_json, tmp_path: Path) -> None:
    from vlbench.errors import UsageError

    with pytest.raises(UsageError, match="vlbench data prepare coco-5k"):
        validate(write_json(coco["doc"]), data_dir=tmp_path / "empty")
