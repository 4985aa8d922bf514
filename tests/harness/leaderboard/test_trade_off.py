"""The data behind the trade-off plot (`vlbench.leaderboard.trade_off`): a point pairs one model, by
its recorded provenance, on two benchmarks of one world; everything else is left out, with why."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest

from tests.harness.leaderboard.conftest import REPO
from vlbench.leaderboard.build import Board, BuildReport, Entry
from vlbench.leaderboard.cache import ScoreCache
from vlbench.leaderboard.ranking import rank_board
from vlbench.leaderboard.trade_off import NO_PROVENANCE, UNHASHED_WEIGHTS, model_identity, panels
from vlbench.registry import registry
from vlbench.results import ResultRecord


def _meta(benchmark: str, seed: int) -> dict:
    """A committed baseline submission's meta, as `vlbench baseline run` writes it."""
    path = REPO / "submissions" / benchmark / f"mini-odmap-synthetic-seed{seed}.json"
    return json.loads(path.read_text(encoding="utf-8"))["meta"]


def test_model_identity_is_the_recorded_provenance_not_the_name() -> None:
    dec, shapes = _meta("mini-decorrelated", 1), _meta("mini-shapes-retrieval", 1)
    assert model_identity(dec)[0] is not None and model_identity(dec) == model_identity(shapes)
    # how a benchmark was read is not the model: image folders, encoding batch sizes, the command
    other = copy.deepcopy(dec)
    recipe = other["extra"]["recipe"]
    recipe["config"].update(image_root="/data/x", query_image_root="/data/q", embed_batch_size=64, chunk_size=7)
    recipe["command"], recipe["wall_time_s"], recipe["device"] = "another command", 1.0, "cuda"
    recipe["pretrained_file"]["file"] = "/elsewhere/checkpoint.pt"
    recipe["config"]["pretrained"] = "/elsewhere/checkpoint.pt"  # the same bytes under another path
    assert model_identity(other) == model_identity(dec)
    # the seed, the training, the starting weights or the architecture make another model
    for change in (lambda r: r.update(seed=2), lambda r: r["config"].update(steps=601),
                   lambda r: r["train"].update(final_loss=1.0),
                   lambda r: r["pretrained_file"].update(sha256="0" * 64),
                   lambda r: r["model_config"]["vision_cfg"].update(width=32)):
        changed = copy.deepcopy(dec)
        change(changed["extra"]["recipe"])
        assert model_identity(changed)[0] not in (None, model_identity(dec)[0])
    # a name alone proves nothing; a local weights file without its sha256 is unknown weights
    assert model_identity({"method": dec["method"]}) == (None, NO_PROVENANCE)
    unhashed = copy.deepcopy(dec)
    del unhashed["extra"]["recipe"]["pretrained_file"]
    assert model_identity(unhashed) == (None, UNHASHED_WEIGHTS)
    tagged = copy.deepcopy(unhashed)
    tagged["extra"]["recipe"]["config"]["pretrained"] = "laion2b_s34b_b79k"  # an open_clip tag: fixed weights
    assert model_identity(tagged)[0] is not None


def _entry(board: str, path: str, method: str, meta: dict | None, x: float) -> Entry:
    b = registry().benchmark(board)
    scores = {"ODmAP@1": x} if b.task == "decorrelated_retrieval" else {"i2t_R@1": x, "RSUM": 600 * x}
    full = {**(meta or {}), "method": method, "team": "t"}
    return Entry(path, ResultRecord(b.id, b.task, b.version, "x", "s", "g", full, scores, b.main_score), {})


def _report(*boards: Board) -> BuildReport:
    for board in boards:
        rank_board(board, alpha=0.05, resamples=0, seed=0)
    return BuildReport(list(boards), [], [], ScoreCache(None))


def test_pairs_are_one_model_on_the_two_boards_of_one_world() -> None:
    dec = Board(registry().benchmark("mini-decorrelated"), [
        _entry("mini-decorrelated", "d/s0.json", "S (seed 0)", _meta("mini-decorrelated", 0), 0.90),
        _entry("mini-decorrelated", "d/s1.json", "S (seed 1)", _meta("mini-decorrelated", 1), 0.80),
        _entry("mini-decorrelated", "d/s2.json", "S (seed 2)", _meta("mini-decorrelated", 2), 0.70),
        _entry("mini-decorrelated", "d/random.json", "random", None, 0.18),
    ])
    shapes = Board(registry().benchmark("mini-shapes-retrieval"), [
        _entry("mini-shapes-retrieval", "r/s0.json", "S (seed 0)", _meta("mini-shapes-retrieval", 0), 0.30),
        _entry("mini-shapes-retrieval", "r/s1.json", "S (seed 1)", _meta("mini-shapes-retrieval", 1), 0.20),
        # the same method name, but a model trained otherwise: not seed 2 of the decorrelated board
        _entry("mini-shapes-retrieval", "r/s2.json", "S (seed 2)",
               {"extra": {"recipe": {**_meta("mini-shapes-retrieval", 2)["extra"]["recipe"], "seed": 7}}}, 0.10),
        _entry("mini-shapes-retrieval", "r/random.json", "random", None, 0.0),
    ])
    [panel] = panels(_report(dec, shapes))
    assert (panel.y_benchmark, panel.x_benchmark, panel.world) == ("mini-decorrelated", "mini-shapes-retrieval", "v3")
    [point] = panel.scored
    assert [(p.y_submission, p.x_submission) for p in point.pairs] == [("d/s0.json", "r/s0.json"),
                                                                       ("d/s1.json", "r/s1.json")]
    assert (point.x, point.y, point.seeds, point.of_seeds) == (25.0, 85.0, 2, 3)
    assert point.x_range == (20.0, 30.0) and point.y_range == (80.0, 90.0)
    assert point.label == "S (mean of 2 of its 3 seeds)"
    left = {(g.submission, g.reason) for g in panel.left_out}
    assert left == {("d/random.json", NO_PROVENANCE), ("r/random.json", NO_PROVENANCE),
                    ("d/s2.json", "no submission of the same model on mini-shapes-retrieval"),
                    ("r/s2.json", "no submission of the same model on mini-decorrelated")}
    note = panel.note()
    assert note.startswith("mini-decorrelated vs mini-shapes-retrieval: 4 of 8 scored submissions paired (2 models")
    assert f"left out 4: 2 with {NO_PROVENANCE}: d/random.json, r/random.json; 1 with no submission of the same model" in note
    doc = panel.to_dict()
    assert doc["scored"][0]["pairs"][0]["model"] == model_identity(_meta("mini-decorrelated", 0))[0]
    assert doc["note"] == note and json.loads(json.dumps(doc)) == doc


