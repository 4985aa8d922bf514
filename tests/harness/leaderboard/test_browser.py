"""index.html in a real browser: Debian's chromium, headless, driven by selenium + chromium-driver.

Skips only when no browser is found outside CI; with CI set (where .ci/run installs chromium and
chromium-driver) a missing browser fails the test. Nothing here can hang: the driver is given by
path (selenium never runs its driver manager, which would download), its start, every command,
the page load and scripts have time limits, and a watchdog bounds the whole test.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.harness.leaderboard.conftest import NEWCOMER, watchdog

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium")
                 if p and Path(p).exists()), None)
DRIVER = next((p for p in (shutil.which("chromedriver"), "/usr/lib/chromium/chromedriver", "/usr/bin/chromedriver")
               if p and Path(p).exists()), None)
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
COMMAND_TIMEOUT_S = 60  # one WebDriver command, session creation included
PAGE_LOAD_TIMEOUT_S = 30
TEST_TIMEOUT_S = 300  # the whole test, up to three browser sessions
# The flags of a browser that cannot wait on anything outside this machine: no GPU process, no
# background fetches (component updates, sync, field trials), no first-run UI, a fresh profile.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", "--no-default-browser-check", "--disable-extensions")


def _require_browser() -> None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        if IN_CI:
            raise
        pytest.skip("selenium is not installed (pip install 'vlbench[dev]')")
    if not (CHROMIUM and DRIVER):
        if IN_CI:
            pytest.fail("CI is set but chromium / chromedriver are missing (.ci/run installs them with apt-get)")
        pytest.skip("no chromium + chromedriver on this machine (apt-get install chromium chromium-driver)")


@contextmanager
def browser(profile: Path, width: int, height: int, phone: bool = False) -> Iterator[object]:
    """A headless chromium session with a fresh profile folder; always quit, even on failure."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
        options.add_argument(flag)
    if phone:  # headless windows are at least 500 px wide; emulate the phone's viewport instead
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": width, "height": height,
                                                                              "pixelRatio": 2}})
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    options.page_load_strategy = "normal"
    # Service(DRIVER): a given path skips Selenium Manager; Service.start polls for ~30 s at most.
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        config = getattr(driver.command_executor, "_client_config", None)
        if config is not None:  # selenium >= 4.26: bound every later command too
            config.timeout = COMMAND_TIMEOUT_S
        driver.set_page_load_timeout(PAGE_LOAD_TIMEOUT_S)
        driver.set_script_timeout(10)
        driver.implicitly_wait(0)
        yield driver
    finally:
        driver.quit()


def _board(driver, benchmark_id: str):
    """The section of a benchmark's current board, whatever its version (`board-<id>-v<version>`)."""
    from selenium.webdriver.common.by import By

    sections = [s for s in driver.find_elements(By.CSS_SELECTOR, f'section[id^="board-{benchmark_id}-v"]')
                if s.get_attribute("id")[len(f"board-{benchmark_id}-v"):][:1].isdigit()
                and "retired" not in s.find_element(By.TAG_NAME, "h2").text]
    assert len(sections) == 1, f"expected one board for {benchmark_id}, found {len(sections)}"
    return sections[0]


def _rows(driver, benchmark_id: str) -> list:
    from selenium.webdriver.common.by import By

    return _board(driver, benchmark_id).find_elements(By.CSS_SELECTOR, "tbody tr")


def _cells(row) -> list:
    from selenium.webdriver.common.by import By

    return row.find_elements(By.TAG_NAME, "td")


NETWORK_SCHEMES = ("http:", "https:", "ws:", "wss:", "ftp:")


def _requests(driver) -> list[tuple[str, str]]:
    """(document URL, requested URL) of every request the browser sent, from its performance log.
    A fresh headless profile also loads its own new-tab page (chrome:// URLs): not network."""
    seen = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            params = message["params"]
            seen.append((params.get("documentURL", ""), params["request"]["url"]))
    return seen


