"""The board intake ranks a submission on is the board `leaderboard build` publishes from main's
files with the pull request's entries added (or in place of the entries at their paths): the same
rows (a method's seeds one row), ranks, shared ranks, floors and reference marks, so the rank a
comment announces is the built board's."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.harness.hub.conftest import BOARD, entry, random_bytes
from tests.harness.hub.standin import HubStandIn, Repo
from tests.harness.leaderboard.conftest import REPO
from tests.tasks.retrieval.test_validation import load_gt, perfect_predictions
from vlbench.hub import connect
from vlbench.hub.board import MainBoards, Placement, Scoring
from vlbench.hub.pulls import Trees
from vlbench.leaderboard.build import Board, Entry, build
from vlbench.leaderboard.cache import canonical
from vlbench.registry import registry
from vlbench.scoring import score_file
from vlbench.submission import ValidationOptions

pytest.importorskip("huggingface_hub")
RESAMPLES = 200
FOLDER = "submissions/mini-retrieval"


def shipped(name: str) -> bytes:
    return (REPO / "submissions" / "mini-retrieval" / f"mini-odmap-{name}.json").read_bytes()


def scored(tmp: Path, name: str, data: bytes) -> tuple[Entry, str]:
    path = tmp / "candidates" / hashlib.sha256(data).hexdigest() / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    ev = score_file(path, bootstrap=RESAMPLES, seed=0)
    return Entry(f"mini-retrieval/{name}", canonical(ev.result), ev.items), hashlib.sha256(data).hexdigest()


def perfect() -> bytes:
    gt = load_gt("mini-retrieval", None)
    doc = {"vlbench": 1, "benchmark": "mini-retrieval", "task": "retrieval", "meta": {"method": "Oracle"},
           "predictions": perfect_predictions(gt)}
    return json.dumps(doc).encode()


def built_board(tmp: Path, files: dict[str, bytes]) -> Board:
    """`leaderboard build` of these repo files (a score cache shared by the calls, as a maintainer's)."""
    root = tmp / "build"
    shutil.rmtree(root, ignore_errors=True)
    for path, data in files.items():
        if path.startswith("submissions/"):
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)
    report = build(root / "submissions", resamples=RESAMPLES, seed=0, cache_dir=tmp / "cache", quiet=True)
    report.cache.write_used(tmp / "cache")
    return next(b for b in report.boards if b.benchmark.id == "mini-retrieval" and not b.retired)


def shown(board: Board) -> list[Any]:
    main = board.benchmark.main_score
    rows = [(r.name, r.rank, r.shown(main), r.ci95.get(main), [(e.path, e.reference, e.floor) for e in r.entries])
            for r in board.rows]
    return [rows, [(e.path, e.rank) for e in board.entries], board.floor_notes]


def placement(board: Board, path: str) -> Placement:
    row = next(r for r in board.rows if any(e.path == path for e in r.entries))
    return Placement(row.rank, len(board.rows), sum(r.rank == row.rank for r in board.rows) - 1, row.name,
                     len(row.entries), row.shown(board.benchmark.main_score))


