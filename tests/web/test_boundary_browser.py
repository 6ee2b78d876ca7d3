"""DNS rebinding and cross-origin pages in a real Chromium against `verdicts serve` with its usual
settings (loopback, no token). Chromium maps `evil.test`, `console.test` and `attacker.test` to
127.0.0.1 (`--host-resolver-rules`); the service is told `console.test` is its own name
(VERDICTS_ALLOWED_HOSTS), as an operator does for a name on the local network.

- Rebinding: a page of `http://evil.test:PORT` (the attacker's name, now resolving to 127.0.0.1)
  reads the admin pages and the live status, posts a review decision and opens both sockets, all
  same-origin to the browser. Every one is refused (421) and nothing is recorded.
- Cross-origin: a page of another site writes chat lines into `/ws/ingest` of the operator's
  `console.test` and posts a review decision from a sandboxed frame (`Origin: null`, and no
  `Sec-Fetch-Site`, which Chromium leaves out for plain-http names) and from a plain form. All
  refused; nothing is recorded or stored.
- The operator's own pages on `console.test` still work: the console connects its socket, and a
  decision posted from the review page is recorded.
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import SEEDS
from tests.live.console import Service

pytestmark = pytest.mark.slow
CHROMIUM = os.environ.get("VERDICTS_CHROMIUM", "/usr/bin/chromium")
REVIEW = "/admin/live_pick/runs/all/review/live_pick.1"
CHROMIUM_ARGS = ["--no-sandbox", "--host-resolver-rules=MAP evil.test 127.0.0.1, MAP console.test 127.0.0.1, MAP attacker.test 127.0.0.1",
                 # Chromium's own guard against public pages reaching this machine (Local Network Access) is off:
                 # the service must refuse these requests by itself, whichever browser sends them.
                 "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights"]
LINE = {"msg_id": "MSG-FROM-ANOTHER-SITE", "character_id": "CH-0007", "viewer_id": "VW-1043", "sent_at": "2026-09-08T21:14:03",
        "body": "다른 사이트에서 넣은 줄", "topic_tags": ["노래"], "donation_amount": 0, "is_question": True}

ATTEMPTS = """async ([item, line, target]) => {
  const base = target || "";
  const out = {};
  for (const path of ["/admin", "/admin/live_pick/runs/all/board", "/live/status", "/suggestions"]) {
    try { out[path] = (await fetch(base + path)).status; } catch (e) { out[path] = "blocked " + e; }
  }
  const form = new URLSearchParams({item: item, decision: "disagree", reviewer: "intruder"});
  try { out.decide = (await fetch(base + "%s", {method: "POST", body: form, redirect: "manual"})).status; }
  catch (e) { out.decide = "blocked"; }
  const socket = (path, send) => new Promise((resolve) => {
    const ws = new WebSocket(base.replace("http", "ws") + path || path);
    let opened = false;
    ws.onopen = () => { opened = true; if (send) ws.send(send); else setTimeout(() => { ws.close(); resolve("open"); }, 300); };
    ws.onmessage = (m) => { ws.close(); resolve("message " + m.data.slice(0, 80)); };
    ws.onclose = () => resolve(opened ? "open" : "refused");
    setTimeout(() => resolve(opened ? "open" : "timeout"), 5000);
  });
  out.windows = await socket("/ws/windows", null);
  out.ingest = await socket("/ws/ingest", JSON.stringify(line));
  return out;
}""" % REVIEW


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (install Debian's chromium, or set VERDICTS_CHROMIUM)")
    pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed: pip install -e '.[dev]'")
    svc = Service(tmp_path_factory.mktemp("rebinding"))
    svc.env.update({"VERDICTS_RAW_DIR": str(SEEDS), "VERDICTS_ALLOWED_HOSTS": "console.test"})
    svc.start()
    try:
        yield svc
    finally:
        svc.stop()


@pytest.fixture(scope="module")
def browser(service):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def _read(url: str) -> str:
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read().decode()


def _sample_item(service) -> str:
    return re.search(r"data-item='([^']+)'", _read(service.http + REVIEW + "?reviewer=operator")).group(1)


def _decisions(service) -> str:
    return _read(service.http + REVIEW + "/decisions.json")


def _stored_lines(service) -> int:
    return json.loads(_read(service.http + "/live/status"))["received"]


def test_a_rebound_name_reads_nothing_and_changes_nothing(service, browser):
    item = _sample_item(service)
    page = browser.new_page()
    evil = f"http://evil.test:{service.port}"
    page.route(f"{evil}/", lambda route: route.fulfill(status=200, content_type="text/html",
                                                        body="<!doctype html><title>a page on evil.test</title><p>hello"))
    page.goto(evil + "/")  # the attacker's page, served while evil.test still resolved to the attacker
    got = page.evaluate(ATTEMPTS, [item, LINE, ""])
    assert got == {"/admin": 421, "/admin/live_pick/runs/all/board": 421, "/live/status": 421, "/suggestions": 421,
                   "decide": 421, "windows": "refused", "ingest": "refused"}, got
    assert "intruder" not in _decisions(service)
    shown = page.goto(evil + "/admin")  # and opened as a page
    assert shown.status == 421 and "evil.test" in page.content()
    page.close()


def test_another_sites_page_cannot_write_chat_or_record_a_decision(service, browser):
    item = _sample_item(service)
    target = f"http://console.test:{service.port}"
    received = _stored_lines(service)
    page = browser.new_page()
    frames = (f"<iframe sandbox='allow-forms allow-scripts' srcdoc=\"<form method=post action='{target}{REVIEW}'>"
              f"<input name=item value='{item}'><input name=decision value=disagree><input name=reviewer value=sandboxed></form>"
              "<script>document.forms[0].submit()</script>\"></iframe>"
              f"<form id=plain target=sink method=post action='{target}{REVIEW}'><input name=item value='{item}'>"
              "<input name=decision value=disagree><input name=reviewer value=crosssite></form><iframe name=sink></iframe>")
    page.route("http://attacker.test/", lambda route: route.fulfill(status=200, content_type="text/html",
                                                                    body=f"<!doctype html><title>another site</title>{frames}"))
    page.goto("http://attacker.test/")
    page.evaluate("document.getElementById('plain').submit()")
    page.wait_for_timeout(1500)
    got = page.evaluate(ATTEMPTS, [item, LINE, target])
    assert got["ingest"] == "refused" and got["windows"] == "refused", got
    assert got["decide"] in (403, 0, "blocked"), got  # a cross-origin fetch: refused before any route (0 = opaque to the page)
    decided = _decisions(service)
    assert "sandboxed" not in decided and "crosssite" not in decided and "intruder" not in decided
    assert _stored_lines(service) == received, "no chat line from another site was stored"
    page.close()


def test_the_operators_own_pages_on_an_allowed_name_still_work(service, browser):
    page = browser.new_page()
    own = f"http://console.test:{service.port}"
    page.goto(own + "/live")
    page.wait_for_selector("#status[data-state='live']", timeout=30000)
    page.goto(own + REVIEW + "?reviewer=operator")
    article = page.locator("article.review-item").first
    item = article.get_attribute("data-item")
    article.locator("input[name=decision][value=agree]").check()
    article.locator("form.decide button[type=submit]").click()
    page.wait_for_load_state()
    assert '"operator"' in _decisions(service) and item in _decisions(service)
    page.close()
