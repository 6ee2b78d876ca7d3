"""The item list of a stored day in headless Chromium against `verdicts serve`: the day's verdicts are
only in the warehouse (the raw folder is empty), the chips filter, the pager moves on, the search
narrows the counts, and nothing breaks the page's Content-Security-Policy. Screenshots are kept in
`var/test-artefacts/admin/` (`VERDICTS_TEST_ARTEFACTS` moves the folder)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

from assets.resources.warehouse import WarehouseResource
from evals import domains
from web.admin.item_list import PAGE_SIZE
from schemas import column_kinds
from tests.conftest import ROOT
from tests.web.test_admin_browser import ARTEFACTS, CHROMIUM, _free_port

pytestmark = pytest.mark.slow
DAY = "2026-09-08"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (install Debian's chromium, or set VERDICTS_CHROMIUM)")
    pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed: pip install -e '.[dev]'")
    home = tmp_path_factory.mktemp("item_list_home")
    d = domains.get("live_pick")
    d.generate(3_000, 1, home / "input")
    rows = d.judge_dir(home / "input").rows
    url = f"sqlite:///{home / 'warehouse.sqlite'}"
    WarehouseResource(url=url).replace_partition("live_pick_verdicts", DAY, pd.DataFrame(rows)[d.spec.output_columns],
                                                 json_columns=d.spec.verdict_json_columns,
                                                 kinds=column_kinds("live_pick", d.spec.output_schema))
    (home / "raw").mkdir()
    port = _free_port()
    env = {**os.environ, "VERDICTS_HOME": str(home), "WAREHOUSE_URL": url, "VERDICTS_RAW_DIR": str(home / "raw"), "PYTHONPATH": str(ROOT)}
    env.pop("VERDICTS_LIVE_TOKEN", None)
    proc = subprocess.Popen([sys.executable, "-m", "orchestration.cli", "serve", "--port", str(port)], env=env, cwd=home,
                            stdout=subprocess.DEVNULL, stderr=open(home / "serve.log", "w"))
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(base + "/healthz", timeout=2)
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                raise RuntimeError("verdicts serve did not start: " + (home / "serve.log").read_text()[-2000:])
            time.sleep(0.3)
    try:
        yield base, rows
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_the_stored_day_pages_and_filters_in_the_browser(served):
    from playwright.sync_api import sync_playwright

    base, rows = served
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        missing: list[str] = []
        page.on("response", lambda r: missing.append(r.url) if r.status >= 400 else None)
        page.goto(f"{base}/admin/live_pick/runs/day-{DAY}/items")
        assert page.locator("details.item").count() == PAGE_SIZE
        assert "창고에 저장한 판정" in page.locator("p.lead").inner_text()
        page.screenshot(path=str(ARTEFACTS / "item_list.png"), full_page=False)

        page.locator("a.chip", has_text="세계관 밖이라 넘김").click()
        page.wait_for_load_state()
        theirs = sorted(r["msg_id"] for r in rows if r["verdict"] == "세계관 밖이라 넘김")
        shown = page.locator("details.item").evaluate_all("els => els.map(e => e.dataset.id)")
        assert shown == theirs[:PAGE_SIZE]
        page.locator("a[rel=next]").click()
        page.wait_for_load_state()
        assert re.search(r"[?&]page=2", page.url)
        shown = page.locator("details.item").evaluate_all("els => els.map(e => e.dataset.id)")
        assert shown == theirs[PAGE_SIZE:2 * PAGE_SIZE]
        page.locator("details.item summary").first.click()
        assert page.locator("details.item[open] table.evidence").count() == 1
        page.screenshot(path=str(ARTEFACTS / "item_list_filtered.png"), full_page=False)

        page.fill("input[name=q]", "쿨다운")
        page.press("input[name=q]", "Enter")
        page.wait_for_load_state()
        assert "verdict=" in page.url and "q=" in page.url and "page=" not in page.url
        matching = [r for r in rows if r["verdict"] == "세계관 밖이라 넘김" and "쿨다운" in r["summary"]]
        assert f"판정 {len(matching)}건" in page.locator("p.lead").inner_text()
        assert not [m for m in errors if "Content Security Policy" in m], errors
        assert [u for u in missing if not u.endswith("/favicon.ico")] == []
        browser.close()