def test_boards_of_two_worlds_pair_nothing() -> None:
    """A trade-off record naming a benchmark of another world (v3 queries against the v2 world's
    retrieval): no point, whatever the names and provenance say; the note says why."""
    v3 = registry().benchmark("mini-decorrelated")
    against_v2 = dataclasses.replace(v3, trade_off=dataclasses.replace(v3.trade_off, against="mini-retrieval"))
    dec = Board(against_v2, [_entry("mini-decorrelated", "d/s0.json", "S (seed 0)", _meta("mini-decorrelated", 0), 0.9)])
    v2 = Board(registry().benchmark("mini-retrieval"), [
        _entry("mini-retrieval", "r/s0.json", "S (seed 0)", _meta("mini-decorrelated", 0), 0.3)])
    [panel] = panels(_report(dec, v2))
    assert panel.scored == [] and len(panel.left_out) == 2
    assert all("different mini worlds (v3 and none)" in g.reason for g in panel.left_out)
    from vlbench.leaderboard.plot import render_svg

    assert render_svg(_report(dec, v2)) is None  # nothing to draw


def test_a_model_with_two_submissions_on_a_board_is_not_guessed() -> None:
    meta = _meta("mini-decorrelated", 0)
    dec = Board(registry().benchmark("mini-decorrelated"), [
        _entry("mini-decorrelated", "d/a.json", "A", meta, 0.9), _entry("mini-decorrelated", "d/b.json", "B", meta, 0.8)])
    shapes = Board(registry().benchmark("mini-shapes-retrieval"), [
        _entry("mini-shapes-retrieval", "r/a.json", "A", _meta("mini-shapes-retrieval", 0), 0.3)])
    [panel] = panels(_report(dec, shapes))
    assert panel.scored == [] and {g.submission for g in panel.left_out} == {"d/a.json", "d/b.json", "r/a.json"}
    assert all("several submissions" in g.reason for g in panel.left_out)


def test_committed_plot_pairs_one_model_on_two_benchmarks_of_one_world() -> None:
    """The committed board's plot data: every pair is one model (its two submission files' recorded
    provenance, read again here) on two benchmarks of the same world; the legend counts the pairs."""
    doc = json.loads((REPO / "leaderboard" / "leaderboard.json").read_text(encoding="utf-8"))
    reg = registry()
    pairs = 0
    for panel in doc["plot"]:
        y, x = reg.benchmark(panel["y_benchmark"]), reg.benchmark(panel["x_benchmark"])
        assert y.option("mini_world") == x.option("mini_world") == panel["mini_world"]
        for point in panel["scored"]:
            assert point["seeds"] == len(point["pairs"]) and f"mean of {len(point['pairs'])} seeds" in point["label"]
            for pair in point["pairs"]:
                metas = [json.loads((REPO / "submissions" / pair[f"{side}_submission"]).read_text(encoding="utf-8"))
                         for side in ("y", "x")]
                assert [m["benchmark"] for m in metas] == [y.id, x.id]
                recipes = [m["meta"]["extra"]["recipe"] for m in metas]
                assert recipes[0]["seed"] == recipes[1]["seed"] and recipes[0]["recipe"] == recipes[1]["recipe"]
                assert recipes[0]["config"] == recipes[1]["config"]
                assert recipes[0].get("pretrained_file", {}).get("sha256") == recipes[1].get("pretrained_file", {}).get("sha256")
                assert recipes[0]["train"]["final_loss"] == recipes[1]["train"]["final_loss"]
                assert model_identity(metas[0]["meta"])[0] == pair["model"]
                pairs += 1
    assert pairs == 35  # five arms and two dose arms, five seeds each, on mini-decorrelated and mini-shapes-retrieval


@pytest.mark.parametrize("field", ["y_submission", "x_submission"])
def test_committed_plot_never_pairs_the_retired_v2_runs(field: str) -> None:
    doc = json.loads((REPO / "leaderboard" / "leaderboard.json").read_text(encoding="utf-8"))
    used = [q[field] for p in doc["plot"] for point in p["scored"] for q in point["pairs"]]
    assert used and not any(path.startswith(("mini-retrieval/", "retired/")) for path in used)
