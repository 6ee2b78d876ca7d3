"""The operator's console in a real headless Chromium (Playwright driving Debian's chromium):
windows arrive while `verdicts replay --to ws://…` feeds the service, a card's evidence opens,
a skipped line is picked up, the page resumes by itself across a service restart, and injected
markup in chat bodies stays text. A screenshot is kept under the test's folder and copied to
var/test-artefacts/ (or $VERDICTS_TEST_ARTEFACTS)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import sqlalchemy as sa

from live import store

from tests.conftest import ROOT
from tests.live.console import BIN, Service, ingest, sample_lines

pytestmark = pytest.mark.slow
CHROMIUM = os.environ.get("VERDICTS_CHROMIUM", "/usr/bin/chromium")
ARTEFACTS = Path(os.environ.get("VERDICTS_TEST_ARTEFACTS", ROOT / "var" / "test-artefacts"))
TOKEN = "console-token"
INJECTED = ["<script>window.__pwned = 1</script>노래 불러줘?", "<img src=x onerror=\"window.__pwned=2\">게임 한 판 해요?"]


def broadcast(path: Path, n: int) -> None:
    """CH-0007 lines of the sample, re-numbered, two of them carrying markup in the body."""
    sample = [json.loads(t) for t in sample_lines() if t.startswith("{") and '"CH-0007"' in t]
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            line = dict(sample[i % len(sample)])
            line["msg_id"] = f"MSG-LIVE-{i:04d}"
            if i in (3, 4):
                line["body"] = INJECTED[i - 3]
            out.write(json.dumps(line, ensure_ascii=False) + "\n")


def _settled(service) -> dict:
    """`/live/status` once no line waits for its window (the store's figures, settled)."""
    import urllib.request

    deadline = time.time() + 30
    while True:
        req = urllib.request.Request(service.http + "/live/status", headers={"Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            status = json.loads(r.read())
        if status["pending"] == 0 or time.time() > deadline:
            return status
        time.sleep(0.3)


@pytest.fixture
def chromium_browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (set VERDICTS_CHROMIUM, or install Debian's `chromium`) to run the console browser test")
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def test_console_shows_windows_evidence_pickups_and_survives_a_restart(chromium_browser, tmp_path):
    service = Service(tmp_path, token=TOKEN, window_seconds=2, late_horizon=None).start()
    chat = tmp_path / "chat.jsonl"
    broadcast(chat, 240)
    replayer = None
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{service.http}/live?token={TOKEN}")
        page.wait_for_selector("#status[data-state='live']", timeout=20000)
        env = {**service.env, "VERDICTS_LIVE_TOKEN": TOKEN}
        replayer = subprocess.Popen([str(BIN / "verdicts"), "replay", str(chat), "--rate", "20", "--shift-to-now",
                                     "--to", f"{service.ws}/ws/ingest"], cwd=ROOT, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        page.locator("article.window").nth(1).wait_for(timeout=30000)
        assert page.locator("#chat li.line").count() > 0, "the chat flows in"
        bodies = page.eval_on_selector_all("#chat li.line .body", "els => els.map(e => e.textContent)")
        assert set(INJECTED) <= set(bodies), "markup in a body is shown as the text it is"

        # a pick's evidence opens on a click
        card = page.locator("article.window .card").first
        assert not card.locator("table.evidence").is_visible()
        card.locator("details.evidence-box > summary").click()
        card.locator("table.evidence").wait_for(timeout=5000)
        assert card.locator("table.evidence tbody tr").count() > 0

        # pick up a skipped line
        group = page.locator("article.window details.group:not(.quarantine)").first
        group.locator("summary").first.click()
        item = group.locator("li.item").first
        msg_id = item.get_attribute("data-msg-id")
        item.locator("button.pickup").click()
        page.wait_for_selector(f"li.item.picked[data-msg-id='{msg_id}']", timeout=10000)
        assert "운영자가" in page.locator(f"li.item[data-msg-id='{msg_id}'] .picked-note").inner_text()
        operator = page.locator(f".card.operator[data-msg-id='{msg_id}']")
        assert operator.count() == 1 and "운영자 선택" in operator.inner_text()

        # the service dies and comes back; the page reconnects and resumes from its last window
        before = page.eval_on_selector_all("article.window", "els => els.map(e => e.dataset.key)")
        service.kill()
        page.wait_for_selector("#status[data-state='down']", timeout=15000)
        service.start()
        page.wait_for_selector("#status[data-state='live']", timeout=30000)
        page.locator("article.window").nth(len(before) + 1).wait_for(timeout=40000)
        after = page.eval_on_selector_all("article.window", "els => els.map(e => e.dataset.key)")
        assert len(after) == len(set(after)), "no window shown twice"
        assert set(before) <= set(after)

        # injected markup never ran, and the page's own script threw nothing
        assert page.evaluate("() => window.__pwned") is None
        assert page.locator("img").count() == 0 and page.locator("#chat script").count() == 0
        assert not errors, errors

        replayer.wait(timeout=60)
        out = replayer.stdout.read()
        assert replayer.returncode == 0, out
        assert "240 lines sent, 240 acknowledged stored (all)" in out, out
        page.locator("#open .open-window").first.wait_for(state="detached", timeout=20000)

        # every window stored is on the page once, and its header shows the store's figures
        status = _settled(service)
        engine = sa.create_engine(f"sqlite:///{tmp_path / 'warehouse.sqlite'}")
        with engine.connect() as conn:
            stored = {f"{c}/{w}" for c, w in conn.execute(sa.select(store.windows.c.character_id, store.windows.c.window_start))}
        engine.dispose()
        shown = page.eval_on_selector_all("article.window", "els => els.map(e => e.dataset.key)")
        assert sorted(shown) == sorted(stored), "every window once"
        # lines no window can take: in the panel, with their reason and text
        hostile = [json.dumps({"msg_id": "MSG-WHO", "character_id": "<b>CH-9</b>", "viewer_id": "VW-1", "sent_at": "2026-11-01T09:00:00",
                               "body": "누구세요?", "donation_amount": 0, "is_question": True}, ensure_ascii=False),
                   json.dumps({"msg_id": "MSG-FAR", "character_id": "CH-0007", "viewer_id": "VW-1", "sent_at": "2100-01-01T09:00:00",
                               "body": "미래에서 왔어요", "donation_amount": 0, "is_question": False}, ensure_ascii=False)]
        with ThreadPoolExecutor(1) as aside:  # Playwright's own event loop runs in this thread
            told = aside.submit(asyncio.run, ingest(service.ws, hostile, headers={"Authorization": f"Bearer {TOKEN}"})).result()
        assert sorted(q["reason_code"] for q in told["quarantined"]) == ["unknown_character", "window_out_of_range"]
        page.wait_for_selector("#panel li.panel-line[data-reason-code='window_out_of_range']", timeout=10000)
        panel = page.locator("#panel").inner_text()
        assert "<b>CH-9</b>" in panel and "미래에서 왔어요" in panel and "설정표에 없는 캐릭터" in panel
        # the store's figures are read at most once a second and sent every 5 s: the two meet within a few
        deadline = time.time() + 30
        while True:
            status = _settled(service)
            header = {k: int(v) for k, v in page.eval_on_selector("#totals", "e => ({...e.dataset})").items()}
            if (header == {k: status[k] for k in header} and status["received"] == 242) or time.time() > deadline:
                break
            time.sleep(1)
        assert header == {k: status[k] for k in header} and header["received"] == 242, (header, status)
        page.evaluate("() => window.scrollTo(0, 0)")
        shot = tmp_path / "console.png"
        page.screenshot(path=str(shot), full_page=False)
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, ARTEFACTS / "live_console.png")
    finally:
        if replayer is not None and replayer.poll() is None:
            replayer.kill()
            replayer.wait(timeout=30)
        page.close()
        service.stop()
