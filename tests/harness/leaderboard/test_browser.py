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

from tests.harness.leaderboard.conftest import watchdog

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium")
                 if p and Path(p).exists()), None)
DRIVER = next((p for p in (shutil.which("chromedriver"), "/usr/lib/chromium/chromedriver", "/usr/bin/chromedriver")
               if p and Path(p).exists()), None)
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
COMMAND_TIMEOUT_S = 60  # one WebDriver command, session creation included
PAGE_LOAD_TIMEOUT_S = 30
TEST_TIMEOUT_S = 240  # the whole test, two browser sessions
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
    """The section of a benchmark's board, whatever its version (`board-<id>-v<version>`)."""
    from selenium.webdriver.common.by import By

    sections = [s for s in driver.find_elements(By.CSS_SELECTOR, f'section[id^="board-{benchmark_id}-v"]')
                if s.get_attribute("id")[len(f"board-{benchmark_id}-v"):][:1].isdigit()]
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


def test_sort_filter_breakdown_offline(built_board: Path, tmp_path: Path) -> None:
    _require_browser()
    from selenium.webdriver.common.by import By

    page = (built_board / "index.html").resolve().as_uri()
    with watchdog(TEST_TIMEOUT_S, "the browser test"):
        with browser(tmp_path / "profile-desktop", 1280, 900) as driver:
            driver.get(page)
            names = [_cells(r)[1].text for r in _rows(driver, "mini-retrieval")]
            assert len(names) == 3
            assert any(n.startswith('Alpha & "friends"') for n in names)  # escaped in the source, shown as text
            # numeric sort: click a metric header (ascending), then again (descending), and read the
            # DOM order of the rows. The column is one where the three entries differ, so the order
            # is fully determined; each row's name travels with its number.
            heads = _board(driver, "mini-retrieval").find_elements(By.CSS_SELECTOR, "thead th")

            def pairs(col: int) -> list[tuple[float, str]]:
                return [(float(_cells(r)[col].get_attribute("data-v")), _cells(r)[1].text)
                        for r in _rows(driver, "mini-retrieval")]

            metric_columns = [i for i, h in enumerate(heads) if h.get_attribute("data-type") == "num" and i > 0]
            column = next(i for i in metric_columns if len({v for v, _ in pairs(i)}) == 3)
            header, before = heads[column], pairs(column)
            header.click()
            assert pairs(column) == sorted(before) and header.get_attribute("aria-sort") == "ascending"
            header.click()
            assert pairs(column) == sorted(before, reverse=True)
            assert header.get_attribute("aria-sort") == "descending"
            # text sort on the method column
            heads[1].click()
            by_name = [_cells(r)[1].text for r in _rows(driver, "mini-retrieval")]
            assert [n.split()[0] for n in by_name] == ["Alpha", "Beta", "Gamma"]
            heads[1].click()
            assert [_cells(r)[1].text.split()[0] for r in _rows(driver, "mini-retrieval")] == ["Gamma", "Beta", "Alpha"]
            # filter: only Beta's row stays visible on that board; other boards' rows are hidden too
            box = driver.find_element(By.ID, "filter")
            box.send_keys("beta")
            visible = [_cells(r)[1].text for r in _rows(driver, "mini-retrieval") if r.is_displayed()]
            assert visible == ["Beta"]
            assert not any(r.is_displayed() for r in _rows(driver, "mini-decorrelated"))
            box.clear()
            box.send_keys(" ")  # clear() fires no input event; typing does
            assert all(r.is_displayed() for r in _rows(driver, "mini-retrieval"))
            box.send_keys("zeta-no-such-row")
            assert not any(r.is_displayed() for r in _rows(driver, "mini-retrieval"))
            box.clear()
            box.send_keys(" ")
            # per-group breakdown, on demand
            details = _board(driver, "mini-decorrelated").find_element(By.CSS_SELECTOR, "tbody details")
            assert details.get_attribute("open") is None
            group_table = details.find_element(By.TAG_NAME, "table")
            assert not group_table.is_displayed()
            details.find_element(By.TAG_NAME, "summary").click()
            assert details.get_attribute("open") is not None and group_table.is_displayed()
            assert "partner" in group_table.text and "control" in group_table.text
            # reported rows are there, unranked
            reported = _board(driver, "coco-5k-decorrelated").find_elements(By.CSS_SELECTOR, "tbody tr.reported")
            assert len(reported) == 8 and all(_cells(r)[0].text == "–" for r in reported)
            driver.save_screenshot(str(tmp_path / "desktop.png"))
            _assert_offline(driver, page)
        with browser(tmp_path / "profile-phone", 390, 844, phone=True) as phone:
            phone.get(page)
            inner, width = phone.execute_script("return [window.innerWidth, document.documentElement.scrollWidth]")
            assert inner == 390 and width <= 390  # wide tables scroll inside their box, not the page
            phone.save_screenshot(str(tmp_path / "phone.png"))
            _assert_offline(phone, page)
    shots = Path(os.environ.get("VLBENCH_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    for name in ("desktop.png", "phone.png"):
        assert (tmp_path / name).read_bytes().startswith(b"\x89PNG") and (tmp_path / name).stat().st_size > 1000
        if shots != tmp_path:
            shutil.copy(tmp_path / name, shots / name)
