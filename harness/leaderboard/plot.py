"""The trade-off plot: ODmAP@1 (decorrelated benchmark) against i2t R@1 (its retrieval benchmark).

One panel per pair of boards that has points. A scored method is a point when the same
`meta.method` (case and spacing ignored) is on both boards, so a recipe's decorrelated and plain
retrieval submissions meet; if a method name repeats on a board, the first submission path wins.
Reported rows pair by model name within the same paper. PNG bytes are deterministic: Agg
backend, fixed size and DPI, no Software/date metadata, matplotlib's bundled font.
"""

from __future__ import annotations

import io
import re

from vlbench.leaderboard.build import Board, BuildReport

# decorrelated benchmark -> the retrieval benchmark of the same images
PAIRS = {
    "coco-5k-decorrelated": "coco-5k",
    "flickr30k-1k-decorrelated": "flickr30k-1k",
    "mini-decorrelated": "mini-retrieval",
}
X_KEY, Y_KEY = "i2t_R@1", "ODmAP@1"


def method_key(name: object) -> str:
    return re.sub(r"\s+", " ", str(name or "")).strip().casefold()


def _scored(board: Board, key: str) -> dict[str, tuple[str, float]]:
    points: dict[str, tuple[str, float]] = {}
    for e in sorted(board.entries, key=lambda e: e.path):
        value = e.result.scores.get(key)
        name = str(e.result.meta.get("method", ""))
        if value is not None and method_key(name) not in points:
            points[method_key(name)] = (name, 100.0 * value)
    return points


def _reported(board: Board, key: str) -> dict[tuple[str, str], tuple[str, float]]:
    return {(r.source_file, method_key(r.method)): (r.method, 100.0 * v)
            for r in board.reported if (v := r.value(key)) is not None}


def panels(report: BuildReport) -> list[tuple[str, list[tuple[str, float, float]], list[tuple[str, float, float]]]]:
    """(title, scored points, reported points); a point is (method, x = i2t R@1 %, y = ODmAP@1 %)."""
    by_id = {b.benchmark.id: b for b in report.boards if not b.retired}
    out = []
    for decorrelated, retrieval in PAIRS.items():
        if decorrelated not in by_id or retrieval not in by_id:
            continue
        y_board, x_board = by_id[decorrelated], by_id[retrieval]
        xs, ys = _scored(x_board, X_KEY), _scored(y_board, Y_KEY)
        scored = [(ys[k][0], xs[k][1], ys[k][1]) for k in sorted(set(xs) & set(ys))]
        rx, ry = _reported(x_board, X_KEY), _reported(y_board, Y_KEY)
        reported = [(ry[k][0], rx[k][1], ry[k][1]) for k in sorted(set(rx) & set(ry))]
        if scored or reported:
            out.append((f"{decorrelated} vs {retrieval}", scored, reported))
    return out


def render_png(report: BuildReport) -> bytes | None:
    """The plot as PNG bytes, or None when no method is on both boards of any pair."""
    data = panels(report)
    if not data:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    with matplotlib.rc_context({"font.family": "DejaVu Sans", "svg.hashsalt": "vlbench", "path.simplify": False}):
        fig = Figure(figsize=(5.0 * len(data), 4.4), dpi=100, layout="constrained")
        axes = fig.subplots(1, len(data), squeeze=False)[0]
        for ax, (title, scored, reported) in zip(axes, data, strict=True):
            if scored:
                ax.scatter([p[1] for p in scored], [p[2] for p in scored], marker="o", color="#1f77b4",
                           label="scored by vlbench", zorder=3)
            if reported:
                ax.scatter([p[1] for p in reported], [p[2] for p in reported], marker="^", facecolors="none",
                           edgecolors="#d62728", label="reported in a paper (‡)", zorder=3)
            for name, x, y in scored + reported:
                ax.annotate(name[:28], (x, y), textcoords="offset points", xytext=(4, 3), fontsize=7)
            ax.set_title(title, fontsize=10)
            ax.set_xlabel("image-to-text R@1 (%)")
            ax.set_ylabel("ODmAP@1 (%)")
            ax.grid(True, linewidth=0.4, alpha=0.5)
            ax.legend(fontsize=7, loc="best")
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()
