"""`index.html`: one static, offline page (inline CSS, script and plot; no external resource).

Every submitted string is escaped with `html.escape`; only http(s) links are emitted. A Content
Security Policy forbids every network load, so the page cannot fetch anything even by mistake.
Each table cell carries its sort key in `data-v` (numbers for metric columns), which the inline
script sorts on; the filter box hides rows whose text does not contain the typed words.
"""

from __future__ import annotations

import base64
import html

from vlbench.leaderboard.build import Board, BuildReport
from vlbench.leaderboard.render import (
    GENERATED,
    LEGEND,
    REPORTED_MARK,
    breakdown,
    canonical_value,
    columns,
    entry_cell,
    entry_name,
    http_url,
    reported_cell,
)

CSS = """
*{box-sizing:border-box}body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;
max-width:80em;padding:0 1em 2em;color:#222;line-height:1.4}
nav{position:sticky;top:0;background:#fff;padding:.5em 0;border-bottom:1px solid #ddd;z-index:1}
nav{display:flex;flex-wrap:wrap;gap:.2em .9em}
#filter{width:100%;max-width:30em;padding:.4em;font-size:1em;margin:.5em 0}
.wrap{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;margin:.5em 0;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right;vertical-align:top}
td.t,th.t{text-align:left}
th{background:#f4f4f4;cursor:pointer;user-select:none;white-space:nowrap}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
tr.reported{background:#fff8e6;font-style:italic}
details table{font-size:.9em}
img.plot{max-width:100%;height:auto}
dl.legend dt{font-weight:bold;float:left;clear:left;min-width:4em}dl.legend dd{margin-left:5em}
@media (max-width:40em){body{padding:0 .4em}th,td{padding:.2em .3em;font-size:.85em}dl.legend dd{margin-left:0}
dl.legend dt{float:none}}
"""

SCRIPT = """
(function(){
function key(td){return td?td.getAttribute('data-v'):'';}
document.querySelectorAll('table.board').forEach(function(table){
  var heads=table.querySelectorAll('thead th');
  heads.forEach(function(th,col){
    th.tabIndex=0;
    var go=function(){
      var numeric=th.getAttribute('data-type')==='num';
      var dir=th.getAttribute('aria-sort')==='ascending'?-1:1;
      heads.forEach(function(h){h.removeAttribute('aria-sort');});
      th.setAttribute('aria-sort',dir===1?'ascending':'descending');
      var body=table.tBodies[0];
      var rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){
        var x=key(a.cells[col]),y=key(b.cells[col]);
        if(numeric){
          var ex=(x===''),ey=(y==='');
          if(ex||ey){return ex===ey?0:(ex?1:-1);}
          return dir*(parseFloat(x)-parseFloat(y));
        }
        return dir*x.localeCompare(y);
      });
      rows.forEach(function(r){body.appendChild(r);});
    };
    th.addEventListener('click',go);
    th.addEventListener('keydown',function(e){if(e.key==='Enter'){go();}});
  });
});
var box=document.getElementById('filter');
box.addEventListener('input',function(){
  var words=box.value.toLowerCase().split(/\\s+/).filter(Boolean);
  document.querySelectorAll('table.board tbody tr').forEach(function(tr){
    var text=tr.textContent.toLowerCase();
    tr.hidden=!words.every(function(w){return text.indexOf(w)>=0;});
  });
});
})();
"""

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _anchor(board: Board) -> str:
    return "board-" + "".join(c if c.isalnum() else "-" for c in f"{board.benchmark.id}-v{board.benchmark.version}")


def _link(url: object, label: str) -> str:
    safe = http_url(url)
    return f'<a href="{_e(safe)}" rel="nofollow noopener noreferrer">{label}</a>' if safe else label


def _number(value: float | None) -> str:
    value = canonical_value(value)
    return "" if value is None else repr(value)


