"""The intake comment: submitted text renders as the characters it holds (a CommonMark + GFM-table
renderer, markdown-it-py, turns it into no link, image, emphasis, heading, HTML or extra table
cell), mentions are broken, and the marker round-trips whatever a path holds."""

from __future__ import annotations

import json
import re

import pytest

from tests.harness.hub.conftest import BOARD, entry, intake, maintainer_comments
from tests.harness.hub.standin import HubStandIn, Repo
from vlbench.hub.comment import md
from vlbench.hub.markers import Marker, own_markers, parse_markers

markdown_it = pytest.importorskip("markdown_it")
pytest.importorskip("huggingface_hub")
from huggingface_hub import CommitOperationAdd, HfApi  # noqa: E402

HOSTILE = ("**bold** _it_ [link](https://evil.example/x) ![pixel](https://t.example/p.png) <img src=x onerror=alert(1)> "
           "<script>alert(1)</script> `code` # heading @carol &amp; &#60;b&#62; | cell | \\| ~~gone~~ "
           "\u202eevil\u202c line\nbreak")
TAGS = re.compile(r"<(a|img|script|strong|em|h\d|code|del|s|iframe|b)\b", re.I)
FORBIDDEN = re.compile(r"<(a|img|script|em|h\d|del|s|iframe|b)\b", re.I)  # never in a comment of ours


def render_html(text: str) -> str:
    return markdown_it.MarkdownIt("commonmark").enable("table").enable("strikethrough").render(text)


def visible(html: str) -> str:
    import html as html_module

    return html_module.unescape(re.sub(r"<[^>]+>", "", html))


def test_md_renders_as_its_characters() -> None:
    html = render_html(md(HOSTILE, 1000))
    assert not TAGS.search(html), html
    shown = visible(html).replace("\u200b", "")
    # what is shown is the text itself: one line, without the bidi overrides
    expected = " ".join(HOSTILE.replace("\u202e", " ").replace("\u202c", " ").split())
    assert shown.strip() == expected
    assert not re.search(r"@\w", md(HOSTILE, 1000))  # no mention in the raw text either


def test_marker_round_trips_and_cannot_end_the_html_comment() -> None:
    path = "submissions/x/a-->b<!--c&d!.json"
    marker = Marker("a" * 40, "ready", "alice", (path,))
    text = marker.text()
    assert text.count("-->") == 1 and text.endswith(" -->") and "<" not in text[4:] and "!" not in text[4:]
    assert parse_markers(f"prose\n\n{text}\n") == [marker]
    assert parse_markers("<!-- vlbench-intake {not json} -->") == []
    assert parse_markers('<!-- vlbench-intake {"head": "x"} -->') == []


def test_only_the_intake_accounts_markers_count() -> None:
    marker = Marker("b" * 40, "ready", "bob", ())
    events = [{"type": "comment", "author": {"name": who}, "data": {"latest": {"raw": marker.text()}}}
              for who in ("bob", "maintainer")]
    events.append({"type": "commit", "author": {"name": "maintainer"}, "data": {"oid": "c"}})
    assert own_markers(events, "maintainer") == [marker]
    assert own_markers(events[:1], "maintainer") == []


def test_hostile_submission_comment_renders_inert(hub: HubStandIn, board: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the whole pipeline: hostile meta in a valid file, hostile keys in an invalid one,
    a hostile path; the posted comment renders to the table and lists vlbench wrote, nothing else."""
    good = json.loads(entry(1, "x", "a|b"))
    # meta.method refuses < > and control characters, and holds at most 200 characters
    good["meta"]["method"] = "**b** _i_ [l](https://e.example) ![p](https://t.example/p.png) `c` # h @carol &amp; | c | ~~g~~"
    bad = json.loads(entry(2, "y"))
    first = next(iter(bad["predictions"]["image_to_text"]))
    bad["predictions"]["image_to_text"]["<script>alert(1)</script>"] = bad["predictions"]["image_to_text"].pop(first)
    bad["predictions"]["image_to_text"]["@carol [x](https://evil.example) | |"] = ["**1**"]
    files = {"submissions/mini-retrieval/good.json": json.dumps(good).encode(),
             "submissions/mini-retrieval/bad.json": json.dumps(bad).encode(),
             "submissions/mini-retrieval/[click](https:evil.example)<img src=x>.json": b"{}"}
    HfApi(token="hf_bob", endpoint=hub.url).create_commit(
        BOARD, [CommitOperationAdd(path_in_repo=p, path_or_fileobj=d) for p, d in files.items()],
        commit_message="x", repo_type="dataset", create_pr=True)
    assert intake(monkeypatch) == 0
    (text,) = maintainer_comments(board, 1)
    html = render_html(text)
    assert not FORBIDDEN.search(html), html
    import html as html_module

    # vlbench's own markup only: the headline and the files' names in bold, commit ids and commands as code
    for strong in re.findall(r"<strong>(.*?)</strong>", html):
        assert strong == "vlbench intake" or html_module.unescape(strong) in files, strong
    for code in re.findall(r"<code>(.*?)</code>", html):
        assert re.fullmatch(r"[0-9a-f]{12}", code) or code.startswith("vlbench "), code
    assert good["meta"]["method"] in html_module.unescape(html).replace("\u200b", "")  # shown as written
    assert html.count("<table>") == 1
    for row in re.findall(r"<tr>(.*?)</tr>", html, re.S):
        assert len(re.findall(r"<t[hd]>", row)) == 4, row
    assert not re.search(r"(?<!\\)@\w", text)
    assert "unknown\\_query\\_id" in text and "missing\\_query" in text  # the invalid file's problems
    assert parse_markers(text)[0].verdict == "refused"
