"""The trade-off plot as SVG (`vlbench.leaderboard.plot`): well-formed, escaped, the same bytes every
time, every point and legend entry inside the figure, and text of a legible size."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from tests.harness.leaderboard.test_trade_off import _entry, _meta, _report
from vlbench.leaderboard.build import Board
from vlbench.leaderboard.plot import LEGEND_SIZE, nice_step, render_svg, text_width, wrap
from vlbench.leaderboard.sources import ReportedRow
from vlbench.registry import registry

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "A <script>alert(1)</script> & \"B\" 'c'"


def _boards() -> list[Board]:
    dec = Board(registry().benchmark("mini-decorrelated"), [
        _entry("mini-decorrelated", f"d/s{s}.json", f"{HOSTILE} (seed {s})", _meta("mini-decorrelated", s), 0.9 - s / 10)
        for s in range(3)])
    shapes = Board(registry().benchmark("mini-shapes-retrieval"), [
        _entry("mini-shapes-retrieval", f"r/s{s}.json", f"{HOSTILE} (seed {s})", _meta("mini-shapes-retrieval", s),
               0.3 - s / 20) for s in range(3)])
    coco = Board(registry().benchmark("coco-5k-decorrelated"))
    coco.reported = [ReportedRow("coco-5k-decorrelated", "CLIP <zero-shot>", "Table 1", "Paper", "https://x.org",
                                 "reported/p.json", {"ODmAP@1": "58.6"})]
    coco_r = Board(registry().benchmark("coco-5k"))
    coco_r.reported = [ReportedRow("coco-5k", "CLIP <zero-shot>", "Table 2", "Paper", "https://x.org",
                                   "reported/p.json", {"i2t_R@1": "50.6"})]
    return [dec, shapes, coco, coco_r]


def test_svg_is_well_formed_escaped_and_deterministic() -> None:
    svg = render_svg(_report(*_boards()))
    assert svg is not None and svg == render_svg(_report(*_boards()))
    root = ET.fromstring(svg)  # well-formed XML: every name escaped
    assert root.tag == f"{SVG}svg" and "<script" not in svg and "&lt;script&gt;" in svg
    labels = [g.get("data-label") for g in root.iter(f"{SVG}g") if g.get("class") == "legend-entry"]
    assert labels == [f"{HOSTILE} (mean of 3 seeds)", "CLIP <zero-shot> ‡"]
    assert [g.get("data-title") for g in root.iter(f"{SVG}g") if g.get("class") == "panel"] == [
        "coco-5k-decorrelated vs coco-5k", "mini-decorrelated vs mini-shapes-retrieval"]
    # every number printed with two decimals at most, inside the figure
    width, height = (float(v) for v in root.get("viewBox").split()[2:])
    assert float(root.get("width")) == width <= 1200
    for circle in root.iter(f"{SVG}circle"):
        assert 0 <= float(circle.get("cx")) <= width and 0 <= float(circle.get("cy")) <= height
    for path in root.iter(f"{SVG}path"):
        if path.get("transform"):
            x, y = (float(v) for v in re.findall(r"-?[\d.]+", path.get("transform")))
            assert 0 <= x <= width and 0 <= y <= height
    assert not re.search(r"\d\.\d{3}", svg.replace(svg.split("<title>")[1].split("</title>")[0], ""))
    assert "nan" not in svg.lower().replace("nanc", "")
    # what was left out is said under the plot
    notes = ["".join(t.itertext()) for t in root.iter(f"{SVG}text") if t.get("class") == "note"]
    assert any(n.startswith("mini-decorrelated vs mini-shapes-retrieval: 6 of 6 scored submissions paired") for n in notes)


def test_legend_text_size_and_wrapping() -> None:
    root = ET.fromstring(render_svg(_report(*_boards())))
    sizes = {t.get("font-size") for t in root.iter(f"{SVG}text") if t.get("class") == "legend-text"}
    assert sizes == {str(LEGEND_SIZE)} and LEGEND_SIZE >= 13
    assert wrap("a b c", 1000, 14) == ["a b c"]
    lines = wrap("mini-odmap arm 4 unbiased reference (mean of 5 seeds)", 300, 14)
    assert len(lines) == 2 and all(text_width(line, 14) <= 300 for line in lines)


@pytest.mark.parametrize(("span", "step"), [(100, 20), (9, 2), (4.2, 1), (0.7, 0.2), (37, 10), (12.5, 2.5), (0, 1)])
def test_nice_step(span: float, step: float) -> None:
    assert nice_step(span) == pytest.approx(step)