def _board(board: Board) -> str:
    b = board.benchmark
    cols = columns(board)
    out = [f'<section id="{_anchor(board)}"><h2>{_e(b.id)} <small>(v{_e(b.version)}, {_e(b.task)})</small></h2>',
           f"<p>{_e(b.description)} Main score: <code>{_e(b.main_score)}</code>.</p>",
           '<div class="wrap"><table class="board"><thead><tr>',
           '<th data-type="num">rank</th><th class="t">method</th><th class="t">team / source</th>']
    for key in cols:
        arrow = "↑" if b.metric(key).higher_is_better else "↓"
        out.append(f'<th data-type="num" title="{_e(b.metric(key).description)}">{_e(key)} {arrow}</th>')
    out.append('<th class="t">links</th><th class="t">by group</th></tr></thead><tbody>')
    for e in board.entries:
        meta = e.result.meta
        cells = [f'<td data-v="{e.rank}">{e.rank}</td>',
                 f'<td class="t" data-v="{_e(entry_name(e))}">{_link(meta.get("url"), _e(entry_name(e)))}</td>',
                 f'<td class="t" data-v="{_e(meta.get("team", ""))}">{_e(meta.get("team", ""))}</td>']
        for key in cols:
            value = e.result.scores.get(key)
            cells.append(f'<td data-v="{_number(value)}">{_e(entry_cell(board, e, key))}</td>')
        links = [_link(meta.get("paper"), "paper") if http_url(meta.get("paper")) else "",
                 _link(meta.get("url"), "url") if http_url(meta.get("url")) else ""]
        cells.append(f'<td class="t" data-v="">{" ".join(x for x in links if x)}</td>')
        bases, rows = breakdown(board, e)
        if rows:
            inner = "<table><tr><th class=\"t\">group</th>" + "".join(f"<th>{_e(x)}</th>" for x in bases) + "</tr>"
            inner += "".join("<tr>" + "".join(f'<td{" class=t" if i == 0 else ""}>{_e(c)}</td>' for i, c in enumerate(r))
                             + "</tr>" for r in rows) + "</table>"
            cells.append(f'<td class="t" data-v=""><details><summary>{len(rows)} groups</summary>{inner}</details></td>')
        else:
            cells.append('<td class="t" data-v=""></td>')
        out.append(f'<tr class="scored" data-path="{_e(e.path)}">' + "".join(cells) + "</tr>")
    for r in board.reported:
        cells = ['<td data-v="">–</td>',
                 f'<td class="t" data-v="{_e(r.method)}">{_e(r.method)} {REPORTED_MARK}</td>',
                 f'<td class="t" data-v="{_e(r.source_title)}">{_e(r.source_title)}<br><small>{_e(r.provenance)}</small></td>']
        for key in cols:
            cells.append(f'<td data-v="{_number(r.value(key))}">{_e(reported_cell(r, key))}</td>')
        cells.append(f'<td class="t" data-v="">{_link(r.source_url, "paper")}</td><td class="t" data-v=""></td>')
        out.append('<tr class="reported">' + "".join(cells) + "</tr>")
    out.append("</tbody></table></div></section>")
    return "\n".join(out)


def to_html(report: BuildReport, plot_png: bytes | None) -> str:
    nav = "".join(f'<a href="#{_anchor(b)}">{_e(b.benchmark.id)}</a>' for b in report.boards)
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
        '<details class="legend-box" open><summary>Legend</summary><dl class="legend">',
        *(f"<dt>{_e(symbol)}</dt><dd>{_e(text)}</dd>" for symbol, text in LEGEND),
        "</dl><p>Data: <a href=\"leaderboard.csv\">leaderboard.csv</a>, "
        "<a href=\"leaderboard.json\">leaderboard.json</a>.</p></details>",
    ]
    if plot_png:
        data = base64.b64encode(plot_png).decode("ascii")
        parts.append('<figure><img class="plot" alt="ODmAP@1 against image-to-text R@1 per method" '
                     f'src="data:image/png;base64,{data}"><figcaption>ODmAP@1 (decorrelated benchmark) against '
                     "i2t R@1 (its retrieval benchmark) per method: a scored method appears when the same "
                     "meta.method is on both boards; reported rows pair by model name within a paper."
                     "</figcaption></figure>")
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