def _assert_offline(driver, page: str) -> None:
    seen = _requests(driver)
    from_page = [url for document, url in seen if document == page]
    assert page in from_page  # the log works: it saw the page itself
    assert [url for url in from_page if not url.startswith(("file:", "data:"))] == []
    assert [url for _, url in seen if url.lower().startswith(NETWORK_SCHEMES)] == []


def _visible_names(driver, benchmark_id: str) -> list[str]:
    return [_cells(r)[1].text for r in _rows(driver, benchmark_id) if r.is_displayed()]


def _type(driver, text: str) -> None:
    from selenium.webdriver.common.by import By

    box = driver.find_element(By.ID, "filter")
    box.clear()
    box.send_keys(text if text else " ")  # clear() fires no input event; typing does


def _fits(driver) -> None:
    """No horizontal overflow: not the page, and no table wider than its box."""
    inner, width = driver.execute_script("return [document.documentElement.clientWidth, "
                                         "document.documentElement.scrollWidth]")
    assert width <= inner, f"the page is {width} px wide in a {inner} px window"
    wide = driver.execute_script("return Array.from(document.querySelectorAll('.wrap'))"
                                 ".filter(function(w){return w.scrollWidth>w.clientWidth;})"
                                 ".map(function(w){return w.parentNode.id+': '+w.scrollWidth+' > '+w.clientWidth;})")
    assert wide == [], f"tables run past the window: {wide}"


def test_order_fit_filter_sort_offline(page_board: Path, tmp_path: Path) -> None:
    _require_browser()
    from selenium.webdriver.common.by import By

    page = (page_board / "index.html").resolve().as_uri()
    shots = Path(os.environ.get("VLBENCH_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    with watchdog(TEST_TIMEOUT_S, "the browser test"):
        for width in (1920, 1280):
            with browser(tmp_path / f"profile-{width}", width, 1000) as driver:
                driver.get(page)
                # order: the first table's first row is a scored entry; reported-only boards and
                # retired versions come after every current scored board
                first = driver.find_element(By.CSS_SELECTOR, "table.board tbody tr")
                assert "scored" in first.get_attribute("class").split() and first.is_displayed()
                sections = driver.find_elements(By.CSS_SELECTOR, "section[id^=board-]")
                kinds = ["retired" if "retired" in s.find_element(By.TAG_NAME, "h2").text else
                         "scored" if s.find_elements(By.CSS_SELECTOR, "tbody tr.scored") else "reported"
                         for s in sections]
                assert kinds == sorted(kinds, key=["scored", "reported", "retired"].index), kinds
                # navigation: each board once, the current version before the retired one
                nav = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "nav a")]
                assert len(nav) == len(set(nav))
                assert nav.index("mini-decorrelated") < nav.index("mini-decorrelated v1.0 (retired)")
                _fits(driver)
                driver.save_screenshot(str(shots / f"page-{width}.png"))
                if width == 1920:
                    continue
                _check_filter(driver)
                _check_sort(driver)
                _fits(driver)  # with seeds and per-group tables open
                driver.save_screenshot(str(shots / "page-1280-open.png"))
                _assert_offline(driver, page)
        with browser(tmp_path / "profile-phone", 390, 844, phone=True) as phone:
            phone.get(page)
            inner, width = phone.execute_script("return [window.innerWidth, document.documentElement.scrollWidth]")
            assert inner == 390 and width <= 390  # wide tables scroll inside their box, not the page
            phone.save_screenshot(str(shots / "phone.png"))
            _assert_offline(phone, page)
    for name in ("page-1920.png", "page-1280.png", "page-1280-open.png", "phone.png"):
        assert (shots / name).read_bytes().startswith(b"\x89PNG") and (shots / name).stat().st_size > 1000


