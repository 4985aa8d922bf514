"""`page_assets.py`: the page's fixed parts load nothing from the network."""

from __future__ import annotations

import re

from vlbench.leaderboard.page_assets import CSP, CSS, PAGE_LEGEND, SCRIPT


def test_the_policy_forbids_every_load_but_inline_and_data() -> None:
    rules = dict(rule.strip().split(" ", 1) for rule in CSP.split(";"))
    assert rules == {"default-src": "'none'", "img-src": "data:", "style-src": "'unsafe-inline'",
                     "script-src": "'unsafe-inline'"}


def test_style_and_script_name_no_outside_resource() -> None:
    for text in (CSS, SCRIPT):
        assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/|@import|url\(", text, re.IGNORECASE)
    assert not re.search(r"\b(fetch|XMLHttpRequest|WebSocket|import\()", SCRIPT)


def test_the_legend_explains_each_of_the_page_s_own_marks_once() -> None:
    symbols = [symbol for symbol, _ in PAGE_LEGEND]
    assert symbols == ["seeds", "bold", "filter"] and all(text.endswith(".") for _, text in PAGE_LEGEND)
