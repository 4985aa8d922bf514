"""The rank a submission would take is the rank `leaderboard build` gives it on main's board with
it added (rank_board: order, equal scores and paired tests), also when it replaces an entry."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tests.harness.hub.conftest import BOARD, entry
from tests.harness.hub.standin import HubStandIn, Repo, blob_oid
from tests.harness.leaderboard.conftest import REPO
from vlbench.hub import connect
from vlbench.hub.board import MainBoards, Scoring
from vlbench.hub.pulls import Trees
from vlbench.leaderboard.build import Board, Entry, rank_board
from vlbench.leaderboard.cache import canonical
from vlbench.registry import registry
from vlbench.scoring import score_file
from vlbench.submission import ValidationOptions

pytest.importorskip("huggingface_hub")
RESAMPLES = 200


def scored(tmp: Path, name: str, data: bytes) -> Entry:
    path = tmp / name
    path.write_bytes(data)
    ev = score_file(path, bootstrap=RESAMPLES, seed=0)
    return Entry(f"mini-retrieval/{name}", canonical(ev.result), ev.items)


def test_rank_matches_rank_board(hub: HubStandIn, board: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = {name: (REPO / "submissions" / "mini-retrieval" / f"mini-odmap-{name}.json").read_bytes()
               for name in ("biased-seed0", "unbiased-seed2", "control-seed0", "unbiased-seed0", "synthetic-seed1")}
    files = {"a.json": entry(1, "A"), "b.json": entry(2, "B"), "c.json": entry(3, "C"),
             "biased.json": shipped["biased-seed0"], "unbiased.json": shipped["unbiased-seed2"],
             "same.json": entry(2, "B"),  # equal scores: the same rank
             "d.json": json.dumps({**json.loads(entry(4, "D")), "benchmark": "mini-decorrelated"}).encode()}
    hub.commit_to(board, "refs/heads/main", "maintainer", "entries",
                  {f"submissions/mini-retrieval/{n}": d for n, d in files.items()})
    monkeypatch.setenv("HF_TOKEN", "hf_maintainer")
    client = connect(BOARD, "dataset")
    main = board.refs["refs/heads/main"]
    boards = MainBoards(client, Trees(client), Scoring(ValidationOptions(), resamples=RESAMPLES), tmp_path / "work")
    benchmark = registry().benchmark("mini-retrieval")
    on_main = [scored(tmp_path, n, d) for n, d in files.items() if n != "d.json"]  # d.json is misplaced: left out
    on_main.append(scored(tmp_path, "random.json", board.files()["submissions/mini-retrieval/random.json"]))
    assert len(boards.ranked(main, benchmark)) == 7
    candidates = [(entry(2, "M2"), "new.json"), (entry(7, "M7"), "new.json"), (entry(7, "M7"), "a.json"),
                  (entry(2, "M2"), "b.json"), (shipped["control-seed0"], "new.json"),
                  (shipped["unbiased-seed0"], "biased.json"), (shipped["synthetic-seed1"], "unbiased.json")]
    shared = set()
    for data, name in candidates:
        candidate = scored(tmp_path, name, data)
        expected = Board(benchmark, [dataclasses.replace(e) for e in on_main if e.path != candidate.path] + [candidate])
        rank_board(expected, 0.05, RESAMPLES, 0)
        want = next(e.rank for e in expected.entries if e.path == candidate.path)
        placed = boards.place(main, benchmark, candidate, blob_oid(data))
        assert (placed.rank, placed.size) == (want, len(expected.entries)), name
        index = [e.path for e in expected.entries].index(candidate.path)
        assert placed.shared == (want != index + 1)
        shared.add(placed.shared)
    assert shared == {True, False}  # both kinds of rank were checked


def test_main_entries_come_from_the_builds_score_cache(hub: HubStandIn, board: Repo, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """With the score cache of a build of the same files (same resamples and seed), main's entries
    are not scored again, and rank the same."""
    from vlbench.leaderboard import build_and_publish

    files = {"a.json": entry(1, "A"), "b.json": entry(2, "B")}
    hub.commit_to(board, "refs/heads/main", "maintainer", "entries",
                  {f"submissions/mini-retrieval/{n}": d for n, d in files.items()})
    local = tmp_path / "submissions" / "mini-retrieval"
    local.mkdir(parents=True)
    for path, data in board.files().items():
        if path.startswith("submissions/mini-retrieval/"):
            (local / path.rsplit("/", 1)[1]).write_bytes(data)
    build_and_publish(tmp_path / "submissions", tmp_path / "leaderboard", resamples=RESAMPLES, quiet=True)
    monkeypatch.setenv("HF_TOKEN", "hf_maintainer")
    client = connect(BOARD, "dataset")
    main = board.refs["refs/heads/main"]
    benchmark = registry().benchmark("mini-retrieval")
    plain = MainBoards(client, Trees(client), Scoring(ValidationOptions(), resamples=RESAMPLES), tmp_path / "w1")
    expected = [(r.entry.path, r.entry.rank, r.entry.result.scores) for r in plain.ranked(main, benchmark)]

    def no_scoring(*args: object, **kwargs: object) -> None:
        raise AssertionError("scored although the cache holds it")

    monkeypatch.setattr("vlbench.hub.board.score_file", no_scoring)
    cached = MainBoards(client, Trees(client), Scoring(ValidationOptions(), resamples=RESAMPLES,
                                                       cache_dir=tmp_path / "leaderboard" / "cache"), tmp_path / "w2")
    assert [(r.entry.path, r.entry.rank, r.entry.result.scores) for r in cached.ranked(main, benchmark)] == expected
    assert len(expected) == 3