def _check_filter(driver) -> None:
    from selenium.webdriver.common.by import By

    names = _visible_names(driver, "mini-retrieval")
    assert any(n.startswith('Alpha & "friends"') for n in names)  # escaped in the source, shown as text
    # the seeds are one row until opened
    assert [n for n in names if "Delta" in n] == ["3 seeds Delta arm 1"]
    _type(driver, "beta")
    assert _visible_names(driver, "mini-retrieval") == ["Beta"]
    assert _visible_names(driver, "mini-decorrelated") == []
    # a number at the end matches whole: seed 1 is not seed 10; the seed is shown under its method
    _type(driver, "seed 1")
    assert _visible_names(driver, "mini-retrieval") == ["3 seeds Delta arm 1", "Delta arm 1 (seed 1)"]
    _type(driver, "arm 1")
    assert _visible_names(driver, "mini-retrieval") == ["3 seeds Delta arm 1"]
    _type(driver, "zeta-no-such-row")
    assert _visible_names(driver, "mini-retrieval") == []
    _type(driver, "")
    assert len(_visible_names(driver, "mini-retrieval")) == 4  # alpha, beta, gamma, the Delta seeds
    # per-group tables open on demand and stay open under a filter that keeps their row
    board = _board(driver, "mini-decorrelated")
    button = board.find_element(By.CSS_SELECTOR, "tbody tr.scored button.toggle")
    groups = board.find_element(By.CSS_SELECTOR, "tbody tr.groups")
    assert not groups.is_displayed()
    button.click()
    assert groups.is_displayed() and "partner" in groups.text and "control" in groups.text
    _type(driver, "gamma")
    assert groups.is_displayed()
    _type(driver, "")
    # reported rows: unranked, a short citation with its link
    reported = _board(driver, "coco-5k-decorrelated").find_elements(By.CSS_SELECTOR, "tbody tr.reported")
    assert len(reported) == 8 and all(_cells(r)[0].text == "–" for r in reported)
    cite = _cells(reported[0])[2]
    assert cite.text.startswith("Kim et al. 2023, Table") and len(cite.text) < 40
    assert cite.find_element(By.TAG_NAME, "a").get_attribute("href").startswith("https://arxiv.org/")


def _check_sort(driver) -> None:
    from selenium.webdriver.common.by import By

    board = _board(driver, "mini-retrieval")
    seeds = board.find_element(By.CSS_SELECTOR, "tbody tr.seedgroup button.toggle")
    seeds.click()
    assert len(_visible_names(driver, "mini-retrieval")) == 7
    heads = board.find_elements(By.CSS_SELECTOR, "thead th")

    def main_rows(col: int) -> list[tuple[float, str]]:
        rows = [r for r in _rows(driver, "mini-retrieval") if "sub" not in r.get_attribute("class").split()]
        return [(float(_cells(r)[col].get_attribute("data-v")), _cells(r)[1].text) for r in rows]

    metric_columns = [i for i, h in enumerate(heads) if h.get_attribute("data-type") == "num" and i > 0]
    column = next(i for i in metric_columns if len({v for v, _ in main_rows(i)}) == 4)
    header, before = heads[column], main_rows(column)
    assert "↑" in header.text
    # the best value of the column is marked
    best = max(v for v, _ in before)
    marked = [r for r in _rows(driver, "mini-retrieval") if "best" in (_cells(r)[column].get_attribute("class") or "")]
    assert [float(_cells(r)[column].get_attribute("data-v")) for r in marked] == [best]
    header.click()  # first click on a higher-is-better column: best first
    assert main_rows(column) == sorted(before, reverse=True) and header.get_attribute("aria-sort") == "descending"
    header.click()
    assert main_rows(column) == sorted(before) and header.get_attribute("aria-sort") == "ascending"
    # the seeds move with their method: right after it, in their order
    order = [r.get_attribute("class").split() for r in _rows(driver, "mini-retrieval")]
    start = next(i for i, c in enumerate(order) if "seedgroup" in c)
    assert all("seed" in c for c in order[start + 1:start + 4])
    heads[1].click()  # text: A to Z first
    firsts = [n.removeprefix("3 seeds ").split()[0] for _, n in main_rows(column)]
    assert firsts == ["Alpha", "Beta", "Delta", "Gamma"]  # the seeds' row sorts by its method's name


# --- what a visitor sees: ranks over the rows shown, the values they show, marks, groups, the plot --


