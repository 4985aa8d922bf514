"""The shipped mini ground truth: pinned, reproducible from the generator, with chance floors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from vlbench.benchmark import PACKAGE
from vlbench.registry import registry
from vlbench.submission import validate
from vlbench.tasks.mini import write_mini_benchmark
from vlbench.tasks.mini.files import SHA256
from vlbench.tasks.mini.ship import (
    DATA,
    MINI_BENCHMARKS,
    SUBMISSIONS,
    _prepared_file,
    _shipped_path,
)


def registered() -> list[str]:
    return [b for b in MINI_BENCHMARKS if b in registry().benchmarks]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_pins_match_the_shipped_files_and_stay_small() -> None:
    assert SHA256, "run python -m vlbench.tasks.mini.ship"
    total = 0
    for rel, digest in SHA256.items():
        path = DATA / rel
        assert sha(path) == digest, rel
        total += path.stat().st_size
    assert total < 5_000_000


def test_registered_mini_benchmarks_use_pinned_package_files() -> None:
    for bid in registered():
        b = registry().benchmark(bid)
        assert b.package_data == "vlbench.tasks.mini"
        for f in b.files:
            assert f.location == PACKAGE and f.sha256 == SHA256[_shipped_path(f.path)]


@pytest.fixture(scope="module")
def full_world(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("full") / "world"
    write_mini_benchmark(out, images=False)
    return out


def test_shipped_ground_truth_is_what_prepare_makes_from_the_generated_world(
    full_world, tmp_path
) -> None:
    """Regenerate the default world and rerun each task's own prepare: same bytes as shipped."""
    bids = registered()
    if not bids:
        pytest.skip("no mini benchmark registered yet")
    for bid in bids:
        b = registry().benchmark(bid)
        task = registry().task_of(b)
        returned = [Path(p) for p in task.prepare(b, str(full_world), tmp_path)]
        for f in b.files:
            rel = _shipped_path(f.path)
            assert (
                sha(_prepared_file(tmp_path / bid, rel, returned, len(b.files))) == SHA256[rel]
            ), bid


@pytest.mark.parametrize("bid", MINI_BENCHMARKS)
def test_random_submission_is_a_valid_reference_floor(bid: str) -> None:
    path = SUBMISSIONS / bid / "random.json"
    if bid not in registry().benchmarks:
        pytest.skip(f"{bid} not registered yet")
    doc = json.loads(path.read_text())
    assert doc["benchmark"] == bid
    assert doc["meta"]["method"] == "random (chance floor)"
    assert doc["meta"]["reference"] is True and doc["meta"]["baseline"] == "random"
    validated = validate(path)
    assert validated is not None
