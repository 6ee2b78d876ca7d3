"""The /suggestions page in headless Chromium: apply needs the operator's name and asks for
confirmation (dismissing changes nothing), the other suggestion stays open, a rejection needs a
reason, who decided is recorded, and the page shows the new state. Screenshots are kept."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
import uvicorn

from live import sheets
from assets.resources.warehouse import _engine
from web.app import create_app
from web.config import WebConfig
from tests.live.broadcasts import FIRST, judge_and_close, write_raw

SCREENS = Path(os.environ.get("VERDICTS_WEB_SCREENS", "/tmp/web_screens"))
CHROMIUM = os.environ.get("VERDICTS_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
TOKEN = "browser-token"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}; install Debian's `chromium`")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(tmp_path):
    url = f"sqlite:///{tmp_path / 'wh.sqlite'}"
    engine = _engine(url)
    judge_and_close(engine, write_raw(tmp_path / "raw"), FIRST)
    port = free_port()
    srv = uvicorn.Server(uvicorn.Config(create_app(WebConfig(warehouse_url=url, token=TOKEN, home=tmp_path, port=port)),
                                        host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not srv.started and time.time() < deadline:
        time.sleep(0.05)
    assert srv.started, "the web front did not start"
    yield f"http://127.0.0.1:{port}", engine
    srv.should_exit = True
    thread.join(timeout=10)


def test_apply_confirms_and_reject_needs_a_reason(server, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    base, engine = server
    SCREENS.mkdir(parents=True, exist_ok=True)
    dialogs: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
            page.goto(f"{base}/suggestions?token={TOKEN}")
            page.screenshot(path=str(tmp_path / "suggestions.png"), full_page=True)
            shutil.copy(tmp_path / "suggestions.png", SCREENS / "suggestions.png")
            cool = page.locator("article.card", has_text="답변 쿨다운")
            close = page.locator("article.card", has_text="주제별 친밀 기준")

            # who applies is recorded: without a name nothing is sent
            cool.locator("button.apply").click()
            assert "운영자 이름을 적어 주세요" in page.locator("#flash").inner_text() and not dialogs
            page.locator("#operator").fill("운영자 김")
            page.locator("#operator").dispatch_event("change")

            # dismissing the confirmation changes nothing
            page.once("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            cool.locator("button.apply").click()
            page.wait_for_timeout(300)
            assert len(sheets.history(engine, "CH-0007")) == 1 and "180 → 150" in dialogs[0]

            page.once("dialog", lambda d: (dialogs.append(d.message), d.accept()))
            cool.locator("button.apply").click()
            # the flash still shows the refusal above until the answer comes: wait for its new text
            expect(page.locator("#flash")).to_contain_text("sheet version 2")
            page.wait_for_selector("article.card.applied")  # after the reload
            assert [(h["reply_cooldown_sec"], h["author"]) for h in sheets.history(engine, "CH-0007")] == [(180, None), (150, "운영자 김")]
            assert "반영 · 운영자 김 · " in page.locator("article.card.applied").inner_text()
            assert page.locator("#operator").input_value() == "운영자 김"  # kept across the reload

            # the closeness suggestion changes another value: still open, and it can be rejected with a reason
            assert close.locator("button.apply").count() == 1
            close.locator("button.reject").click()
            assert "거절 사유를 적어 주세요" in page.locator("#flash").inner_text()
            close.locator("input.reason").fill("추억 주제는 관계가 쌓인 뒤에 답합니다")
            close.locator("button.reject").click()
            page.wait_for_selector("article.card.rejected")
            assert "추억 주제는 관계가 쌓인 뒤에 답합니다 · 운영자 김" in page.locator("article.card.rejected").inner_text()
            page.screenshot(path=str(tmp_path / "suggestions_after.png"), full_page=True)
            shutil.copy(tmp_path / "suggestions_after.png", SCREENS / "suggestions_after.png")
            assert not errors, errors
        finally:
            browser.close()