def _main_rows(section) -> list:
    from selenium.webdriver.common.by import By

    return [r for r in section.find_elements(By.CSS_SELECTOR, "table.board > tbody > tr")
            if not {"sub", "reported"} & set(r.get_attribute("class").split())]


def _column(section, key: str) -> int:
    from selenium.webdriver.common.by import By

    heads = section.find_elements(By.CSS_SELECTOR, "thead th")
    labels = [h.get_attribute("textContent").replace("\u00a0", " ").rsplit(" ", 1)[0] for h in heads]
    return labels.index(key)


def _check_rows(driver, board: dict) -> None:
    """Ranks 1..N over the rows shown; order, rank and the shown main value agree with each other
    and with leaderboard.json's rows."""
    section = _board(driver, board["benchmark"])
    rows = _main_rows(section)
    assert len(rows) == len(board["rows"]) and all(r.is_displayed() for r in rows)
    column = _column(section, board["main_score"])
    ranks = [int(_cells(r)[0].text) for r in rows]
    values = [float(_cells(r)[column].get_attribute("data-v")) for r in rows]
    assert ranks[0] == 1 and all(r in (ranks[i], i + 2) for i, r in enumerate(ranks[1:])), ranks
    assert max(ranks) <= len(rows)
    assert values == sorted(values, reverse=True), values  # every main score here: higher is better
    assert ranks == [r["rank"] for r in board["rows"]] and values == [r["scores"][board["main_score"]] for r in board["rows"]]
    for row, expected in zip(rows, board["rows"]):
        shown = _cells(row)[column].text.splitlines()[0]
        assert float(shown) == pytest.approx(round(100 * expected["scores"][board["main_score"]], 1)
                                             if board["main_score"] != "RSUM" else expected["scores"]["RSUM"], abs=0.051)
        if expected["seeds"]:
            assert _cells(row)[1].text.startswith(f"{expected['seeds']} seeds ")


def _check_marks(driver, board: dict) -> None:
    """The best mark of a column: the best contender's main row (never a floor's); a floor's cells
    above every contender are marked as such, and explained under the table."""
    from selenium.webdriver.common.by import By

    section = _board(driver, board["benchmark"])
    rows = _main_rows(section)
    floors = ["floor" in r.get_attribute("class").split() for r in rows]
    assert floors == [r["floor"] for r in board["rows"]]
    for cell in section.find_elements(By.CSS_SELECTOR, "td.best"):
        row = cell.find_element(By.XPATH, "..")
        assert row in rows and not floors[rows.index(row)]
    heads = section.find_elements(By.CSS_SELECTOR, "thead th")
    for column in range(3, len(heads)):
        contenders = [float(_cells(r)[column].get_attribute("data-v")) for r, f in zip(rows, floors) if not f]
        marked = [float(_cells(r)[column].get_attribute("data-v")) for r in rows
                  if "best" in _cells(r)[column].get_attribute("class").split()]
        assert marked and set(marked) == {max(contenders)}
    wins = {n["metric"] for n in board["floor_notes"]}
    floor_wins = {heads[c].get_attribute("textContent").replace("\u00a0", " ").rsplit(" ", 1)[0]
                  for r, f in zip(rows, floors) if f for c in range(3, len(heads))
                  if "floorwins" in _cells(r)[c].get_attribute("class").split()}
    assert floor_wins == wins
    notes = section.find_elements(By.CSS_SELECTOR, "p.floor-note")
    assert len(notes) == (1 if wins else 0)
    if wins:
        assert "is a chance floor, not a contender" in notes[0].text and all(w in notes[0].text for w in wins)


