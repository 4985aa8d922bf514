"""The trade-off plot as SVG text, written here so that its bytes depend on nothing but the board.

A plotting library's output changes with its version (the renderer, the layout engine, the PNG
encoder: the same figure drawn by matplotlib 3.8 on the Python 3.9 core and 3.10 elsewhere differs
in a tenth of its pixels), and the published folder must be the same on every machine. So the plot
is a small SVG document built from the numbers alone: every coordinate is computed with the four
arithmetic operations and printed with two decimals, the marker shapes are fixed point lists, and
the text is drawn by the viewer (so it stays sharp and legible at any width: 14 px legend text in
a figure at most 1200 px wide, which the page shows at its full width in a 1280 px window).

What is plotted, and which results pair, is `trade_off.py`. One panel per pair of boards with
points, a legend under the panels (methods told apart by colour and marker, the same method in
two panels is one entry), and each panel's note on what was left out and why under the legend.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from vlbench.leaderboard.build import BuildReport
from vlbench.leaderboard.trade_off import Panel, panels

WIDTH = 1200  # with three panels or more; fewer panels keep their width in a narrower figure
MIN_WIDTH = 800
PANEL_WIDTH = 373
MARGIN = 16
GAP = 28
PANEL_HEIGHT = 270  # the plotting area of one panel
PAD_LEFT, PAD_BOTTOM, PAD_RIGHT = 64, 52, 10
FONT = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"
TICK_SIZE, LABEL_SIZE, TITLE_SIZE, LEGEND_SIZE, NOTE_SIZE = 13, 14, 15, 14, 13
LEGEND_COLUMNS = 3
LINE = 1.3  # line height, in font sizes

# matplotlib's "tab20" colours (a colour-blind-aware palette), strong ones first
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7",
           "#dbdb8d", "#9edae5")
# Marker outlines around (0, 0), about 12 px across, as fixed points (no trigonometry at run time,
# whose last digits may differ between C libraries).
MARKERS = (
    "circle",
    "M-5.5,-5.5H5.5V5.5H-5.5Z",  # square
    "M0,-7L6,0L0,7L-6,0Z",  # diamond
    "M0,-7L6.5,5L-6.5,5Z",  # triangle up
    "M0,7L6.5,-5L-6.5,-5Z",  # triangle down
    "M0,-6.5L6.18,-2.01L3.82,5.26L-3.82,5.26L-6.18,-2.01Z",  # pentagon
    "M0,-6.5L5.63,-3.25L5.63,3.25L0,6.5L-5.63,3.25L-5.63,-3.25Z",  # hexagon
    "M0,-7.5L1.76,-2.43L7.13,-2.32L2.85,0.93L4.41,6.07L0,3L-4.41,6.07L-2.85,0.93L-7.13,-2.32L-1.76,-2.43Z",  # star
    "M-2,-6.5H2V-2H6.5V2H2V6.5H-2V2H-6.5V-2H-2Z",  # plus
    "M-4.6,-7.4L0,-2.8L4.6,-7.4L7.4,-4.6L2.8,0L7.4,4.6L4.6,7.4L0,2.8L-4.6,7.4L-7.4,4.6L-2.8,0L-7.4,-4.6Z",  # x
    "M-7,0L5,-6.5L5,6.5Z",  # triangle left
    "M7,0L-5,-6.5L-5,6.5Z",  # triangle right
)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _n(value: float) -> str:
    """A coordinate as printed: two decimals, no negative zero."""
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


# Advance widths of DejaVu Sans (the font the figure asks for first), in ems, by character class;
# the layout only needs them to wrap legend text and notes before they reach the next column.
_NARROW = set(" .,:;'|!()[]{}iIjl")
_SEMI = set("frt-/\"")
_WIDE = set("mwMW@%")


def text_width(text: str, size: float) -> float:
    total = 0.0
    for c in text:
        if c in _NARROW:
            total += 0.32
        elif c in _SEMI:
            total += 0.42
        elif c in _WIDE:
            total += 0.92
        elif c.isupper():
            total += 0.72
        elif c.isdigit():
            total += 0.64
        else:
            total += 0.61
    return total * size


def wrap(text: str, width: float, size: float) -> list[str]:
    """Greedy word wrap to `width` px (a word longer than the width gets a line of its own)."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}" if current else word
        if current and text_width(candidate, size) > width:
            lines.append(current)
            current = word
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines or [""]