def test_the_board_and_rank_are_leaderboard_builds(hub: HubStandIn, board: Repo, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    on_main = {
        "a.json": entry(1, "A"), "b.json": entry(2, "B", "team b"),
        "b-twin.json": entry(2, "B twin"),  # B's predictions: the same shown score, a shared rank
        "mini-odmap-biased-seed0.json": shipped("biased-seed0"), "mini-odmap-biased-seed1.json": shipped("biased-seed1"),
        "mini-odmap-unbiased-seed0.json": shipped("unbiased-seed0"),  # one seed so far: a row of its own
        "_odd.json": entry(3, "Odd"),  # no name a pull request may add, but the build puts it on the board
        "misplaced.json": entry(4, "D", benchmark="mini-decorrelated"),  # declares another benchmark: off
        "notes.txt": b"not a submission\n",
    }
    references = (f"mini-retrieval/random.json floor\nmini-retrieval/a.json\n"
                  f"mini-retrieval/b.json {hashlib.sha256(on_main['b.json']).hexdigest()}\n"
                  "mini-retrieval/b-twin.json 0000000000000000000000000000000000000000000000000000000000000000\n")
    hub.commit_to(board, "refs/heads/main", "maintainer", "entries",
                  {**{f"{FOLDER}/{n}": d for n, d in on_main.items()},
                   "submissions/REFERENCE_ENTRIES": references.encode()})
    main_files = board.files()
    assert main_files[f"{FOLDER}/random.json"] == random_bytes()
    monkeypatch.setenv("HF_TOKEN", "hf_maintainer")
    client = connect(BOARD, "dataset")
    main = board.refs["refs/heads/main"]
    boards = MainBoards(client, Trees(client), Scoring(ValidationOptions(), resamples=RESAMPLES), tmp_path / "work")
    benchmark = registry().benchmark("mini-retrieval")

    # main alone: the build's board (the reference list's marks, the floor, the odd name, the group)
    alone = built_board(tmp_path, main_files)
    assert shown(boards.board(main, benchmark)) == shown(alone)
    assert len(alone.entries) == 8 and len(alone.rows) == 7  # the biased arm's two seeds are one row
    assert {e.path: (e.reference, e.floor) for e in alone.entries}["mini-retrieval/b-twin.json"] == (False, False)

    pulls: list[list[tuple[str, bytes]]] = [
        [("new.json", entry(7, "M7"))],  # a new single run
        [("new.json", entry(2, "M2"))],  # B's scores: shares B's rank
        [("a.json", entry(7, "A"))],  # replaces a single run
        [("new.json", shipped("biased-seed2"))],  # joins the biased arm: its row becomes 3 seeds
        [("unbiased-1.json", shipped("unbiased-seed1"))],  # joins a single run: a new 2-seed row
        [("mini-odmap-biased-seed0.json", shipped("control-seed0"))],  # replaces a seed: leaves the group
        [("s0.json", shipped("synthetic-seed0")), ("s1.json", shipped("synthetic-seed1"))],  # a new method, 2 seeds
        [("random.json", entry(5, "random (chance floor)"))],  # replaces the floor (listed without a pin)
        [("perfect.json", perfect())],  # far above the rest: a rank of its own
    ]
    seen: set[str] = set()
    placed_before = []
    for files in pulls:
        candidates = [scored(tmp_path, name, data) for name, data in files]
        expected = built_board(tmp_path, {**main_files, **{f"{FOLDER}/{n}": d for n, d in files}})
        before = boards.memo.computed
        got = boards.board(main, benchmark, candidates)
        assert shown(got) == shown(expected), files[0][0]
        placed = boards.place(main, benchmark, candidates)
        assert placed == [placement(expected, e.path) for e, _ in candidates], files[0][0]
        placed_before.append((candidates, placed, boards.memo.computed - before))
        for p in placed:
            seen |= {"shared"} if p.shared_with else {"alone"}
            seen |= {"seeds"} if p.seeds > 1 else set()
        seen |= {"floor"} if any(e.floor and e.path == "mini-retrieval/random.json" for e in got.entries) else set()
    assert seen == {"shared", "alone", "seeds", "floor"}  # every kind of row was checked
    # main's statistics were computed once (main's board above): a pull request's board computes only
    # those of its own rows (a seeded row's interval, the tests against its new neighbours)
    assert all(1 <= n <= 3 for _, _, n in placed_before)
    # every board again: all its bootstrap statistics come from the run's memo, and the same ranks
    computed = boards.memo.computed
    for candidates, placed, _ in placed_before:
        assert boards.place(main, benchmark, candidates) == placed
    assert boards.memo.computed == computed
    # the misplaced file's bytes, now in their own benchmark's folder, are an entry there
    hub.commit_to(board, "refs/heads/main", "maintainer", "moved",
                  {"submissions/mini-decorrelated/d.json": on_main["misplaced.json"]})
    moved = board.refs["refs/heads/main"]
    decorrelated = registry().benchmark("mini-decorrelated")
    assert [e.path for e, _ in boards.main_entries(moved, decorrelated)] == ["mini-decorrelated/d.json"]
    assert "mini-retrieval/misplaced.json" not in [e.path for e, _ in boards.main_entries(moved, benchmark)]


def test_main_entries_come_from_the_builds_score_cache(hub: HubStandIn, board: Repo, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """With the score cache of a build of the same files (same resamples and seed), main's entries
    are not scored again, and the board is the same."""
    from vlbench.leaderboard import build_and_publish

    files = {"a.json": entry(1, "A"), "b.json": entry(2, "B")}
    hub.commit_to(board, "refs/heads/main", "maintainer", "entries",
                  {f"{FOLDER}/{n}": d for n, d in files.items()})
    local = tmp_path / "submissions" / "mini-retrieval"
    local.mkdir(parents=True)
    for path, data in board.files().items():
        if path.startswith(f"{FOLDER}/"):
            (local / path.rsplit("/", 1)[1]).write_bytes(data)
    build_and_publish(tmp_path / "submissions", tmp_path / "leaderboard", resamples=RESAMPLES, quiet=True)
    monkeypatch.setenv("HF_TOKEN", "hf_maintainer")
    client = connect(BOARD, "dataset")
    main = board.refs["refs/heads/main"]
    benchmark = registry().benchmark("mini-retrieval")
    plain = MainBoards(client, Trees(client), Scoring(ValidationOptions(), resamples=RESAMPLES), tmp_path / "w1")
    expected = shown(plain.board(main, benchmark))

    def no_scoring(*args: object, **kwargs: object) -> None:
        raise AssertionError("scored although the cache holds it")

    monkeypatch.setattr("vlbench.hub.board.score_file", no_scoring)
    cached = MainBoards(client, Trees(client), Scoring(ValidationOptions(), resamples=RESAMPLES,
                                                       cache_dir=tmp_path / "leaderboard" / "cache"), tmp_path / "w2")
    assert shown(cached.board(main, benchmark)) == expected
    assert len(expected[1]) == 3


def test_a_reference_list_the_build_refuses_is_no_board(hub: HubStandIn, board: Repo, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from vlbench.errors import UsageError

    hub.commit_to(board, "refs/heads/main", "maintainer", "a typo",
                  {"submissions/REFERENCE_ENTRIES": b"mini-retrieval/random.json not-a-sha256\n"})
    monkeypatch.setenv("HF_TOKEN", "hf_maintainer")
    client = connect(BOARD, "dataset")
    boards = MainBoards(client, Trees(client), Scoring(ValidationOptions(), resamples=RESAMPLES), tmp_path / "w")
    with pytest.raises(UsageError, match=r"main's submissions/REFERENCE_ENTRIES .* line 1: expected"):
        boards.board(board.refs["refs/heads/main"], registry().benchmark("mini-retrieval"))
