"""The page's and the plot's view of a board, without a browser: seeds as one method, board order,
short citations, one plot point per method."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from vlbench.backports import strict_zip
from vlbench.item_table import ItemTable
from vlbench.leaderboard.build import Board, Entry
from vlbench.leaderboard.groups import family_key, method_groups, split_seed
from vlbench.leaderboard.plot import panels
from vlbench.leaderboard.sources import ReportedRow
from vlbench.registry import registry
from vlbench.results import ResultRecord


@pytest.mark.parametrize(("method", "expected"), [
    ("mini-odmap arm 1 biased (seed 0)", ("mini-odmap arm 1 biased", 0)),
    ("CLIP ft seed=12", ("CLIP ft", 12)),
    ("CLIP ft - seed 3", ("CLIP ft", 3)),
    ("CLIP ft [Seed 4]", ("CLIP ft", 4)),
    ("seed 3", ("seed 3", None)),  # nothing left without the marker: not a seed of anything
    ("CLIP seeded", ("CLIP seeded", None)),
    ("ViT-B/32 zero-shot", ("ViT-B/32 zero-shot", None)),
])
def test_split_seed(method: str, expected: tuple[str, int | None]) -> None:
    assert split_seed(method) == expected


def _entry(path: str, method: str, score: float, team: str = "t", rank: int = 1) -> Entry:
    b = registry().benchmark("mini-retrieval")
    scores = {k: score for k in ("i2t_R@1", "i2t_R@5", "i2t_R@10", "t2i_R@1", "t2i_R@5", "t2i_R@10")}
    scores["RSUM"] = 600 * score
    result = ResultRecord(b.id, b.task, b.version, "x", "s", "g", {"method": method, "team": team}, scores,
                          b.main_score)
    table = ItemTable(ids=["0"], columns=["R@1"], values=np.zeros((1, 1)))
    return Entry(path, result, {"image_to_text": table}, rank=rank)


def test_seeds_of_one_method_are_one_group() -> None:
    board = Board(registry().benchmark("mini-retrieval"), [
        _entry("a1", "A (seed 1)", 0.30, rank=1), _entry("b", "B", 0.25, rank=1), _entry("a0", "A (seed 0)", 0.20, rank=3),
        _entry("c0", "C (seed 0)", 0.1, rank=4),  # one seed alone: a plain row
        _entry("a2", "a  (seed 2)", 0.10, team="other", rank=4),  # another team: not the same method
    ])
    groups = method_groups(board)
    assert [(g.name, [e.path for e in g.entries]) for g in groups] == [
        ("A", ["a0", "a1"]), ("B", ["b"]), ("C (seed 0)", ["c0"]), ("a  (seed 2)", ["a2"])]
    a = groups[0]
    assert a.seeded and a.mean("i2t_R@1") == pytest.approx(0.25) and a.spread("i2t_R@1") == (0.20, 0.30)
    assert a.ranks == (1, 3) and not groups[1].seeded and groups[1].spread("i2t_R@1") is None
    assert family_key("A  (seed 7)") == family_key("a")


def test_short_citation() -> None:
    def row(authors: str, year: str = "2023", provenance: str = "Table 2, columns R@1") -> ReportedRow:
        return ReportedRow("coco-5k", "M", provenance, "A very long paper title about retrieval and grounding",
                           "https://x.org", "reported/p.json", {}, authors, year)

    assert row("Jae Myung Kim, A. Sophia Koepke, Cordelia Schmid").citation == "Kim et al. 2023, Table 2"
    assert row("Ada Lovelace and Alan Turing").citation == "Lovelace and Turing 2023, Table 2"
    assert row("Grace Hopper", year="").citation == "Hopper, Table 2"
    assert row("").citation == "A very long paper title about retrieval… 2023, Table 2"


def test_built_page_order_citations_and_seed_rows(page_board: Path) -> None:
    html = (page_board / "index.html").read_text(encoding="utf-8")
    sections = re.findall(r'<section id="(board-[^"]+)"><h2>([^<]+) <small>\(([^)]*)\)', html)
    ids = [name for _, name, _ in sections]
    retired = [name for _, name, about in sections if "retired" in about]
    assert ids[:2] == ["mini-decorrelated", "mini-retrieval"] and retired == ["mini-decorrelated"]
    assert ids[-1] == "mini-decorrelated" and "coco-5k" in ids[2:-1]  # scored, paper-only, retired
    nav = re.findall(r'<a href="#board-[^"]+">([^<]+)</a>', html)
    assert len(nav) == len(set(nav)) and nav[-1] == "mini-decorrelated v1.0 (retired)"
    assert "Kim et al. 2023, Table 1" in html and "columns COCO" not in html.split("<nav>")[1].split("title=")[0]
    assert html.count('class="sub seed scored"') == 3 and html.count('class="scored seedgroup"') == 1
    readme = (page_board / "README.md").read_text(encoding="utf-8")
    assert "[Kim et al. 2023, Table 1](https://arxiv.org/abs/2304.03391)" in readme
    assert readme.index("## mini-retrieval") < readme.index("## coco-5k ") < readme.index("mini-decorrelated (v1.0")


def test_plot_has_one_point_per_method() -> None:
    from vlbench.leaderboard.build import BuildReport
    from vlbench.leaderboard.cache import ScoreCache
    from vlbench.leaderboard.plot import render_png

    retrieval = Board(registry().benchmark("mini-retrieval"), [
        _entry("r/a0", "A (seed 0)", 0.30), _entry("r/a1", "A (seed 1)", 0.20), _entry("r/b", "B", 0.5)])
    decorrelated = Board(registry().benchmark("mini-decorrelated"), [
        _entry("d/a0", "A (seed 0)", 0.0), _entry("d/a1", "A (seed 1)", 0.0), _entry("d/b", "B", 0.0)])
    for e, y in strict_zip(decorrelated.entries, (0.6, 0.4, 0.1)):
        e.result.scores = {"ODmAP@1": y}
    report = BuildReport([decorrelated, retrieval], [], [], ScoreCache(None))
    [(title, scored, reported)] = panels(report)
    assert title == "mini-decorrelated vs mini-retrieval" and reported == []
    a, b = scored
    assert (a.method, a.seeds, a.x, a.y) == ("A", 2, pytest.approx(25.0), pytest.approx(50.0))
    assert a.x_range == pytest.approx((20.0, 30.0)) and a.y_range == pytest.approx((40.0, 60.0))
    assert (b.method, b.seeds, b.x_range) == ("B", 1, None)
    png = render_png(report)
    assert png is not None and png.startswith(b"\x89PNG") and render_png(report) == png  # deterministic
