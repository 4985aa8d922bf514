"""A small submissions folder on the bundled mini benchmarks, built once per test session."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vlbench.registry import locate_ground_truth, registry

REPO = Path(__file__).resolve().parents[3]


def write_json(path: Path, doc: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")


def mini_random(benchmark_id: str, seed: int, meta: dict) -> dict:
    reg = registry()
    b = reg.benchmark(benchmark_id)
    task = reg.task_of(b)
    gt = task.load_ground_truth(b, locate_ground_truth(b, None))
    return {"vlbench": 1, "benchmark": b.id, "task": b.task, "meta": meta,
            "predictions": task.random_predictions(gt, b, seed=seed)}


def make_submissions(root: Path) -> Path:
    """mini-retrieval: three random rankings (different seeds) with hostile metadata; mini-decorrelated:
    the shipped random entry (per-group breakdown); one invalid file; the reported rows; a reference list."""
    write_json(root / "mini-retrieval" / "alpha.json", mini_random("mini-retrieval", 1, {
        "method": "Alpha & \"friends\" 'x'", "team": "a|b & c", "url": "https://example.org/a?x=1&y=2",
        "paper": "https://example.org/paper?a=1&b=2", "reference": True}))
    write_json(root / "mini-retrieval" / "beta.json", mini_random("mini-retrieval", 2, {
        "method": "Beta", "team": "=cmd", "url": "http://example.org/beta"}))
    write_json(root / "mini-retrieval" / "gamma.json", mini_random("mini-retrieval", 3, {"method": "Gamma"}))
    write_json(root / "mini-retrieval" / "broken.json", {"vlbench": 1, "benchmark": "mini-retrieval"})
    (root / "mini-decorrelated").mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "submissions" / "mini-decorrelated" / "random.json", root / "mini-decorrelated" / "gamma.json")
    (root / "reported").mkdir()
    shutil.copy(REPO / "submissions" / "reported" / "odmap_paper.json", root / "reported" / "odmap_paper.json")
    (root / "REFERENCE_ENTRIES").write_text("# maintainers' list\nmini-retrieval/gamma.json\n", encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def built_board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The constructed folder, built and published once: returns the leaderboard folder."""
    from vlbench.leaderboard import build_and_publish

    root = tmp_path_factory.mktemp("lb")
    subs = make_submissions(root / "submissions")
    build_and_publish(subs, root / "leaderboard", resamples=200, quiet=True)
    return root / "leaderboard"