def _text(x: float, y: float, text: str, size: float, *, anchor: str = "start", weight: str = "",
          cls: str = "", fill: str = "#222", rotate: bool = False) -> str:
    extra = f' font-weight="{weight}"' if weight else ""
    extra += f' class="{cls}"' if cls else ""
    extra += f' transform="rotate(-90 {_n(x)} {_n(y)})"' if rotate else ""
    return (f'<text x="{_n(x)}" y="{_n(y)}" font-size="{size}" text-anchor="{anchor}" fill="{fill}"{extra}>'
            f"{_e(text)}</text>")


def _lines(x: float, y: float, lines: Sequence[str], size: float, cls: str = "") -> str:
    """Lines of text starting at baseline `y`, as one <text> with <tspan> lines."""
    spans = "".join(f'<tspan x="{_n(x)}" dy="{_n(0 if i == 0 else size * LINE)}">{_e(line)}</tspan>'
                    for i, line in enumerate(lines))
    klass = f' class="{cls}"' if cls else ""
    return f'<text x="{_n(x)}" y="{_n(y)}" font-size="{size}" fill="#222"{klass}>{spans}</text>'


def nice_step(span: float, target: int = 5) -> float:
    """A tick step of 1, 2, 2.5 or 5 times a power of ten, giving about `target` ticks."""
    raw = span / target if span > 0 else 1.0
    magnitude = 1.0
    while magnitude * 10 <= raw:
        magnitude *= 10
    while magnitude > raw:
        magnitude /= 10
    for factor in (1.0, 2.0, 2.5, 5.0, 10.0):
        if factor * magnitude >= raw:
            return factor * magnitude
    return 10 * magnitude


def _decimals(step: float) -> int:
    for decimals in range(7):
        scaled = step * 10 ** decimals
        if abs(scaled - round(scaled)) < 1e-6 * max(1.0, scaled):
            return decimals
    return 6


def _limits(values: Sequence[float]) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    if hi - lo < 1e-9:
        return lo - 1.0, hi + 1.0
    pad = (hi - lo) * 0.08
    return lo - pad, hi + pad