def _check_group_breakdown(driver, board: dict) -> None:
    """Every method row of the decorrelated board opens its per-group table: the mean of its seeds."""
    from selenium.webdriver.common.by import By

    section = _board(driver, board["benchmark"])
    for row, expected in zip(_main_rows(section), board["rows"]):
        button = next(b for b in row.find_elements(By.CSS_SELECTOR, "button.toggle") if b.text.endswith("groups"))
        groups = section.find_element(By.ID, button.get_attribute("aria-controls"))
        assert not groups.is_displayed()
        button.click()
        assert groups.is_displayed()
        cells = {tr.find_elements(By.TAG_NAME, "td")[0].text: [td.text for td in tr.find_elements(By.TAG_NAME, "td")[1:]]
                 for tr in groups.find_elements(By.CSS_SELECTOR, "table.groups tr")[1:]}
        assert set(cells) == {"partner", "control"}
        partner = float(cells["partner"][0].split(" ± ")[0])
        assert partner == pytest.approx(100 * expected["scores"]["ODmAP@1/partner"], abs=0.051)
        assert (" ± " in cells["partner"][0]) == bool(expected["ci95"].get("ODmAP@1/partner"))
        button.click()


def _check_plot_data(doc: dict, submissions: Path) -> None:
    """From the data behind the plot: every pair is one model (the two files' recorded provenance,
    read here) on two benchmarks of one world; each point's seed count is its pairs and its row's."""
    from vlbench.registry import registry

    reg = registry()
    rows = {(b["benchmark"], r["method"]): r for b in doc["boards"] if not b["retired"] for r in b["rows"]}
    [panel] = [p for p in doc["plot"] if p["scored"]]
    assert (panel["y_benchmark"], panel["x_benchmark"]) == ("mini-decorrelated", "mini-shapes-retrieval")
    assert reg.benchmark(panel["y_benchmark"]).option("mini_world") == reg.benchmark(panel["x_benchmark"]).option(
        "mini_world") == "v3"
    labels = []
    for point in panel["scored"]:
        for pair in point["pairs"]:
            y, x = (json.loads((submissions / pair[f"{s}_submission"]).read_text(encoding="utf-8")) for s in "yx")
            assert (y["benchmark"], x["benchmark"]) == (panel["y_benchmark"], panel["x_benchmark"])
            ry, rx = y["meta"]["extra"]["recipe"], x["meta"]["extra"]["recipe"]
            assert (ry["recipe"], ry["seed"], ry["config"], ry["model_config"], ry["train"]["final_loss"]) == (
                rx["recipe"], rx["seed"], rx["config"], rx["model_config"], rx["train"]["final_loss"])
            assert ry.get("pretrained_file", {}).get("sha256") == rx.get("pretrained_file", {}).get("sha256")
        row = rows[(panel["y_benchmark"], point["method"])]
        assert point["seeds"] == len(point["pairs"]) == (row["seeds"] or 1)
        labels.append(point["label"])
    assert sorted(labels) == sorted(["mini-odmap arm 1 biased (mean of 3 seeds)",
                                     "mini-odmap arm 3 + synthetic (D') (mean of 3 seeds)", NEWCOMER])
    assert {g["submission"] for g in panel["left_out"]} == {"mini-decorrelated/random.json",
                                                            "mini-shapes-retrieval/random.json"}
    assert panel["note"].endswith("; left out 2 with no recorded model provenance (meta.extra.recipe: recipe, config, seed): "
                                  "mini-decorrelated/random.json, mini-shapes-retrieval/random.json.")


def _check_plot_on_page(driver, doc: dict, min_px: float) -> list[float]:
    """The inline plot's legend names the plotted points; its text is at least `min_px` tall as shown,
    no two legend lines overlap, and all of it lies inside the figure."""
    from selenium.webdriver.common.by import By

    svg = driver.find_element(By.CSS_SELECTOR, "figure.plot svg.plot")
    entries = [g.get_attribute("data-label") for g in svg.find_elements(By.CSS_SELECTOR, "g.legend-entry")]
    assert sorted(entries) == sorted(p["label"] for panel in doc["plot"] for p in panel["scored"] + panel["reported"])
    sizes, boxes, outer = driver.execute_script("""
        var svg=document.querySelector('figure.plot svg.plot');
        var scale=svg.getBoundingClientRect().width/svg.viewBox.baseVal.width;
        var texts=Array.from(svg.querySelectorAll('text.legend-text'));
        var r=svg.getBoundingClientRect();
        return [texts.map(function(t){return parseFloat(t.getAttribute('font-size'))*scale;}),
                Array.from(svg.querySelectorAll('text.legend-text tspan, text.note tspan')).map(function(t){
                  var b=t.getBoundingClientRect();return [b.left,b.top,b.right,b.bottom];}),
                [r.left,r.top,r.right,r.bottom]];""")
    assert sizes and min(sizes) >= min_px, sizes
    for i, a in enumerate(boxes):
        assert outer[0] <= a[0] and a[2] <= outer[2] + 0.5 and outer[1] <= a[1] and a[3] <= outer[3] + 0.5, (a, outer)
        for b in boxes[i + 1:]:
            overlap = min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1
            assert not overlap, (a, b)
    return sizes


