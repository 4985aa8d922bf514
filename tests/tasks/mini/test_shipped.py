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
from vlbench.tasks.mini.build import world_config
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
def full_worlds(tmp_path_factory) -> dict[str, Path]:
    """Each mini world a registered benchmark names (`mini_world`; default v2), annotations only."""
    root = tmp_path_factory.mktemp("full")
    names = {registry().benchmark(b).option("mini_world", "v2") for b in registered()}
    worlds = {name: root / name for name in sorted(names)}
    for name, out in worlds.items():
        write_mini_benchmark(out, config=world_config(name), images=False)
    return worlds


def test_shipped_ground_truth_is_what_prepare_makes_from_the_generated_world(
    full_worlds, tmp_path
) -> None:
    """Regenerate each benchmark's world and rerun its task's own prepare: same bytes as shipped."""
    bids = registered()
    if not bids:
        pytest.skip("no mini benchmark registered yet")
    for bid in bids:
        b = registry().benchmark(bid)
        task = registry().task_of(b)
        world = full_worlds[b.option("mini_world", "v2")]
        returned = [Path(p) for p in task.prepare(b, str(world), tmp_path)]
        for f in b.files:
            rel = _shipped_path(f.path)
            assert (
                sha(_prepared_file(tmp_path / bid, rel, returned, len(b.files))) == SHA256[rel]
            ), bid


def test_mini_decorrelated_v3_is_the_v3_world_with_matched_pairs_kept() -> None:
    """The shipped v3 manifest: directed (cue, dependent) pairs, every query in a matched pair of
    one partner removal (a dependent removed while its cue stays) and one control with the same
    remaining classes, at least 300 pairs, one query per source image."""
    from vlbench.tasks.mini.build import CUE_DEPENDENT

    b = registry().benchmark("mini-decorrelated")
    assert (b.version, b.option("mini_world")) == ("3.0", "v3")
    doc = json.loads((DATA / _shipped_path(b.files[0].path)).read_text())
    assert doc["params"]["directed"] is True
    assert [tuple(p) for p in doc["params"]["partner_pairs"]] == list(CUE_DEPENDENT)
    queries = {q["id"]: q for q in doc["queries"]}
    partners = [q for q in queries.values() if q["group"] == "partner"]
    assert len(partners) >= 300 and len(queries) == 2 * len(partners)
    sources = [q["source_image_id"] for q in queries.values()]
    assert len(set(sources)) == len(sources)
    for p in partners:
        c = queries[p["matched_query_id"]]
        assert c["group"] == "control" and c["matched_query_id"] == p["id"]
        assert sorted(c["present_classes"]) == sorted(p["present_classes"])
        assert any(cue in p["present_classes"] and dep in p["removed_classes"] for cue, dep in CUE_DEPENDENT)
        assert not {x for pair in CUE_DEPENDENT for x in pair} & set(c["removed_classes"])  # free classes only


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
