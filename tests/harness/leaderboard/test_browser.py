"""index.html in a real browser: Debian's chromium, headless, driven by selenium + chromium-driver.

Skips only when no browser is found outside CI; with CI=true (where .ci/run installs chromium)
a missing browser fails the test.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium")
                 if p and Path(p).exists()), None)
DRIVER = next((p for p in (shutil.which("chromedriver"), "/usr/bin/chromedriver") if p and Path(p).exists()), None)
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _driver(width: int, height: int, phone: bool = False):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        if IN_CI:
            raise
        pytest.skip("selenium is not installed (pip install 'vlbench[dev]')")
    if not (CHROMIUM and DRIVER):
        if IN_CI:
            pytest.fail("CI=true but chromium / chromedriver are missing (.ci/run installs them)")
        pytest.skip("no chromium + chromedriver on this machine (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={width},{height}", "--disable-background-networking", "--no-first-run"):
        options.add_argument(flag)
    if phone:  # headless windows are at least 500 px wide; emulate the phone's viewport instead
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": width, "height": height,
                                                                              "pixelRatio": 2}})
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=options)


def _rows(driver, board_id: str) -> list:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, f"#board-{board_id}-v1-0 tbody tr")


def _requested_urls(driver) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def test_sort_filter_breakdown_offline(built_board: Path, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    page = (built_board / "index.html").resolve().as_uri()
    driver = _driver(1280, 900)
    try:
        driver.get(page)
        names = [r.find_elements(By.TAG_NAME, "td")[1].text for r in _rows(driver, "mini-retrieval")]
        assert len(names) == 3 and names[0].startswith(("Alpha", "Beta", "Gamma"))
        assert any(n.startswith('Alpha & "friends"') for n in names)  # escaped in the source, shown as text
        # numeric sort: click i2t_R@1 twice (ascending, then descending) and read the DOM order
        header = next(h for h in driver.find_elements(By.CSS_SELECTOR, "#board-mini-retrieval-v1-0 thead th")
                      if h.text.startswith("i2t_R@1 "))
        column = [h.text for h in driver.find_elements(By.CSS_SELECTOR, "#board-mini-retrieval-v1-0 thead th")].index(header.text)
        header.click()
        ascending = [float(r.find_elements(By.TAG_NAME, "td")[column].get_attribute("data-v"))
                     for r in _rows(driver, "mini-retrieval")]
        assert ascending == sorted(ascending) and header.get_attribute("aria-sort") == "ascending"
        header.click()
        descending = [float(r.find_elements(By.TAG_NAME, "td")[column].get_attribute("data-v"))
                      for r in _rows(driver, "mini-retrieval")]
        assert descending == sorted(ascending, reverse=True)
        # text sort on the method column
        driver.find_elements(By.CSS_SELECTOR, "#board-mini-retrieval-v1-0 thead th")[1].click()
        by_name = [r.find_elements(By.TAG_NAME, "td")[1].text for r in _rows(driver, "mini-retrieval")]
        assert [n.split()[0] for n in by_name] == ["Alpha", "Beta", "Gamma"]
        # filter: only Beta's row stays visible on the board
        box = driver.find_element(By.ID, "filter")
        box.send_keys("beta")
        visible = [r.find_elements(By.TAG_NAME, "td")[1].text for r in _rows(driver, "mini-retrieval") if r.is_displayed()]
        assert visible == ["Beta"]
        box.clear()
        box.send_keys(" ")  # clear() fires no input event; typing does
        assert all(r.is_displayed() for r in _rows(driver, "mini-retrieval"))
        # per-group breakdown, on demand
        details = driver.find_element(By.CSS_SELECTOR, "#board-mini-decorrelated-v1-0 details")
        assert details.get_attribute("open") is None
        group_table = details.find_element(By.TAG_NAME, "table")
        assert not group_table.is_displayed()
        details.find_element(By.TAG_NAME, "summary").click()
        assert details.get_attribute("open") is not None and group_table.is_displayed()
        assert "partner" in group_table.text and "control" in group_table.text
        # reported rows are there, unranked
        reported = driver.find_elements(By.CSS_SELECTOR, "#board-coco-5k-decorrelated-v1-0 tbody tr.reported")
        assert len(reported) == 8 and all(r.find_elements(By.TAG_NAME, "td")[0].text == "–" for r in reported)
        driver.save_screenshot(str(tmp_path / "desktop.png"))
        assert [u for u in _requested_urls(driver) if not u.startswith(("file:", "data:"))] == []
    finally:
        driver.quit()
    phone = _driver(390, 844, phone=True)
    try:
        phone.get(page)
        inner, width = phone.execute_script("return [window.innerWidth, document.documentElement.scrollWidth]")
        assert inner == 390 and width <= 390  # wide tables scroll inside their box, not the page
        phone.save_screenshot(str(tmp_path / "phone.png"))
        assert [u for u in _requested_urls(phone) if not u.startswith(("file:", "data:"))] == []
    finally:
        phone.quit()
    shots = Path(os.environ.get("VLBENCH_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    for name in ("desktop.png", "phone.png"):
        assert (tmp_path / name).stat().st_size > 1000
        if shots != tmp_path:
            shutil.copy(tmp_path / name, shots / name)
