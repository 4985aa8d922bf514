"""`index.html`: one static, offline page (inline CSS, script and plot; no external resource).

Every submitted string is escaped with `html.escape`; only http(s) links are emitted. A Content
Security Policy forbids every network load, so the page cannot fetch anything even by mistake.

A table body is a list of blocks: a main row (a board row of `ranking.py`: a submission, or a
method's seeds as one row, showing their mean; or a reported row) followed by its `sub` rows (the
seeds, and the per-group tables of the row and of each seed), which stay hidden until their
button is pressed. Only main rows are ranked; the best mark of a column goes to the best
contender's main row (never a chance floor's, whose cells above every contender are marked and
explained under the table). Sorting moves whole blocks, on the `data-v` keys of
the main rows' cells; the first click on a metric sorts best first. The filter matches the typed
phrase against names, teams, sources and paths (`data-text`), not against numbers, and a number
at its end matches whole ("seed 1" is not "seed 10"). Values fit the window: the interval goes
on its own small line under the value. The plot is inline SVG (`plot.py`). The page's fixed parts (style, script, policy, legend)
are in `page_assets.py`.
"""

from __future__ import annotations

import html

from vlbench.leaderboard.build import Board, BuildReport, Entry
from vlbench.leaderboard.page_assets import CSP, CSS, PAGE_LEGEND, SCRIPT
from vlbench.leaderboard.ranking import MethodRow
from vlbench.leaderboard.render import (
    GENERATED,
    LEGEND,
    PLOT_ALT,
    PLOT_CAPTION,
    REFERENCE_MARK,
    REPORTED_MARK,
    breakdown,
    canonical_value,
    columns,
    entry_name,
    floor_sentence,
    half_width,
    http_url,
    metric_of,
    reported_cell,
    shown,
)
from vlbench.leaderboard.sources import ReportedRow


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _anchor(board: Board) -> str:
    return "board-" + "".join(c if c.isalnum() else "-" for c in f"{board.benchmark.id}-v{board.benchmark.version}")


def _link(url: object, label: str, title: str = "") -> str:
    safe = http_url(url)
    tip = f' title="{_e(title)}"' if title else ""
    return f'<a href="{_e(safe)}"{tip} rel="nofollow noopener noreferrer">{label}</a>' if safe else label


def _number(value: float | None) -> str:
    value = canonical_value(value)
    return "" if value is None else repr(value)


def _search_text(*parts: object) -> str:
    return _e(" ".join(str(p) for p in parts if p).casefold())


def _value_cell(board: Board, key: str, value: float | None, under: str, mark: str = "", tip: str = "") -> str:
    """A number with its interval on a small line under it; `mark`: "best" (the best contender of
    the column) or "floorwins" (a chance floor above every contender)."""
    text = _e(shown(board, key, value))
    if under:
        text += f'<span class="ci">{_e(under)}</span>'
    title = {"best": "best contender in this column",
             "floorwins": "a chance floor, above every contender here: see the note under the table"}.get(mark, "")
    title = "; ".join(t for t in (title, tip) if t)
    attributes = f' class="n {mark}"' if mark else ' class="n"'
    attributes += f' title="{_e(title)}"' if title else ""
    return f'<td{attributes} data-v="{_number(value)}">{text}</td>'


def _best(board: Board, cols: list[str]) -> dict[str, float]:
    """Per column, the best value shown by a contender's row: chance floors and reported rows do
    not compete."""
    best = {}
    for key in cols:
        values = [v for r in board.rows if not r.floor and (v := r.shown(key)) is not None]
        if values:
            higher = metric_of(board, key).higher_is_better
            best[key] = max(values) if higher else min(values)
    return best


class _Rows:
    """Row ids unique on the page."""

    def __init__(self, prefix: str) -> None:
        self.prefix, self.n = prefix, 0

    def next(self) -> str:
        self.n += 1
        return f"{self.prefix}-r{self.n}"


def _groups_row(board: Board, name: str, scores: dict, ci95: dict, row_id: str, width: int) -> str:
    bases, rows = breakdown(board, scores, ci95)
    if not rows:
        return ""
    inner = ('<table class="groups"><tr><th class="t">group</th>' + "".join(f"<th>{_e(x)}</th>" for x in bases)
             + "</tr>" + "".join("<tr>" + "".join(f'<td{" class=t" if i == 0 else ""}>{_e(c)}</td>'
                                                  for i, c in enumerate(r)) + "</tr>" for r in rows) + "</table>")
    return (f'<tr class="sub groups" id="{row_id}-groups" data-owner="{row_id}" hidden>'
            f'<td class="t" colspan="{width}">{_e(name)}, by group:{inner}</td></tr>')


def _groups_button(board: Board, scores: dict, row_id: str) -> str:
    groups = breakdown(board, scores, {})[1]
    if not groups:
        return ""
    return (f' <button class="toggle" type="button" aria-expanded="false" aria-controls="{row_id}-groups">'
            f"{len(groups)} groups</button>")


