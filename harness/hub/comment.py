"""The comment a pull request gets for each head revision, and the marker later runs read back.

Everything a submission or a pull request supplies (paths, method, team, the values validation
echoes) is written as inert text: one line, no control or format characters, every ASCII
punctuation character backslash-escaped (so no emphasis, link, image, table cell, heading or
HTML can come out of it) and `@` kept from forming a mention. Only vlbench's own words and the
hub's hexadecimal commit ids are written as Markdown. The comment ends with its marker
(`markers.py`).
"""

from __future__ import annotations

import re
import string

from vlbench.errors import plural
from vlbench.hub import plain
from vlbench.hub.markers import CLOSE, DRAFT, READY, REFUSED, Marker
from vlbench.hub.review import FileReview, Review

_PUNCTUATION = frozenset(string.punctuation)
ZERO_WIDTH_SPACE = "\u200b"
MAX_PROBLEMS_SHOWN = 50  # per file; the rest are counted by code


def md(text: object, limit: int = 200) -> str:
    """`text` as inert Markdown: it renders as the characters it holds, nothing more."""
    out = []
    for char in plain(str(text), limit):
        if char in _PUNCTUATION:
            out.append("\\" + char)
            if char == "@":  # a hub mention is matched on the raw text: break it apart
                out.append(ZERO_WIDTH_SPACE)
        else:
            out.append(char)
    return "".join(out)


def short(oid: str) -> str:
    return f"`{oid[:12]}`" if re.fullmatch(r"[0-9a-f]{7,64}", oid or "") else md(oid)


_HEADLINES = {
    READY: "valid: ready to merge",
    DRAFT: "valid, but the pull request is a draft",
    REFUSED: "not merged",
    CLOSE: "cannot be merged: closing",
}


def _score_row(f: FileReview) -> str:
    result = f.result
    assert result is not None and f.metric is not None
    main = result.main_score
    value = f.metric.format(result.scores.get(main))
    ci = result.ci95.get(main)
    interval = f" [{f.metric.format(ci[0])}, {f.metric.format(ci[1])}]" if ci else ""
    unit = " %" if f.metric.display == "percent" else ""
    placed = f.placement
    rank = f"{placed.rank} of {placed.rows}" if placed is not None else "n/a"
    if placed is not None and placed.shared_with:
        rank += f" (shared with {plural(placed.shared_with, 'other row')})"
    return (f"| {md(f.path)} | {md(f.benchmark)} v{md(f.version)} | {md(main)} {value}{interval}{unit} | "
            f"{md(rank)} |")


RANKS = ("Ranks are those of the board `vlbench leaderboard build` would publish from main with this pull "
         "request's entries: they count its rows (a method's seeds are one row, ranked by their mean), and "
         "rows share a rank where a paired bootstrap test cannot separate them.")


def _joins(f: FileReview) -> str:
    """How the entry's row differs from the entry: it joins a method's seeds."""
    placed = f.placement
    if placed is None or placed.seeds < 2 or f.metric is None:
        return ""
    unit = " %" if f.metric.display == "percent" else ""
    return (f"; joins method {md(placed.method, 100)} ({placed.seeds} seeds with it): its row shows their mean, "
            f"{md(f.metric.key)} {f.metric.format(placed.shown)}{unit}, and is ranked by it")


def _problem_lines(f: FileReview) -> list[str]:
    lines = [f"- **{md(f.path)}**" + (f" ({md(f.change)})" if f.change != "added" else "") + ":"]
    for p in f.problems[:MAX_PROBLEMS_SHOWN]:
        where = md(p.pointer or "(document)", 120)
        hint = f" (hint: {md(p.hint, 200)})" if p.hint else ""
        lines.append(f"  - {where}: \\[{md(p.code, 60)}\\] {md(p.message, 300)}{hint}")
    shown = min(len(f.problems), MAX_PROBLEMS_SHOWN)
    if f.error_count > shown:
        by_code = ", ".join(f"{md(c, 60)}: {n:,}" for c, n in sorted(f.counts_by_code.items()))
        lines.append(f"  - and {f.error_count - shown:,} more ({f.error_count:,} in all; by code: {by_code})")
    return lines


def render(review: Review, *, merging: bool) -> str:
    """The comment for `review`; `merging`: this run merges or closes (intake --merge)."""
    verdict = review.verdict
    lines = [f"**vlbench intake** · {_HEADLINES[verdict]} · commit {short(review.head)} "
             f"(checked against main at {short(review.main)})", ""]
    scored = [f for f in review.files if f.ok]
    if scored:
        lines += ["| file | benchmark | main score [95% interval] | rank it would take |", "|---|---|---|---|"]
        lines += [_score_row(f) for f in scored]
        lines.append("")
        for f in scored:
            who = f"method {md(f.method or '(none)', 100)}, team {md(f.team or '(none)', 100)}"
            what = "replaces the same team's entry" if f.replaces else "a new entry"
            lines.append(f"- {md(f.path)}: {who}; {what}{_joins(f)}")
        lines += ["", RANKS, ""]
    broken = [f for f in review.files if not f.ok]
    count = sum(max(f.error_count, 1) for f in broken) + len(review.problems)
    if broken or review.problems:
        lines.append(f"{count:,} problem{'s' if count != 1 else ''} found:")
        lines.append("")
        lines += [f"- {md(p, 500)}" for p in review.problems]
        for f in broken:
            lines += _problem_lines(f)
        lines.append("")
    lines.append(_next_step(review, merging))
    lines += ["", Marker(review.head, verdict, review.author, tuple(f.path for f in scored)).text()]
    return "\n".join(lines) + "\n"


def _next_step(review: Review, merging: bool) -> str:
    verdict = review.verdict
    if verdict == READY:
        return "Merging now." if merging else "The maintainers' next intake run with merging on merges it."
    if verdict == DRAFT:
        return ("Publish the pull request (it is a draft) and the next intake run merges it; a new commit gets a "
                "new check.")
    if verdict == CLOSE:
        outside = ", ".join(md(f.path, 120) for f in review.files if f.outside)
        return (f"This pull request changes files outside submissions/ ({outside}), which a submission pull request "
                f"never may, so {'it is closed now' if merging else 'the next intake run with merging on closes it'}. "
                "Open a new pull request with only your submission file: `vlbench submit FILE --repo-id ...` "
                "adds it under submissions/<benchmark>/.")
    return ("Nothing is merged while a problem remains. Push a new commit to this pull request that fixes them "
            "(`vlbench validate FILE` shows the same checks); every new commit gets a new check.")
