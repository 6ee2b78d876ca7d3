"""The console in a real headless Chromium while a Chzzk feed (the local stand-in) runs: the feed's
row shows its counts, and once the windows are out the page says every acknowledged line is
accounted for (judged + quarantined + late). A screenshot is kept under the test's folder and
copied to var/test-artefacts/ (or $VERDICTS_TEST_ARTEFACTS)."""

from __future__ import annotations

import shutil
import signal
import subprocess

from tests.live.console import BIN, Service
from tests.live.feeds.fakes import FakeChzzk, recording
from tests.live.test_console_browser import ARTEFACTS, chromium_browser  # noqa: F401 - the fixture

TOKEN = "feed-console-token"


def test_console_shows_the_feed_and_every_line_accounted_for(chromium_browser, tmp_path):  # noqa: F811
    expect = recording("chzzk")["expect"]
    service = Service(tmp_path, token=TOKEN, window_seconds=4).start()
    fake = FakeChzzk().start()
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    feed = None
    try:
        page.goto(f"{service.http}/live?token={TOKEN}")
        page.wait_for_selector("#status[data-state=live]", timeout=30_000)
        with (tmp_path / "listen.log").open("w") as out:
            feed = subprocess.Popen([str(BIN / "verdicts"), "listen", "chzzk", fake.channel, "--character", "CH-0007",
                                     "--to", service.ws + "/ws/ingest", "--endpoint", fake.url],
                                    env=service.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        row = page.wait_for_selector(".feed[data-state=live]", timeout=60_000)
        assert "치지직" in row.inner_text() and "CH-0007" in row.inner_text()
        # every acknowledged line in a window, in quarantine or late (the page's script is under a CSP: selectors only)
        done = page.wait_for_selector(f".feed-sum.ok[data-acked='{expect['lines']}']", timeout=90_000)
        text = page.inner_text("#feeds")
        assert f"받음 {expect['received']}" in text and f"보냄 {expect['lines']}" in text and f"확인 {expect['lines']}" in text
        assert f"중복 {expect['duplicates']}" in text and "재연결 1" in text, text
        assert "✓ 모두 셈" in done.inner_text()
        assert page.locator("article.window").count() >= 1
        shot = tmp_path / "console-feeds.png"
        page.screenshot(path=str(shot), full_page=False)
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, ARTEFACTS / "console-feeds.png")
        assert not errors, errors
    finally:
        if feed is not None:
            feed.send_signal(signal.SIGTERM)
            feed.wait(60)
        page.close()
        fake.stop()
        service.stop()
