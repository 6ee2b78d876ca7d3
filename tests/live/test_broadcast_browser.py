"""A seven-character broadcast on the operator's console, in headless Chromium at 1366×768 (Playwright
driving Debian's chromium), as an operator would run it: every window lands once, with what the viewer
wrote on every line (picks, each reason group, quarantined lines), and a reload shows the same; the
character tabs filter, the countdown counts down, a window landing is cued, the checks are one badge
that opens to Korean titles, figures are readable, and the broadcast is closed from the page.

The two-minute broadcast is played faster: 4-second windows, about 16 s of chat per character (the
number of windows a 30-second window gives in two minutes). Screenshots mid-broadcast and after the
reload are kept under var/test-artefacts/ (or $VERDICTS_TEST_ARTEFACTS); docs/live.md shows copies."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import sqlalchemy as sa

from live import store

from tests.conftest import ROOT
from tests.live.console import BIN, Service, sample_lines
from tests.live.test_console_browser import ARTEFACTS, chromium_browser  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow
WINDOW_S = 4
SECONDS = 16
PER_SECOND = 2
LONG = "오늘 방송 정말 재미있어요 " * 12 + "다음 곡은 뭐예요?"


def broadcast(path: Path) -> dict[str, str]:
    """Seven characters' sample lines, each character two lines a second for SECONDS, a long body and
    a line the gates quarantine among them. Returns msg_id → body."""
    sample = [json.loads(t) for t in sample_lines() if t.startswith("{")]
    by_character: dict[str, list[dict]] = {}
    for line in sample:
        if isinstance(line.get("character_id"), str):
            by_character.setdefault(line["character_id"], []).append(line)
    characters = sorted(by_character)
    assert len(characters) == 7, characters
    out, bodies = [], {}
    for step in range(SECONDS * PER_SECOND):
        for c in characters:
            line = dict(by_character[c][step % len(by_character[c])])
            line["msg_id"] = f"MSG-B-{c}-{step:03d}"
            line["sent_at"] = f"2026-09-08T21:14:{step // PER_SECOND:02d}"
            if c == "CH-0007" and step == 3:
                line["body"] = LONG
            if c == "CH-0008" and step == 5:
                line["donation_amount"] = -100  # fails the schema: quarantined in its window
            bodies[line["msg_id"]] = line["body"]
            out.append(json.dumps(line, ensure_ascii=False))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return bodies


def status(service) -> dict:
    with urllib.request.urlopen(service.http + "/live/status", timeout=10) as r:
        return json.loads(r.read())


def every_line_has_its_text(page, bodies: dict[str, str]) -> int:
    """Each window shows as many lines as it holds, each with the viewer's words (its reason groups
    opened: their lines are put in the page then); returns the windows."""
    page.evaluate("() => document.querySelectorAll('article.window details.group').forEach(d => { d.open = true; })")
    page.wait_for_function("() => [...document.querySelectorAll('article.window details.group')].every(d => d.dataset.made)",
                           timeout=10000)
    shown = page.evaluate("""() => [...document.querySelectorAll('article.window')].map(a => ({
        key: a.dataset.key, lines: Number(a.dataset.lines),
        rows: [...a.querySelectorAll('.card:not(.operator), li.item, li.q-item')].map(r => ({
            id: r.dataset.msgId || r.querySelector('.msg').textContent, text: r.querySelector('.said .body').textContent,
            missing: r.querySelector('.said .body').classList.contains('missing')}))}))""")
    for w in shown:
        assert len(w["rows"]) == w["lines"], w["key"]
        for r in w["rows"]:
            assert not r["missing"] and r["text"] == bodies[r["id"]], (w["key"], r)
    return len(shown)


def test_a_seven_character_broadcast_on_the_console(chromium_browser, tmp_path):
    service = Service(tmp_path, window_seconds=WINDOW_S, late_horizon=None).start()
    chat = tmp_path / "chat.jsonl"
    bodies = broadcast(chat)
    page = chromium_browser.new_page(viewport={"width": 1366, "height": 768})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    replayer = None
    try:
        said = service.log.read_text(encoding="utf-8")  # `verdicts serve` says where it is
        for path in ("/", "/live", "/admin", "/suggestions"):
            assert f"{service.http}{path}\n" in said, said
        page.goto(f"{service.http}/live")
        page.wait_for_selector("#status[data-state='live']", timeout=20000)
        replayer = subprocess.Popen([str(BIN / "verdicts"), "replay", str(chat), "--speed", "1", "--shift-to-now",
                                     "--to", f"{service.ws}/ws/ingest"], cwd=ROOT, env=service.env,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

        # mid-broadcast: the countdown to the open window's close counts down
        page.wait_for_selector("#countdown:not([data-seconds=''])", timeout=20000)
        page.locator("article.window").nth(6).wait_for(timeout=30000)
        seconds = "() => document.querySelector('#countdown').dataset.seconds || null"
        first = int(page.wait_for_function(seconds, timeout=10000).json_value())
        assert 0 < first <= WINDOW_S
        then = int(page.wait_for_function(f"() => {{ const s = ({seconds})(); return s && s !== '{first}' ? s : null; }}",
                                          timeout=10000).json_value())
        assert then == first - 1 or then == WINDOW_S, (first, then)  # a second less, or the next window's
        assert "닫힘까지" in page.locator("#countdown").inner_text()
        # a window landing is cued
        assert int(page.evaluate("() => document.body.dataset.landed")) >= 1
        assert "새 구간 도착" in page.locator("#cue").inner_text()
        page.screenshot(path=str(tmp_path / "mid.png"))

        replayer.wait(timeout=90)
        out = replayer.stdout.read()
        assert replayer.returncode == 0, out
        # the open tiles resolve: none is left once every window is out
        page.wait_for_function("() => document.querySelectorAll('#open .open-window').length === 0", timeout=30000)
        deadline = time.time() + 30
        while status(service)["pending"] and time.time() < deadline:
            time.sleep(0.3)
        engine = sa.create_engine(f"sqlite:///{tmp_path / 'warehouse.sqlite'}")
        with engine.connect() as conn:
            stored = sorted(f"{c}/{w}" for c, w in conn.execute(sa.select(store.windows.c.character_id, store.windows.c.window_start)))
        engine.dispose()
        page.wait_for_function(f"() => document.querySelectorAll('article.window').length >= {len(stored)}", timeout=20000)
        keys = page.eval_on_selector_all("article.window", "els => els.map(e => e.dataset.key)")
        assert sorted(keys) == stored, "every window lands once"
        assert len({k.split("/")[0] for k in keys}) == 7
        assert every_line_has_its_text(page, bodies) == len(stored)

        # the long body is clamped, and opens
        long_body = page.locator("article.window .said .body.clamp", has_text="오늘 방송 정말").first.element_handle()
        long_body.evaluate("e => { const d = e.closest('details'); if (d) d.open = true; }")
        assert long_body.evaluate("e => e.scrollHeight > e.clientHeight + 4"), "clamped to three lines"
        long_body.evaluate("e => e.parentElement.querySelector('button.more').click()")
        assert "clamp" not in (long_body.get_attribute("class") or "")
        # the quarantined line shows its words and a Korean reason
        q = page.locator("li.q-item").first
        assert q.locator(".reason-label").text_content() == "입력 형식에 맞지 않음"
        # readable figures: KST time spans, no raw nanoseconds or English check ids on the window heads
        head = page.locator("article.window > header").first.inner_text()
        assert re.search(r"\d\d:\d\d:\d\d–\d\d:\d\d:\d\d", head), head
        assert "판정 지연" in head and " ms" not in head
        # one checks badge per window, opening to the Korean titles
        assert page.locator("article.window").first.locator("details.checks-badge").count() == 1
        page.locator("article.window details.checks-badge > summary").first.click()
        titles = page.locator("article.window details.checks-badge[open] li").all_inner_texts()
        assert len(titles) == 15 and any("출력 형식" in t for t in titles), titles
        assert not any("verdict_enum" in t for t in titles)
        body_text = page.locator("body").inner_text()
        assert "null" not in body_text and "None" not in body_text

        # the character filter: one character's windows and chat only
        page.locator("button.tab[data-character='CH-0011']").click()
        visible = page.eval_on_selector_all("article.window", "els => els.filter(e => !e.hidden).map(e => e.dataset.character)")
        assert visible and set(visible) == {"CH-0011"}
        chat_shown = page.eval_on_selector_all("#chat li.line", "els => els.filter(e => !e.hidden).map(e => e.dataset.character)")
        assert set(chat_shown) <= {"CH-0011"}

        # a reload keeps every window, every text, and the chosen character
        page.reload()
        page.wait_for_selector("#status[data-state='live']", timeout=20000)
        page.wait_for_function(f"() => document.querySelectorAll('article.window').length >= {len(stored)}", timeout=20000)
        assert sorted(page.eval_on_selector_all("article.window", "els => els.map(e => e.dataset.key)")) == stored
        assert every_line_has_its_text(page, bodies) == len(stored)
        assert page.get_attribute("button.tab[data-character='CH-0011']", "aria-pressed") == "true"
        visible = page.eval_on_selector_all("article.window", "els => els.filter(e => !e.hidden).map(e => e.dataset.character)")
        assert set(visible) == {"CH-0011"}
        page.screenshot(path=str(tmp_path / "reloaded.png"))

        # closing the broadcast from the page, after a confirmation; its windows move behind a link
        page.once("dialog", lambda d: d.accept())
        page.locator("#close-broadcast").click()
        page.wait_for_selector("#notice[data-state='closed']", timeout=20000)
        assert "닫았습니다" in page.locator("#notice").inner_text()
        page.wait_for_function("() => [...document.querySelectorAll('article.window[data-character=\"CH-0011\"]')].every(a => a.hidden)",
                               timeout=10000)
        assert "이전 방송 구간" in page.locator("#earlier").inner_text()
        assert not errors, errors
    finally:
        if replayer is not None and replayer.poll() is None:
            replayer.kill()
            replayer.wait(timeout=30)
        for name in ("mid.png", "reloaded.png"):
            if (tmp_path / name).exists():
                ARTEFACTS.mkdir(parents=True, exist_ok=True)
                shutil.copy(tmp_path / name, ARTEFACTS / f"live_broadcast_{name}")
        page.close()
        service.stop()


def test_starting_a_broadcast_from_the_page(chromium_browser, tmp_path):
    """Every character with a sheet has a tab before its first line; 방송 시작 (confirmed) puts the
    chosen one on air; starting again while its broadcast is open asks once more, and only when the
    operator agrees closes it and starts anew, its windows moving behind the earlier-broadcasts link."""
    service = Service(tmp_path, window_seconds=WINDOW_S, late_horizon=None).start()
    chat = tmp_path / "chat.jsonl"
    sample = [json.loads(t) for t in sample_lines() if t.startswith("{")]
    mine = [dict(x) for x in sample if x.get("character_id") == "CH-0007"]
    lines = []
    for step in range(12):
        line = dict(mine[step % len(mine)], msg_id=f"MSG-S-{step:03d}", sent_at=f"2026-09-08T21:14:{step // 2:02d}")
        lines.append(json.dumps(line, ensure_ascii=False))
    chat.write_text("\n".join(lines) + "\n", encoding="utf-8")
    page = chromium_browser.new_page(viewport={"width": 1366, "height": 768})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    answers: list[bool] = []
    page.on("dialog", lambda d: d.accept() if answers.pop(0) else d.dismiss())
    try:
        page.goto(f"{service.http}/live")
        page.wait_for_selector("#status[data-state='live']", timeout=20000)
        page.wait_for_selector("button.tab[data-character='CH-0007']", timeout=10000)
        assert page.locator("button.tab").count() == 8  # 전체 and the sample's seven characters, no line yet
        assert page.locator("article.window").count() == 0
        page.locator("button.tab[data-character='CH-0007']").click()

        answers.extend([True])
        page.locator("#start-broadcast").click()
        page.wait_for_selector("#notice[data-state='started']", timeout=20000)
        assert "시작했습니다" in page.locator("#notice").inner_text()
        page.wait_for_selector("button.tab.on-air[data-character='CH-0007']", timeout=10000)
        assert "방송 중" in page.locator("#on-air").inner_text()

        replay = subprocess.run([str(BIN / "verdicts"), "replay", str(chat), "--speed", "1", "--shift-to-now",
                                 "--to", f"{service.ws}/ws/ingest"], cwd=ROOT, env=service.env, capture_output=True,
                                text=True, timeout=90)
        assert replay.returncode == 0, replay.stdout + replay.stderr
        page.wait_for_function("() => document.querySelectorAll('article.window').length >= 2", timeout=30000)
        deadline = time.time() + 30
        while status(service)["pending"] and time.time() < deadline:
            time.sleep(0.3)
        # every line judged: the page holds every window pushed once the last frames have come
        pushed = status(service)["windows"]
        page.wait_for_function(f"() => document.querySelectorAll('article.window').length >= {pushed}", timeout=10000)
        windows = page.locator("article.window").count()
        assert page.locator("article.window.earlier").count() == 0, "the started broadcast's windows are current"

        # starting again while it is open: the operator declines to close it, then agrees
        answers.extend([True, False])
        page.locator("#start-broadcast").click()
        page.wait_for_selector("#notice[data-state='nothing']", timeout=20000)
        assert "시작하지 않았습니다" in page.locator("#notice").inner_text()
        assert "CH-0007" in status(service)["broadcasts"]
        answers.extend([True, True])
        page.locator("#start-broadcast").click()
        page.wait_for_selector("#notice[data-state='started']", timeout=20000)
        said = page.locator("#notice").inner_text()
        assert "닫았습니다" in said and "시작했습니다" in said, said
        page.wait_for_function(f"() => document.querySelectorAll('article.window.earlier').length === {windows}", timeout=10000)
        assert page.locator("#earlier").is_visible() and f"이전 방송 구간 {windows}개" in page.locator("#earlier").inner_text()
        deadline = time.time() + 10  # the store's figures are cached for up to a second
        while "CH-0007" in (st := status(service))["broadcasts"] and time.time() < deadline:
            time.sleep(0.3)
        assert "CH-0007" not in st["broadcasts"] and set(st["on_air"]) == {"CH-0007"}
        page.screenshot(path=str(tmp_path / "started.png"))

        # closing from the page takes it off air
        answers.extend([True])
        page.locator("#close-broadcast").click()
        page.wait_for_selector("#notice[data-state='nothing']", timeout=20000)
        page.wait_for_function("() => !document.querySelector(\"button.tab[data-character='CH-0007']\").classList.contains('on-air')",
                               timeout=10000)
        assert status(service)["on_air"] == {}
        assert not answers and not errors, (answers, errors)
    finally:
        if (tmp_path / "started.png").exists():
            ARTEFACTS.mkdir(parents=True, exist_ok=True)
            shutil.copy(tmp_path / "started.png", ARTEFACTS / "live_broadcast_started.png")
        page.close()
        service.stop()
