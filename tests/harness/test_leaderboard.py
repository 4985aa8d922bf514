"""Leaderboard build: grouping, tie-aware ranks, baseline marks, escaping, skipped and invalid files."""

from __future__ import annotations

import json
from pathlib import Path

from tests.tasks.retrieval.test_validation import envelope, load_gt, perfect_predictions
from vlbench import leaderboard
from vlbench.cli import main
from vlbench.registry import registry


def write(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def test_build_ranks_marks_and_escapes(retrieval_data: Path, tmp_path: Path) -> None:
    reg = registry()
    b = reg.benchmark("coco-5k")
    gt = load_gt("coco-5k", retrieval_data)
    subs = tmp_path / "submissions"
    perfect = envelope(perfect_predictions(gt))
    perfect["meta"] = {"method": "oracle & friends", "team": "a|b", "url": "https://example.org/?a=1&b=2"}
    write(subs / "coco-5k" / "oracle.json", perfect)
    twin = envelope(perfect_predictions(gt))
    twin["meta"] = {"method": "oracle twin"}
    write(subs / "coco-5k" / "twin.json", twin)
    rand = envelope(reg.task_of(b).random_predictions(gt, b, seed=0))
    rand["meta"] = {"method": "random", "reference": True, "baseline": "random"}
    write(subs / "coco-5k" / "random.json", rand)
    write(subs / "coco-5k" / "broken.json", {"vlbench": 1})
    write(subs / "not-a-benchmark" / "x.json", perfect)
    write(subs / "flickr30k-1k" / "misfiled.json", perfect)  # declares coco-5k

    report = leaderboard.build(subs, retrieval_data, resamples=200)
    (board,) = report.boards
    ranks = {e.result.meta["method"]: e.rank for e in board.entries}
    assert ranks == {"oracle & friends": 1, "oracle twin": 1, "random": 3}
    assert {Path(p).name for p, _ in report.invalid} == {"broken.json", "misfiled.json"}
    assert [Path(p).name for p, _ in report.skipped] == ["x.json"]

    written = leaderboard.write(report, tmp_path / "lb")
    md = (tmp_path / "lb" / "README.md").read_text()
    page = (tmp_path / "lb" / "index.html").read_text()
    assert "oracle &amp; friends" in md and "a\\|b" in md and "random †" in md
    assert 'href="https://example.org/?a=1&amp;b=2"' in page
    assert "<script" not in page
    rows = json.loads((tmp_path / "lb" / "leaderboard.json").read_text())["entries"]
    assert [r["rank"] for r in rows] == [1, 1, 3] and rows[2]["reference"] is True
    assert len(written) == 4


def test_csv_neutralises_formulas(retrieval_data: Path, tmp_path: Path) -> None:
    gt = load_gt("coco-5k", retrieval_data)
    doc = envelope(perfect_predictions(gt))
    doc["meta"] = {"method": "=HYPERLINK(\"http://x\")"}
    write(tmp_path / "s" / "coco-5k" / "f.json", doc)
    report = leaderboard.build(tmp_path / "s", retrieval_data, resamples=0)
    assert "'=HYPERLINK" in leaderboard.to_csv(report)


def test_cli_build_exit_code(retrieval_data: Path, tmp_path: Path, capsys) -> None:
    gt = load_gt("coco-5k", retrieval_data)
    write(tmp_path / "s" / "coco-5k" / "ok.json", envelope(perfect_predictions(gt)))
    args = ["leaderboard", "build", "--submissions", str(tmp_path / "s"), "--out", str(tmp_path / "lb"),
            "--data-dir", str(retrieval_data), "--bootstrap", "50"]
    assert main(args) == 0
    write(tmp_path / "s" / "coco-5k" / "bad.json", {"vlbench": 1})
    assert main(args) == 1
    assert "invalid" in capsys.readouterr().err


def test_group_breakdown_from_a_shipped_mini_submission(tmp_path: Path) -> None:
    import shutil

    source = Path(__file__).resolve().parents[2] / "submissions" / "mini-decorrelated" / "random.json"
    (tmp_path / "s" / "mini-decorrelated").mkdir(parents=True)
    shutil.copy(source, tmp_path / "s" / "mini-decorrelated" / "random.json")
    report = leaderboard.build(tmp_path / "s", resamples=0)
    md = leaderboard.to_markdown(report)
    assert "| group | ODmAP@1 | ODmAP@5 | ODmAP@10 |" in md
    assert "| partner |" in md and "| control |" in md
    assert "ODmAP@1/partner" not in md.split("by group")[0]  # not a headline column