def _ticks(lo: float, hi: float) -> tuple[list[float], int]:
    step = nice_step(hi - lo)
    first = -(-lo // step)  # ceil
    ticks = []
    k = first
    while k * step <= hi + 1e-9:
        ticks.append(round(k * step, 6))
        k += 1
    return ticks, _decimals(step)


def _marker(style: tuple[str, str], x: float, y: float, hollow: bool) -> str:
    colour, shape = style
    paint = (f'fill="none" stroke="{colour}" stroke-width="1.6"' if hollow
             else f'fill="{colour}" stroke="#fff" stroke-width="0.6"')
    if shape == "circle":
        return f'<circle cx="{_n(x)}" cy="{_n(y)}" r="6" {paint}/>'
    return f'<path transform="translate({_n(x)} {_n(y)})" d="{shape}" {paint}/>'


def _axis_label(key: str, percent: bool) -> str:
    return f"{key} (%)" if percent else key


def _title_lines(panel: Panel, width: float) -> list[str]:
    return wrap(panel.title, width - 8, TITLE_SIZE * 1.08)  # bold is a little wider


def _panel(panel: Panel, left: float, top: float, width: float, styles: dict[str, tuple[str, str]],
           pad_top: float) -> str:
    """One panel: title, axes with ticks and grid, the points (scored filled, reported hollow)."""
    points = [*panel.scored, *panel.reported]
    xs = [v for p in points for v in (p.x, *(p.x_range or ()))]
    ys = [v for p in points for v in (p.y, *(p.y_range or ()))]
    (x_lo, x_hi), (y_lo, y_hi) = _limits(xs), _limits(ys)
    area_left, area_top = left + PAD_LEFT, top + pad_top
    area_width, area_height = width - PAD_LEFT - PAD_RIGHT, PANEL_HEIGHT

    def px(v: float) -> float:
        return area_left + (v - x_lo) / (x_hi - x_lo) * area_width

    def py(v: float) -> float:
        return area_top + area_height - (v - y_lo) / (y_hi - y_lo) * area_height

    title = "".join(f'<tspan x="{_n(left + width / 2)}" dy="{_n(0 if i == 0 else TITLE_SIZE * LINE)}">{_e(t)}</tspan>'
                    for i, t in enumerate(_title_lines(panel, width)))
    out = [f'<g class="panel" data-title="{_e(panel.title)}">',
           f'<text x="{_n(left + width / 2)}" y="{_n(top + TITLE_SIZE + 2)}" font-size="{TITLE_SIZE}" '
           f'text-anchor="middle" font-weight="bold" fill="#222">{title}</text>',
           f'<rect x="{_n(area_left)}" y="{_n(area_top)}" width="{_n(area_width)}" height="{_n(area_height)}" '
           'fill="#fff" stroke="#888" stroke-width="1"/>']
    x_ticks, x_decimals = _ticks(x_lo, x_hi)
    for t in x_ticks:
        x = px(t)
        out.append(f'<line x1="{_n(x)}" y1="{_n(area_top)}" x2="{_n(x)}" y2="{_n(area_top + area_height)}" '
                   'stroke="#e4e4e4" stroke-width="1"/>')
        out.append(_text(x, area_top + area_height + TICK_SIZE + 5, f"{t:.{x_decimals}f}", TICK_SIZE, anchor="middle"))
    y_ticks, y_decimals = _ticks(y_lo, y_hi)
    for t in y_ticks:
        y = py(t)
        out.append(f'<line x1="{_n(area_left)}" y1="{_n(y)}" x2="{_n(area_left + area_width)}" y2="{_n(y)}" '
                   'stroke="#e4e4e4" stroke-width="1"/>')
        out.append(_text(area_left - 6, y + TICK_SIZE * 0.35, f"{t:.{y_decimals}f}", TICK_SIZE, anchor="end"))
    out.append(_text(area_left + area_width / 2, area_top + area_height + 2 * TICK_SIZE + 16,
                     f"{_axis_label(panel.x_key, panel.x_percent)} on {panel.x_benchmark}", LABEL_SIZE,
                     anchor="middle"))
    out.append(_text(left + LABEL_SIZE + 2, area_top + area_height / 2,
                     _axis_label(panel.y_key, panel.y_percent), LABEL_SIZE, anchor="middle", rotate=True))
    for p in panel.scored:
        colour = styles[p.label][0]
        x, y = px(p.x), py(p.y)
        bars = []
        if p.x_range:
            bars.append(f'M{_n(px(p.x_range[0]))},{_n(y)}H{_n(px(p.x_range[1]))}')
        if p.y_range:
            bars.append(f'M{_n(x)},{_n(py(p.y_range[0]))}V{_n(py(p.y_range[1]))}')
        if bars:
            out.append(f'<path d="{"".join(bars)}" stroke="{colour}" stroke-width="1.2" fill="none"/>')
        out.append(f'<g class="point" data-label="{_e(p.label)}">{_marker(styles[p.label], x, y, False)}</g>')
    for p in panel.reported:
        out.append(f'<g class="point reported" data-label="{_e(p.label)}">'
                   f"{_marker(styles[p.label], px(p.x), py(p.y), True)}</g>")
    out.append("</g>")
    return "\n".join(out)


SCORED_KEY = "filled: scored by vlbench, one model on both benchmarks (bars: its lowest to highest seed)"
REPORTED_KEY = "hollow ‡: reported in a paper"


def render_svg(report: BuildReport) -> str | None:
    """The plot as an SVG document, or None when no panel has a point."""
    every = panels(report)
    drawn = [p for p in every if p.scored or p.reported]
    if not drawn:
        return None
    labels = list(dict.fromkeys([p.label for panel in drawn for p in panel.scored]
                                + [p.label for panel in drawn for p in panel.reported]))
    styles = {label: (COLOURS[i % len(COLOURS)], MARKERS[i % len(MARKERS)]) for i, label in enumerate(labels)}
    hollow = {p.label for panel in drawn for p in panel.reported}
    columns = min(3, len(drawn))
    width = max(MIN_WIDTH, min(WIDTH, 2 * MARGIN + columns * PANEL_WIDTH + (columns - 1) * GAP))
    panel_width = (width - 2 * MARGIN - (columns - 1) * GAP) / columns if columns == 3 else PANEL_WIDTH
    offset = (width - columns * panel_width - (columns - 1) * GAP) / 2  # panels centred
    panel_rows = -(-len(drawn) // columns)
    pad_top = max(len(_title_lines(p, panel_width)) for p in drawn) * TITLE_SIZE * LINE + 12
    block = pad_top + PANEL_HEIGHT + PAD_BOTTOM
    body = []
    for i, panel in enumerate(drawn):
        body.append(_panel(panel, offset + (i % columns) * (panel_width + GAP), MARGIN + (i // columns) * (block + GAP),
                           panel_width, styles, pad_top))
    y = MARGIN + panel_rows * block + (panel_rows - 1) * GAP + 12
    key = "; ".join(k for k, shown in ((SCORED_KEY, any(p.scored for p in drawn)),
                                       (REPORTED_KEY, any(p.reported for p in drawn))) if shown)
    title = wrap(key, width - 2 * MARGIN, NOTE_SIZE)
    body.append(_lines(MARGIN, y + NOTE_SIZE, title, NOTE_SIZE, cls="legend-title"))
    y += len(title) * NOTE_SIZE * LINE + 10
    legend_columns = LEGEND_COLUMNS if width >= WIDTH else 2
    column_width = (width - 2 * MARGIN) / legend_columns
    per_column = -(-len(labels) // legend_columns)
    bottoms = []
    for c in range(legend_columns):
        top = y
        for label in labels[c * per_column:(c + 1) * per_column]:
            x = MARGIN + c * column_width
            lines = wrap(label, column_width - 34, LEGEND_SIZE)
            body.append(f'<g class="legend-entry" data-label="{_e(label)}">'
                        + _marker(styles[label], x + 9, top + LEGEND_SIZE * 0.6, label in hollow)
                        + _lines(x + 24, top + LEGEND_SIZE, lines, LEGEND_SIZE, cls="legend-text") + "</g>")
            top += len(lines) * LEGEND_SIZE * LINE + 8
        bottoms.append(top)
    y = max(bottoms) + 6
    for panel in every:
        lines = wrap(panel.note(), width - 2 * MARGIN, NOTE_SIZE)
        body.append(_lines(MARGIN, y + NOTE_SIZE, lines, NOTE_SIZE, cls="note"))
        y += len(lines) * NOTE_SIZE * LINE + 6
    height = y + MARGIN
    description = "; ".join(f"{p.title}: {p.y_key} against {p.x_key}" for p in drawn)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 {_n(width)} {_n(height)}" '
            f'width="{_n(width)}" height="{_n(height)}" role="img" font-family="{FONT}">\n'
            f"<title>{_e(description)}</title>\n"
            f'<rect width="{_n(width)}" height="{_n(height)}" fill="#fff"/>\n' + "\n".join(body) + "\n</svg>\n")
