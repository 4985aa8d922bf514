"""The trade-off plot: a benchmark's metric against another benchmark's of the same images.

The pairs and their metrics are the benchmark records' `trade_off` (ODmAP@1 of a decorrelated
benchmark against i2t R@1 of its retrieval benchmark). One panel per pair of boards that has points, one point per method: a scored method is a point
when the same method (`meta.method` without its seed marker, case and spacing ignored) is on both
boards, at the mean over its seeds, with bars from the lowest to the highest seed; so a recipe's
decorrelated and plain retrieval submissions meet. Reported rows pair by model name within the
same paper. Methods are told apart by colour and marker and named in one legend under the panels
(labels next to points collide when methods score alike). PNG bytes are deterministic: Agg
backend, fixed size and DPI, no Software/date metadata, matplotlib's bundled font.
"""

from __future__ import annotations

import io
import textwrap
from dataclasses import dataclass

import numpy as np

from vlbench.backports import strict_zip
from vlbench.leaderboard.build import Board, BuildReport
from vlbench.leaderboard.groups import family_key, method_groups

LEGEND_WIDTH = 38  # characters per legend line; longer names wrap, never cut


@dataclass(frozen=True)
class Point:
    method: str
    x: float  # the trade-off's x metric (e.g. i2t R@1), percent
    y: float  # its y metric (e.g. ODmAP@1), percent
    x_range: tuple[float, float] | None = None  # lowest and highest seed
    y_range: tuple[float, float] | None = None
    seeds: int = 1


def _scored(board: Board, key: str) -> dict[str, tuple[str, float, tuple[float, float] | None, int]]:
    points: dict[str, tuple[str, float, tuple[float, float] | None, int]] = {}
    for group in method_groups(board):
        mean = group.mean(key)
        if mean is None or family_key(group.name) in points:
            continue
        spread = group.spread(key)
        points[family_key(group.name)] = (group.name, 100.0 * mean,
                                          None if spread is None else (100.0 * spread[0], 100.0 * spread[1]),
                                          len(group.entries))
    return points


def _reported(board: Board, key: str) -> dict[tuple[str, str], tuple[str, float]]:
    return {(r.source_file, family_key(r.method)): (r.method, 100.0 * v)
            for r in board.reported if (v := r.value(key)) is not None}


def panels(report: BuildReport) -> list[tuple[str, list[Point], list[Point]]]:
    """(title, scored points, reported points), one point per method."""
    by_id = {b.benchmark.id: b for b in report.boards if not b.retired}
    out = []
    for benchmark_id in sorted(by_id):
        trade_off = by_id[benchmark_id].benchmark.trade_off
        if trade_off is None or trade_off.against not in by_id:
            continue
        y_board, x_board = by_id[benchmark_id], by_id[trade_off.against]
        xs, ys = _scored(x_board, trade_off.x_key), _scored(y_board, trade_off.y_key)
        scored = [Point(ys[k][0], xs[k][1], ys[k][1], xs[k][2], ys[k][2], min(xs[k][3], ys[k][3]))
                  for k in sorted(set(xs) & set(ys))]
        rx, ry = _reported(x_board, trade_off.x_key), _reported(y_board, trade_off.y_key)
        reported = [Point(ry[k][0], rx[k][1], ry[k][1]) for k in sorted(set(rx) & set(ry))]
        if scored or reported:
            out.append((f"{benchmark_id} vs {trade_off.against}", scored, reported))
    return out


_MARKERS = "osD^vP*Xhp<>"


def render_png(report: BuildReport) -> bytes | None:
    """The plot as PNG bytes, or None when no method is on both boards of any pair."""
    data = panels(report)
    if not data:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    # one style per method name across the panels (the same paper model in two panels is one entry)
    names = list(dict.fromkeys([f"{p.method}" + (f" (mean of {p.seeds} seeds)" if p.seeds > 1 else "")
                                for _, scored, _ in data for p in scored]
                               + [f"{p.method} ‡" for _, _, reported in data for p in reported]))
    colours = matplotlib.colormaps["tab20"].colors
    style = {name: (colours[(2 * i) % 20 + (i // 10) % 2], _MARKERS[i % len(_MARKERS)]) for i, name in enumerate(names)}
    rows = int(np.ceil(len(names) / 3))
    with matplotlib.rc_context({"font.family": "DejaVu Sans", "svg.hashsalt": "vlbench", "path.simplify": False}):
        fig = Figure(figsize=(max(5.0 * len(data), 10.0), 4.2 + 0.3 * rows), dpi=100, layout="constrained")
        axes = fig.subplots(1, len(data), squeeze=False)[0]
        for ax, (title, scored, reported) in strict_zip(axes, data):
            for p in scored:
                name = p.method + (f" (mean of {p.seeds} seeds)" if p.seeds > 1 else "")
                colour, marker = style[name]
                xerr = None if p.x_range is None else [[p.x - p.x_range[0]], [p.x_range[1] - p.x]]
                yerr = None if p.y_range is None else [[p.y - p.y_range[0]], [p.y_range[1] - p.y]]
                ax.errorbar([p.x], [p.y], xerr=xerr, yerr=yerr, fmt=marker, color=colour, markersize=7,
                            elinewidth=0.8, capsize=2, alpha=0.85, zorder=3, label=name)
            for p in reported:
                colour, marker = style[f"{p.method} ‡"]
                ax.scatter([p.x], [p.y], marker=marker, facecolors="none", edgecolors=colour, s=50,
                           linewidths=1.4, zorder=3, label=f"{p.method} ‡")
            ax.set_title(title, fontsize=10)
            ax.set_xlabel("image-to-text R@1 (%)")
            ax.set_ylabel("ODmAP@1 (%)")
            ax.grid(True, linewidth=0.4, alpha=0.5)
            ax.margins(0.08)
        handles: dict[str, object] = {}
        for ax in axes:
            for handle, label in strict_zip(*ax.get_legend_handles_labels()):
                handles.setdefault(label, handle)
        ordered = [n for n in names if n in handles]
        fig.legend([handles[n] for n in ordered], [textwrap.fill(n, LEGEND_WIDTH) for n in ordered],
                   loc="outside lower center", ncols=min(3, len(ordered)), fontsize=8, frameon=False,
                   title="filled: scored by vlbench (bars: lowest to highest seed); hollow ‡: reported in a paper",
                   title_fontsize=8)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()
