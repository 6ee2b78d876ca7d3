"""The console's view of frames it is sent, in headless Chromium with its window socket played by the
test (Playwright's `route_web_socket`): earlier broadcasts go behind a link, a failed check shows as one
badge with Korean titles, and figures read as people read them (no `7651322874 ms`)."""

from __future__ import annotations

import json
import re
import time

import pytest

from tests.live.console import Service
from tests.live.test_console_browser import chromium_browser  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow
NOW_NS = time.time_ns() // (30 * 10**9) * (30 * 10**9)


def frame(seq: int, start_ns: int, latency_ms: float, failed: bool = False) -> dict:
    start = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(start_ns / 1e9 + 9 * 3600))
    rows = [{"msg_id": f"M-{seq}-{i}", "viewer_id": f"VW-{i}", "verdict": "지금 답변할 질문" if i < 3 else "다음 차례로 미룸",
             "rank_in_window": i + 1, "summary": "요약입니다.", "evidence": [{"dataset": "live_chat", "field": "is_question", "value": True}],
             "hedge": None} for i in range(4)]
    checks = [{"name": "schema", "title": "every row passes", "passed": True, "failing_ids": [], "detail": ""},
              {"name": "5.rank", "title": "rank re-computed", "passed": not failed, "failing_ids": [] if not failed else ["M-1"],
               "detail": ""}]
    return {"type": "window", "seq": seq, "epoch": 1, "push": seq, "character_id": "CH-0007", "window_start": start,
            "window_end": start, "window_end_ns": start_ns + 30 * 10**9, "lines": 4, "latency_ms": latency_ms, "checks": checks,
            "verdicts": rows, "quarantined": [], "texts": {r["msg_id"]: f"본문 {r['msg_id']}" for r in rows}}


def test_earlier_broadcasts_go_behind_a_link_and_figures_read_as_people_read_them(chromium_browser, tmp_path):
    service = Service(tmp_path).start()
    page = chromium_browser.new_page(viewport={"width": 1366, "height": 768})
    sockets = []
    page.route_web_socket(re.compile(r".*/ws/windows.*"), lambda ws: sockets.append(ws))
    try:
        page.goto(f"{service.http}/live")
        page.wait_for_function("() => document.querySelector('#status').dataset.state === 'live'", timeout=30000)
        ws = sockets[0]
        ws.send(json.dumps({"type": "resumed", "epoch": 1, "through": 0}))
        old = NOW_NS - 20 * 60 * 10**9  # twenty minutes before: another broadcast
        for f in (frame(1, old, 7_651_322_874), frame(2, NOW_NS - 60 * 10**9, 212.4), frame(3, NOW_NS - 30 * 10**9, 4_200, failed=True)):
            ws.send(json.dumps(f, ensure_ascii=False))
        page.wait_for_function("() => document.querySelectorAll('article.window').length === 3", timeout=10000)
        shown = page.eval_on_selector_all("article.window", "els => els.map(e => [e.dataset.seq, e.hidden, e.classList.contains('earlier')])")
        assert shown == [["3", False, False], ["2", False, False], ["1", True, True]]
        assert page.locator("#earlier").inner_text() == "이전 방송 구간 1개 보기"
        page.locator("#earlier").click()
        assert not page.locator("article.window[data-seq='1']").get_attribute("hidden")
        heads = page.locator("article.window > header").all_inner_texts()
        assert "판정 지연 4.2초" in heads[0] and "판정 지연 212ms" in heads[1] and "판정 지연 88일" in heads[2], heads
        badge = page.locator("article.window[data-seq='3'] details.checks-badge")
        assert badge.locator("summary").inner_text() == "검증 1개 실패"
        badge.locator("summary").click()
        assert badge.locator("li.fail").inner_text().startswith("✗ 구간 순위 재계산")
        card = page.locator("article.window[data-seq='3'] .card").first
        assert card.locator(".said .body").inner_text() == "본문 M-3-0"
        card.locator("details.evidence-box > summary").click()
        assert card.locator("table.evidence td").nth(3).inner_text() == "예"  # a boolean as a word, never `true`
    finally:
        page.close()
        service.stop()


def test_a_started_broadcast_is_one_however_long_its_gaps(chromium_browser, tmp_path):
    """Windows after a character's start stay the current broadcast across a gap of twenty minutes
    (which, for a broadcast no one started, puts the windows before it behind the link)."""
    import urllib.request

    service = Service(tmp_path).start()
    page = chromium_browser.new_page(viewport={"width": 1366, "height": 768})
    sockets = []
    page.route_web_socket(re.compile(r".*/ws/windows.*"), lambda ws: sockets.append(ws))
    try:
        started = urllib.request.Request(service.http + "/live/start", data=json.dumps({"character_id": "CH-0007"}).encode(),
                                         headers={"Content-Type": "application/json", "Origin": service.http}, method="POST")
        with urllib.request.urlopen(started, timeout=30) as r:
            first_ns = json.loads(r.read())["first_window_ns"]
        page.goto(f"{service.http}/live")
        page.wait_for_function("() => document.querySelector('#status').dataset.state === 'live'", timeout=30000)
        page.wait_for_selector("button.tab.on-air[data-character='CH-0007']", timeout=10000)
        ws = sockets[0]
        ws.send(json.dumps({"type": "resumed", "epoch": 1, "through": 0}))
        for f in (frame(1, first_ns, 200.0), frame(2, first_ns + 20 * 60 * 10**9, 200.0)):
            ws.send(json.dumps(f, ensure_ascii=False))
        page.wait_for_function("() => document.querySelectorAll('article.window').length === 2", timeout=10000)
        page.wait_for_timeout(2500)  # a status poll or two: the view must not change
        shown = page.eval_on_selector_all("article.window", "els => els.map(e => [e.dataset.seq, e.hidden, e.classList.contains('earlier')])")
        assert shown == [["2", False, False], ["1", False, False]]
        assert page.locator("#earlier").is_hidden()
    finally:
        page.close()
        service.stop()
