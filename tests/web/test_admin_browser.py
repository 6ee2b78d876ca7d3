"""The admin pages in headless Chromium against the real service (`verdicts serve` on a free
loopback port): upload the sample folder, wait for its board, open an item's detail and
transcript, record a manual-check decision and see the report's row change, open the diff of
two days, and upload a file with a missing column and one with `<script>` bodies.

One browser, one page object, several pages. Screenshots are kept in `var/test-artefacts/admin/`
(`VERDICTS_TEST_ARTEFACTS` moves the folder). Skips, saying so, when Chromium or Playwright is absent.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT, SEEDS

CHROMIUM = os.environ.get("VERDICTS_CHROMIUM", "/usr/bin/chromium")
ARTEFACTS = Path(os.environ.get("VERDICTS_TEST_ARTEFACTS", ROOT / "var" / "test-artefacts")) / "admin"
PAYLOAD = '<script>window.__pwned=1</script>"><img src=x onerror="window.__pwned=2">'

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (install Debian's chromium, or set VERDICTS_CHROMIUM)")
    pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed: pip install -e '.[dev]'")
    home = tmp_path_factory.mktemp("admin_home")
    port = _free_port()
    env = {**os.environ, "VERDICTS_HOME": str(home), "WAREHOUSE_URL": f"sqlite:///{home / 'warehouse.sqlite'}",
           "VERDICTS_RAW_DIR": str(SEEDS), "PYTHONPATH": str(ROOT)}
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
        yield base, home
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def browser_page(service):
    from playwright.sync_api import sync_playwright

    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(90_000)
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.add_init_script("window.__alerts=[];window.alert=function(m){window.__alerts.push(String(m));};")
        page.errors = errors
        yield page
        browser.close()


def shot(page, name: str) -> None:
    page.screenshot(path=str(ARTEFACTS / f"{name}.png"), full_page=True)


def _folder(tmp_path: Path, name: str, change=None) -> list[Path]:
    """The live_pick sample files (and golden labels) copied, `change(dataset, rows)` applied."""
    out = tmp_path / name
    out.mkdir()
    for src in sorted((SEEDS / "live_pick").glob("*.jsonl")):
        lines = src.read_text(encoding="utf-8").splitlines()
        if change:
            lines = change(src.stem, lines)
        (out / src.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return sorted(out.glob("*.jsonl"))


def _upload(page, base: str, files: list[Path]) -> None:
    page.goto(f"{base}/admin/live_pick")
    page.set_input_files("form.upload input[type=file]", [str(f) for f in files])
    page.click("form.upload button[type=submit]")


def test_admin_pages_end_to_end(service, browser_page, tmp_path):
    base, _ = service
    page = browser_page

    # The index: every domain with its days and headline figures.
    page.goto(f"{base}/admin")
    assert page.locator("section.domain").count() == 4
    assert page.locator("#d-live_pick tr[data-run='day-2026-09-08']").count() == 1
    shot(page, "01-index")

    # Upload the sample folder; the progress page hands over to the upload's board.
    page.goto(f"{base}/admin/live_pick")
    shot(page, "02-domain")
    _upload(page, base, _folder(tmp_path, "sample"))
    page.wait_for_url(re.compile(r".*/runs/up-[0-9a-f]{32}/board$"), timeout=120_000)
    upload_board = page.url
    row = page.locator("details.item[data-id='MSG-20260908-1401']")
    assert row.count() == 1
    row.locator("summary").click()
    assert "263" in row.inner_text()
    shot(page, "03-upload-board")

    # The item: evidence with its source line, and the window's chat around it.
    row.locator("p.detail a").click()
    page.wait_for_selector("#transcript")
    evidence = page.locator("#evidence").inner_text()
    assert re.search(r"live_chat\.jsonl:\d+", evidence) and re.search(r"character_sheet\.jsonl:\d+", evidence)
    focus = page.locator("#transcript tr.focus")
    assert focus.count() == 1 and "MSG-20260908-1401" in focus.inner_text()
    assert page.locator("#transcript tbody tr").count() >= 5  # the whole 30-second window
    shot(page, "04-item")

    # Two reviewers decide the same item; the second sees the first's decision only after deciding.
    review = upload_board.replace("/board", "/review/live_pick.1")
    page.goto(review)
    assert page.locator("article.review-item form.decide").count() == 0  # no name yet: nothing to decide with
    page.locator("form.who input[name=reviewer]").fill("kim")
    page.locator("form.who button[type=submit]").click()
    page.wait_for_load_state()
    first = page.locator("article.review-item").first
    item_id = first.get_attribute("data-item")
    first.locator("input[value=agree]").check()
    first.locator("input[name=note]").fill("운영자가 실제로 넘겼습니다")
    first.locator("button[type=submit]").click()
    page.wait_for_load_state()
    assert "판단한 항목 1건" in page.locator("#tally").inner_text()
    assert "동의" in page.locator(f"article[data-item='{item_id}'] .decided").first.inner_text()
    page.goto(review + "?reviewer=lee")
    mine = page.locator(f"article[data-item='{item_id}']")
    assert "다른 검토자 1명이 판단했습니다" in mine.inner_text() and "kim" not in mine.inner_text()
    mine.locator("input[value=agree]").check()
    mine.locator("button[type=submit]").click()
    page.wait_for_load_state()
    mine = page.locator(f"article[data-item='{item_id}']")
    assert "kim" in mine.inner_text() and "다수 판단: 동의" in mine.inner_text()
    team = page.locator("#team").inner_text()
    assert "kim" in team and "lee" in team and "1 / 20" in team and "n=1" in team
    shot(page, "05-review")
    exported = page.request.get(review + "/decisions.csv")
    lines = exported.text().splitlines()
    assert exported.ok and "msg_id" in lines[0] and "pick_id" in lines[0]
    assert sorted(x.split(",")[3] for x in lines[1:] if x.startswith(f"live_pick,live_pick.1,{item_id},")) == ["kim", "lee"]
    page.goto(upload_board.replace("/board", "/report"))
    metric = page.locator("tr[data-metric^='지금 답변할 질문을 운영자가']")
    assert "1 / 1" in metric.inner_text() and "판단" in metric.locator("td.status").inner_text()
    assert "kim–lee" in page.locator("#manual").inner_text()
    assert page.locator("#next").count() == 1 and page.locator("#golden table.pairs").count() == 1
    assert page.locator("#pins").count() == 1
    shot(page, "06-report")

    # The diff of two days: the "different only" view, regressions first; every item on request.
    page.goto(f"{base}/admin/live_pick/diff?a=day-2026-09-08&b=day-2026-09-09")
    assert page.locator("#metrics tbody tr").count() > 0
    assert "다른 것만" in page.locator("#items h2").inner_text() and "이전에만" in page.locator("#tally").inner_text()
    kinds = [k for k in page.locator("#items tbody tr").evaluate_all("rows => rows.map(r => r.dataset.kind)")]
    order = ["regressed", "changed", "improved", "only_before", "only_after"]
    assert kinds == sorted(kinds, key=order.index) and "same" not in kinds
    shot(page, "07-diff")

    # A file with a column missing from every row: named on the page, which stays usable.
    def no_body(dataset, lines):
        if dataset != "live_chat":
            return lines
        out = []
        for text in lines:
            try:
                obj = json.loads(text)
            except ValueError:
                continue
            if isinstance(obj, dict):
                obj.pop("body", None)
                out.append(json.dumps(obj, ensure_ascii=False))
        return out

    _upload(page, base, _folder(tmp_path, "missing", no_body))
    page.wait_for_selector("#upload-error")
    error = page.locator("#upload-error").inner_text()
    assert "live_chat.jsonl" in error and "body" in error
    assert page.locator("form.upload").count() == 1
    shot(page, "08-missing-column")

    # Log bodies that try to run show as text.
    def payloads(dataset, lines):
        if dataset != "live_chat":
            return lines
        out = []
        for text in lines:
            try:
                obj = json.loads(text)
            except ValueError:
                out.append(text)
                continue
            if isinstance(obj, dict) and isinstance(obj.get("body"), str):
                obj["body"] = PAYLOAD
            out.append(json.dumps(obj, ensure_ascii=False))
        return out

    _upload(page, base, _folder(tmp_path, "payloads", payloads))
    page.wait_for_url(re.compile(r".*/runs/up-[0-9a-f]{32}/board$"), timeout=120_000)
    page.locator("[data-toggle=open]").click()
    assert PAYLOAD in page.locator("#items").inner_text()
    page.locator("details.item p.detail a").first.click()
    page.wait_for_selector("#transcript")
    assert PAYLOAD in page.locator("#transcript").inner_text()
    assert page.evaluate("window.__pwned") is None and page.evaluate("window.__alerts.length") == 0
    shot(page, "09-payloads")
    assert not [m for m in page.errors if "Content Security Policy" in m], page.errors