def _method_cell(board: Board, entry: Entry, row_id: str) -> str:
    meta = entry.result.meta
    paper = http_url(meta.get("paper"))
    extra = f' <small>{_link(paper, "paper")}</small>' if paper else ""
    extra += _groups_button(board, entry.result.scores, row_id)
    name = _link(meta.get("url"), _e(entry_name(entry)))
    return f'<td class="t m" data-v="{_e(entry_name(entry))}">{name}{extra}</td>'


def _entry_row(board: Board, entry: Entry, cols: list[str], row_id: str, classes: str, rank: str,
               marks: dict[str, str], hidden: bool = False) -> str:
    meta = entry.result.meta
    cells = [f'<td data-v="{entry.rank}">{rank}</td>', _method_cell(board, entry, row_id),
             f'<td class="t team" data-v="{_e(meta.get("team", ""))}">{_e(meta.get("team", ""))}</td>']
    for key in cols:
        value = entry.result.scores.get(key)
        cells.append(_value_cell(board, key, value, half_width(board, entry.result.ci95, key, value), marks.get(key, "")))
    text = _search_text(entry_name(entry), meta.get("team"), entry.path, board.benchmark.id)
    return (f'<tr class="{classes}" id="{row_id}" data-path="{_e(entry.path)}" data-text="{text}"{" hidden" if hidden else ""}>'
            + "".join(cells) + "</tr>")


def _marks(board: Board, row: MethodRow, cols: list[str], best: dict[str, float]) -> dict[str, str]:
    """Per column, the row's mark: "best" for the best contender, "floorwins" for a floor above them."""
    floor_wins = {n.metric for n in board.floor_notes if n.floor == row.name}
    marks = {}
    for key in cols:
        if row.floor:
            if key in floor_wins:
                marks[key] = "floorwins"
        elif key in best and row.shown(key) == best[key]:
            marks[key] = "best"
    return marks


def _seed_block(board: Board, row: MethodRow, cols: list[str], ids: _Rows, marks: dict[str, str],
                width: int) -> list[str]:
    head = ids.next()
    reference = f" {REFERENCE_MARK}" if row.reference else ""
    name = (f'<button class="toggle" type="button" aria-expanded="false" aria-controls="{head}-seeds">'
            f"{len(row.entries)} seeds</button> {_e(row.name)}{_e(reference)}"
            + _groups_button(board, row.scores, head))
    cells = [f'<td data-v="{row.rank}">{row.rank}</td>', f'<td class="t m" data-v="{_e(row.name)}">{name}</td>',
             f'<td class="t team" data-v="{_e(row.team)}">{_e(row.team)}</td>']
    for key in cols:
        value = row.scores.get(key)
        spread = row.group.spread(key)
        tip = ""
        if spread is not None:
            fmt = metric_of(board, key).format
            tip = (f"mean of {len(row.entries)} seeds (lowest {fmt(canonical_value(spread[0]))}, highest "
                   f"{fmt(canonical_value(spread[1]))}); ± from the two-level bootstrap (seeds, then images)")
        cells.append(_value_cell(board, key, value, half_width(board, row.ci95, key, value), marks.get(key, ""), tip))
    text = _search_text(row.name, row.team, board.benchmark.id, f"{len(row.entries)} seeds")
    classes = "scored seedgroup" + (" floor" if row.floor else "")
    rows = [f'<tr class="{classes}" id="{head}" data-text="{text}">' + "".join(cells) + "</tr>",
            _groups_row(board, f"{row.name} (mean of {len(row.entries)} seeds)", row.scores, row.ci95, head, width)]
    seed_ids = []
    for entry in row.entries:
        row_id = ids.next()
        seed_ids.append(row_id)
        rows.append(_entry_row(board, entry, cols, row_id, "sub seed scored", "", {}, hidden=True))
        rows.append(_groups_row(board, entry_name(entry), entry.result.scores, entry.result.ci95, row_id, width))
    # the group's button controls its seed rows (listed by id, as aria-controls takes)
    rows[0] = rows[0].replace(f'aria-controls="{head}-seeds"', f'aria-controls="{head}-seeds {" ".join(seed_ids)}"', 1)
    return [r for r in rows if r]


def _reported_row(board: Board, row: ReportedRow, cols: list[str]) -> str:
    citation = _link(row.source_url, _e(row.citation), f"{row.source_title} ({row.provenance})")
    cells = ['<td data-v="">–</td>', f'<td class="t m" data-v="{_e(row.method)}">{_e(row.method)} {REPORTED_MARK}</td>',
             f'<td class="t team" data-v="{_e(row.citation)}">{citation}</td>']
    for key in cols:
        cells.append(f'<td class="n" data-v="{_number(row.value(key))}">{_e(reported_cell(row, key))}</td>')
    text = _search_text(row.method, row.citation, row.source_title, row.source_file, board.benchmark.id)
    return f'<tr class="reported" data-text="{text}">' + "".join(cells) + "</tr>"