def _shot(driver, path: Path, selector: str | None = None) -> None:
    """The whole page, or one element of it, as the page lays it out from the top (the sticky
    navigation bar in its place, not over the element)."""
    import base64

    driver.execute_script("window.scrollTo(0, 0)")
    options: dict = {"format": "png", "captureBeyondViewport": True}
    if selector:
        x, y, w, h = driver.execute_script(
            "var r=document.querySelector(arguments[0]).getBoundingClientRect();"
            "return [r.left+window.scrollX, r.top+window.scrollY, r.width, r.height];", selector)
        options["clip"] = {"x": x, "y": y, "width": w, "height": h, "scale": 1}
    path.write_bytes(base64.b64decode(driver.execute_cdp_cmd("Page.captureScreenshot", options)["data"]))


def test_a_visitor_sees_ranked_rows_marks_groups_and_the_plot(visitor_board: Path, tmp_path: Path) -> None:
    """Seed groups, a newcomer's single run and chance floors, as a visitor sees them at 1280 and
    1920 px: ranks, order and shown values agree; method rows open their group breakdown; best
    marks go to contenders; the plot pairs one model on two benchmarks of one world, and its legend
    is legible. Screenshots: the folder printed below (or $VLBENCH_SCREENSHOTS)."""
    _require_browser()

    doc = json.loads((visitor_board / "leaderboard.json").read_text(encoding="utf-8"))
    _check_plot_data(doc, visitor_board.parent / "submissions")
    boards = {b["benchmark"]: b for b in doc["boards"] if b["rows"] and not b["retired"]}
    assert set(boards) == {"mini-decorrelated", "mini-shapes-retrieval", "mini-retrieval", "mini-grounding"}
    assert [r["method"] for r in boards["mini-shapes-retrieval"]["rows"]][:2] == [
        "mini-odmap arm 3 + synthetic (D')", NEWCOMER]  # the newcomer's 361.3 below the group's mean 375.7
    page = (visitor_board / "index.html").resolve().as_uri()
    shots = Path(os.environ.get("VLBENCH_SCREENSHOTS", tmp_path / "screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots of the visitor's board: {shots}")
    legend = {}
    with watchdog(TEST_TIMEOUT_S, "the visitor's browser test"):
        for width in (1280, 1920):
            with browser(tmp_path / f"visitor-{width}", width, 1000) as driver:
                driver.get(page)
                _fits(driver)
                for board in boards.values():
                    _check_rows(driver, board)
                    _check_marks(driver, board)
                _check_group_breakdown(driver, boards["mini-decorrelated"])
                legend[width] = _check_plot_on_page(driver, doc, min_px=13.0)
                _shot(driver, shots / f"visitor-{width}.png")
                _shot(driver, shots / f"visitor-plot-{width}.png", "figure.plot")
                _shot(driver, shots / f"visitor-grounding-{width}.png", 'section[id^="board-mini-grounding-v"]')
                _assert_offline(driver, page)
    print(f"legend text as shown: {min(legend[1280]):.1f} px at 1280 px, {min(legend[1920]):.1f} px at 1920 px")
    for name in ("visitor-1280.png", "visitor-1920.png", "visitor-plot-1280.png", "visitor-plot-1920.png",
                 "visitor-grounding-1280.png"):
        assert (shots / name).read_bytes().startswith(b"\x89PNG")