def _board(board: Board) -> str:
    b = board.benchmark
    cols = columns(board)
    best = _best(board, cols)
    width = 3 + len(cols)
    retired = ", retired" if board.retired else ""
    out = [f'<section id="{_anchor(board)}"><h2>{_e(b.id)} <small>(v{_e(b.version)}, {_e(b.task)}{retired})</small></h2>',
           f"<p>{_e(_sentence(b.description))} Main score: <code>{_e(b.main_score)}</code>.</p>",
           f'<div class="wrap"><table class="board" data-benchmark="{_e(b.id)}"><thead><tr>',
           '<th data-type="num" data-first="ascending">rank</th><th class="t" data-type="text">method</th>'
           '<th class="t" data-type="text">team / source</th>']
    for key in cols:
        higher = b.metric(key).higher_is_better
        first = "descending" if higher else "ascending"
        out.append(f'<th data-type="num" data-first="{first}" title="{_e(b.metric(key).description)}; the first '
                   f'click sorts best first">{_header_label(key, "↑" if higher else "↓")}</th>')
    out.append("</tr></thead><tbody>")
    ids = _Rows(_anchor(board))
    for row in board.rows:
        marks = _marks(board, row, cols, best)
        if row.seeded:
            out.extend(_seed_block(board, row, cols, ids, marks, width))
            continue
        row_id = ids.next()
        entry = row.entries[0]
        out.append(_entry_row(board, entry, cols, row_id, "scored floor" if row.floor else "scored", str(row.rank),
                              marks))
        extra = _groups_row(board, entry_name(entry), entry.result.scores, entry.result.ci95, row_id, width)
        if extra:
            out.append(extra)
    out.extend(_reported_row(board, r, cols) for r in board.reported)
    out.append("</tbody></table></div>")
    if board.floor_notes:
        out.append(f'<p class="floor-note">{_e(floor_sentence(board, board.floor_notes))}</p>')
    out.append("</section>")
    return "\n".join(out)


def _sentence(text: str) -> str:
    text = text.rstrip()
    return text if text.endswith(".") else text + "."


def _header_label(key: str, arrow: str) -> str:
    """The metric's key, unbroken except after an underscore ("merged_ / R@10"), with its arrow."""
    parts = key.split("_")
    parts[-1] += f"\u00a0{arrow}"
    return "<wbr>".join(f'<span class="k">{_e(p)}{"_" if i < len(parts) - 1 else ""}</span>'
                        for i, p in enumerate(parts))


def _nav_label(board: Board) -> str:
    b = board.benchmark
    return f"{b.id} v{b.version} (retired)" if board.retired else b.id


def to_html(report: BuildReport, plot_svg: str | None) -> str:
    nav = "".join(f'<a href="#{_anchor(b)}">{_e(_nav_label(b))}</a>' for b in report.boards)
    if report.invalid or report.skipped:
        nav += '<a href="#not-on-the-board">not on the board</a>'
    parts = [
        "<!doctype html>",
        f"<!-- {GENERATED} -->",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        "<title>vlbench leaderboard</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>vlbench leaderboard</h1>",
        f"<nav>{nav}</nav>",
        '<label for="filter">Filter rows: </label><input id="filter" type="search" '
        'placeholder="method, team, path…" autocomplete="off">',
        '<details class="legend-box"><summary>Legend: rank, marks, intervals, units, seeds</summary><dl class="legend">',
        *(f"<dt>{_e(symbol)}</dt><dd>{_e(text)}</dd>" for symbol, text in [*LEGEND, *PAGE_LEGEND]),
        "</dl><p>Data: <a href=\"leaderboard.csv\">leaderboard.csv</a>, "
        "<a href=\"leaderboard.json\">leaderboard.json</a>.</p></details>",
    ]
    if plot_svg:
        # what each panel left out is written under the panels, in the figure itself
        # on a phone the figure keeps a legible width and scrolls sideways in its box, as tables do
        parts.append(f'<figure class="plot" aria-label="{_e(PLOT_ALT)}"><div class="plotwrap">{plot_svg}</div>'
                     f"<figcaption>{_e(PLOT_CAPTION)} "
                     "Under the panels: what each panel left out, and why.</figcaption></figure>")
    parts.extend(_board(b) for b in report.boards)
    if report.invalid or report.skipped:
        parts.append(f'<section id="not-on-the-board"><h2>Not on the board</h2><p>{len(report.invalid)} invalid, '
                     f"{len(report.skipped)} skipped.</p><ul>")
        for inv in report.invalid:
            errors = "".join(f"<li><code>{_e(x.get('pointer') or '(document)')}</code> [{_e(x.get('code'))}] "
                             f"{_e(x.get('message'))}</li>" for x in inv.errors)
            more = inv.error_count - len(inv.errors)
            if more > 0:
                errors += f"<li>… and {more} more</li>"
            parts.append(f"<li><code>{_e(inv.path)}</code>: invalid, {inv.error_count} "
                         f"problem{'s' if inv.error_count != 1 else ''}<details><summary>errors</summary>"
                         f"<ul>{errors}</ul></details></li>")
        for path, why in report.skipped:
            parts.append(f"<li><code>{_e(path)}</code>: skipped: {_e(why)}</li>")
        parts.append("</ul></section>")
    parts.append(f"<script>{SCRIPT}</script></body></html>\n")
    return "\n".join(parts)
