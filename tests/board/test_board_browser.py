"""The verdict board in a real headless Chromium: open each domain's page from a file, expand a
known row with a mouse click, read its evidence table, prove injected log bodies stay text,
and save a screenshot.

Chromium is driven over the DevTools protocol with a small standard-library WebSocket client,
so nothing beyond the browser is needed. The tests skip, saying why, only when no Chromium
binary is installed (`.ci/run` installs Debian's `chromium`).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from evals.board import render_board
from evals import domains
from tests.board import KNOWN, PAYLOADS, SEEDS, available, board_spec, sample_board, sample_parts as sample_parts_for_report, with_payloads

SCREENS = Path(os.environ.get("VERDICTS_BOARD_SCREENS", "/tmp/board_screens"))
"""A copy of every screenshot lands here too, for a person to look at."""
BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
         "--window-size=1280,900")
PROBE = """
window.__alerts = [];
window.alert = window.confirm = window.prompt = function (m) { window.__alerts.push(String(m)); };
"""
"""Runs before the page's own script: an injected alert() is recorded instead of blocking."""


def chromium_binary() -> str | None:
    found = os.environ.get("VERDICTS_CHROMIUM") or next((b for b in map(shutil.which, BINARIES) if b), None)
    return found if found and Path(found).exists() else None


def no_browser() -> str:
    where = os.environ.get("VERDICTS_CHROMIUM")
    looked = f"VERDICTS_CHROMIUM={where} does not exist" if where else "looked for " + ", ".join(BINARIES) + " on PATH"
    return f"no Chromium binary found ({looked}); install Debian's `chromium` to run the browser tests"


def domain_param(name: str):
    return pytest.param(name, id=name, marks=pytest.mark.skipif(
        not available(name), reason=f"domain {name} is not registered in evals.domains.names() yet"))


ALL = [domain_param(n) for n in domains.names()]


# -- a minimal WebSocket client (RFC 6455, client side, text frames) ----------------------------


class WebSocket:
    def __init__(self, url: str, timeout: float = 30):
        u = urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {u.path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        self.file = self.sock.makefile("rb")
        status = self.file.readline()
        if b" 101 " not in status:
            raise ConnectionError(f"WebSocket handshake with {url} failed: {status!r}")
        while self.file.readline() not in (b"\r\n", b""):
            pass

    def send(self, text: str, opcode: int = 0x1) -> None:
        data = text.encode() if isinstance(text, str) else text
        n = len(data)
        head = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else
                                         bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else
                                         bytes([0x80 | 127]) + struct.pack(">Q", n))
        mask = os.urandom(4)  # clients must mask every frame
        masked = (int.from_bytes(data, "big") ^ int.from_bytes((mask * (n // 4 + 1))[:n], "big")).to_bytes(n, "big") if n else b""
        self.sock.sendall(head + mask + masked)

    def _read(self, n: int) -> bytes:
        data = self.file.read(n)
        if len(data) < n:
            raise ConnectionError("WebSocket closed")
        return data

    def recv(self) -> str:
        parts = []
        while True:
            b1, b2 = self._read(2)
            n = b2 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b2 & 0x80 else None
            data = self._read(n)
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            opcode = b1 & 0x0F
            if opcode == 0x9:
                self.send(data, 0xA)
                continue
            if opcode == 0x8:
                raise ConnectionError("WebSocket closed by the browser")
            parts.append(data)
            if b1 & 0x80:
                return b"".join(parts).decode()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


# -- Chromium over the DevTools protocol --------------------------------------------------------


class Session:
    """One DevTools connection (the browser, or one page); events are kept for the test to read."""

    def __init__(self, url: str):
        self.ws = WebSocket(url)
        self.next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == my_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = 20) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(i)
            if time.monotonic() > deadline:
                raise TimeoutError(method)
            self.events.append(json.loads(self.ws.recv()))

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")


class Chromium:
    def __init__(self, binary: str, profile: Path):
        self.proc = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        port_file = profile / "DevToolsActivePort"  # Chromium writes the port it chose and the browser's path here
        deadline = time.monotonic() + 30
        while not (port_file.is_file() and len(port_file.read_text().splitlines()) >= 2):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"{binary} did not open its DevTools port")
            time.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        self.base = f"ws://127.0.0.1:{port}"
        self.browser = Session(self.base + path)

    def open(self, url: str) -> Session:
        target = self.browser.call("Target.createTarget", url="about:blank")["targetId"]
        page = Session(f"{self.base}/devtools/page/{target}")
        page.target = target
        for domain in ("Page", "Runtime", "Network", "Log"):
            page.call(f"{domain}.enable")
        page.call("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
        page.call("Page.addScriptToEvaluateOnNewDocument", source=PROBE)
        page.call("Page.navigate", url=url)
        page.wait_for("Page.loadEventFired")
        return page

    def close_page(self, page: Session) -> None:
        page.ws.close()
        self.browser.call("Target.closeTarget", targetId=page.target)

    def close(self) -> None:
        if hasattr(self, "browser"):
            self.browser.ws.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)  # the group this test started, nothing else
            self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    binary = chromium_binary()
    if binary is None:
        pytest.skip(no_browser())
    browser = Chromium(binary, tmp_path_factory.mktemp("chromium-profile"))
    yield browser
    browser.close()


def write_page(tmp_path: Path, name: str, html: str) -> str:
    path = tmp_path / f"{name}.html"
    path.write_text(html, encoding="utf-8")
    return path.resolve().as_uri()


def click(page: Session, selector: str) -> None:
    """A real mouse click in the middle of the element, after scrolling it into view."""
    box = page.evaluate(f"""(() => {{
        const el = document.querySelector({js(selector)});
        el.scrollIntoView({{block: 'center'}});
        const r = el.getBoundingClientRect();
        return {{x: r.left + Math.min(r.width / 2, 200), y: r.top + r.height / 2}};
    }})()""")
    for kind in ("mousePressed", "mouseReleased"):
        page.call("Input.dispatchMouseEvent", type=kind, x=box["x"], y=box["y"], button="left", clickCount=1)


def screenshot(page: Session, tmp_path: Path, name: str) -> Path:
    png = base64.b64decode(page.call("Page.captureScreenshot", format="png")["data"])
    out = tmp_path / f"{name}.png"
    out.write_bytes(png)
    try:
        SCREENS.mkdir(parents=True, exist_ok=True)
        (SCREENS / out.name).write_bytes(png)
    except OSError:
        pass  # the copy is a convenience; the test output keeps the screenshot
    return out


def js(value) -> str:
    """A JavaScript string literal with non-ASCII kept as is: selectors quote it again for CSS, which reads \\u escapes differently."""
    return json.dumps(value, ensure_ascii=False)


def row_selector(id_: str) -> str:
    return f"details.item[data-id={js(id_)}]"


def nothing_ran(page: Session) -> None:
    assert page.evaluate("window.__pwned === undefined")
    assert page.evaluate("window.__alerts") == []
    assert page.evaluate("document.images.length") == 0
    logged = [e for e in page.events if e.get("method") == "Runtime.consoleAPICalled"]
    assert not logged, logged
    errors = [e for e in page.events if e.get("method") == "Runtime.exceptionThrown"]
    assert not errors, errors  # the page's own script ran cleanly
    fetched = [e["params"]["request"]["url"] for e in page.events if e.get("method") == "Network.requestWillBeSent"]
    assert all(u.startswith(("file:", "about:", "data:")) for u in fetched), fetched
    assert len([u for u in fetched if u.startswith("file:")]) == 1  # the page itself, nothing else


# -- tests -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_expanding_a_known_row_shows_its_evidence(name, chromium, tmp_path):
    id_, evidence, fields = KNOWN[name]
    page = chromium.open(write_page(tmp_path, name, render_board(sample_board(name))))
    try:
        sel = row_selector(id_)
        assert page.evaluate(f"document.querySelector({js(sel)}).open") is False
        assert page.evaluate(f"document.querySelector({js(sel + ' table.evidence')}).checkVisibility()") is False
        click(page, sel + " > summary")
        assert page.evaluate(f"document.querySelector({js(sel)}).open") is True
        shown = page.evaluate(f"""(() => {{
            const item = document.querySelector({js(sel)});
            const table = item.querySelector('table.evidence');
            return {{
                visible: table.checkVisibility() && table.getBoundingClientRect().height > 0,
                rows: Array.from(table.tBodies[0].rows, r => Array.from(r.cells, c => c.innerText.trim())),
                fields: Object.fromEntries(Array.from(item.querySelectorAll('dl.fields > div'),
                                                      d => [d.querySelector('dt').innerText, d.querySelector('dd').innerText])),
            }};
        }})()""")
        assert shown["visible"]
        for row in evidence:
            assert any(cells[:3] == list(row) for cells in shown["rows"]), (row, shown["rows"])
        for k, v in fields.items():
            assert shown["fields"][k] == v
        assert page.evaluate("document.documentElement.lang") == "ko"
        assert page.evaluate("document.querySelectorAll('#checks li').length") > 0  # the check list is on the page
        path = screenshot(page, tmp_path, f"board_{name}_{id_}")
        assert path.stat().st_size > 10_000
        nothing_ran(page)
    finally:
        chromium.close_page(page)


@pytest.mark.skipif(not available("live_pick"), reason="live_pick not registered")
def test_log_bodies_from_input_files_show_literally_and_never_run(chromium, tmp_path):
    """The bodies come in through the input files (a chat body, a nickname, an unreadable line),
    are judged as usual, and reach the page as text."""
    from evals.board import board_from_dir

    folder = tmp_path / "input"
    folder.mkdir()
    for f in (SEEDS / "live_pick").glob("*.jsonl"):
        (folder / f.name).write_bytes(f.read_bytes())

    def rewrite(dataset: str, change) -> None:
        path = folder / f"{dataset}.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines()
        out = []
        for line in lines:
            try:
                row = json.loads(line)
            except ValueError:
                out.append(line)
                continue
            out.append(json.dumps(change(row), ensure_ascii=False) if isinstance(row, dict) else line)
        path.write_text("\n".join(out) + "\n", encoding="utf-8")

    rewrite("live_chat", lambda r: {**r, "body": PAYLOADS[0]} if r.get("msg_id") == "MSG-20260908-1402" else r)
    rewrite("viewer_relation", lambda r: {**r, "nickname": PAYLOADS[1]} if r.get("viewer_id") == "VW-1043" else r)
    with (folder / "live_chat.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(PAYLOADS[1] + "\n")

    page = chromium.open(write_page(tmp_path, "live_pick_injected", board_from_dir(domains.get("live_pick"), folder)))
    try:
        nothing_ran(page)
        text = page.evaluate("document.body.innerText")
        assert PAYLOADS[1] in text  # the nickname in PICK-1401's summary, and the unreadable line in quarantine
        assert PAYLOADS[1] in page.evaluate(f"document.querySelector({js(row_selector('MSG-20260908-1401') + ' .sum')}).innerText")
        quarantine = page.evaluate("document.getElementById('quarantine').innerText")
        assert PAYLOADS[1] in quarantine
        sel = row_selector("MSG-20260908-1402")
        click(page, sel + " > summary")
        bodies = page.evaluate(f"""Array.from(document.querySelectorAll({js(sel + ' table.evidence tbody tr')}),
                                               r => [r.cells[1].innerText, r.cells[2].innerText])""")
        assert ["body", PAYLOADS[0]] in bodies
        screenshot(page, tmp_path, "board_live_pick_injected")
        nothing_ran(page)
    finally:
        chromium.close_page(page)


@pytest.mark.parametrize("name", ALL)
def test_injected_text_in_every_row_never_runs(name, chromium, tmp_path):
    board = sample_board(name)
    board.rows = with_payloads(board.rows, board_spec(name))
    page = chromium.open(write_page(tmp_path, f"{name}_payloads", render_board(board)))
    try:
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        nothing_ran(page)
        text = page.evaluate("document.body.innerText")
        for payload in PAYLOADS:
            assert payload in text
    finally:
        chromium.close_page(page)


@pytest.mark.skipif(not available("live_pick"), reason="live_pick not registered")
def test_filter_and_verdict_chip_hide_other_rows(chromium, tmp_path):
    from rules.live_pick import verdicts as V

    page = chromium.open(write_page(tmp_path, "live_pick_filter", render_board(sample_board("live_pick"))))
    try:
        visible = "Array.from(document.querySelectorAll('details.item')).filter(d => !d.hidden).map(d => d.dataset.id)"
        everything = page.evaluate(visible)
        click(page, f"button.chip[data-verdict-filter={js(V.JUST_ANSWERED)}]")
        only = page.evaluate("Array.from(document.querySelectorAll('details.item')).filter(d => !d.hidden).map(d => d.dataset.verdict)")
        assert only and set(only) == {V.JUST_ANSWERED} and len(only) < len(everything)
        click(page, f"button.chip[data-verdict-filter={js(V.JUST_ANSWERED)}]")  # again: the filter is off
        assert page.evaluate(visible) == everything
        page.evaluate("(() => { const box = document.getElementById('filter'); box.value = 'PICK-1401';"
                      " box.dispatchEvent(new Event('input')); })()")
        assert page.evaluate(visible) == ["MSG-20260908-1401"]
        nothing_ran(page)
    finally:
        chromium.close_page(page)


@pytest.mark.skipif(not available("persona"), reason="persona not registered")
def test_a_link_to_a_row_in_a_closed_group_opens_both(chromium, tmp_path):
    html = render_board(sample_board("persona"))
    url = write_page(tmp_path, "persona_link", html)
    anchor = html.split("data-id='TN-9001'")[0].rsplit("id='", 1)[1].split("'")[0]
    page = chromium.open(f"{url}#{anchor}")
    try:
        assert page.evaluate("document.getElementById('g-0').open") is True  # consistent: a large group, closed by default
        assert page.evaluate(f"document.getElementById({js(anchor)}).open") is True
        nothing_ran(page)
    finally:
        chromium.close_page(page)


def test_dump_dom_of_the_sample_page(tmp_path):
    """Chromium's own --dump-dom: the page after its script ran, without DevTools."""
    binary = chromium_binary()
    if binary is None:
        pytest.skip(no_browser())
    name = next((n for n in ("live_pick", "persona") if available(n)), None)
    if name is None:
        pytest.skip("no domain registered")
    url = write_page(tmp_path, name, render_board(sample_board(name)))
    out = subprocess.run([binary, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", url],
                         capture_output=True, text=True, timeout=120)
    dom = out.stdout
    assert "샘플 데이터 (sample data)" in dom
    assert dom.count('class="item"') == len(sample_board(name).rows)
    assert "<img" not in dom


def test_the_written_pages_forbid_every_inline_script_but_their_own(chromium, tmp_path):
    """Board and report carry a CSP that allows their own script and style by hash: the board still
    works (a chip filters), while an inline script added to the file afterwards is refused."""
    from evals.render import render_html

    board = render_board(sample_board("retry"))
    assert board.index("Content-Security-Policy") < board.index("<style>") < board.index("<script>")
    tampered = board.replace("</body>", "<script>window.__pwned = 3</script></body>")
    page = chromium.open(write_page(tmp_path, "tampered", tampered))
    try:
        assert page.evaluate("window.__pwned === undefined")
        refused = [e for e in page.events if e.get("method") == "Log.entryAdded"
                   and "Content Security Policy" in e["params"]["entry"].get("text", "")]
        assert len(refused) == 1, refused  # only the added script; the page's own ran
        verdict = page.evaluate("document.querySelector('[data-verdict-filter]').getAttribute('data-verdict-filter')")
        click(page, f"[data-verdict-filter={js(verdict)}]")
        shown = page.evaluate("Array.from(document.querySelectorAll('details.item'), d => d.checkVisibility())"
                              ".filter(Boolean).length")
        assert 0 < shown < page.evaluate("document.querySelectorAll('details.item').length")
        assert page.evaluate("getComputedStyle(document.body).fontFamily").startswith("system-ui")
    finally:
        chromium.close_page(page)

    _, _, report, _ = sample_parts_for_report("retry")
    page = chromium.open(write_page(tmp_path, "report", render_html(report)))
    try:
        refused = [e for e in page.events if e.get("method") == "Log.entryAdded"
                   and "Content Security Policy" in e["params"]["entry"].get("text", "")]
        assert not refused, refused
        assert page.evaluate("getComputedStyle(document.querySelector('table')).borderCollapse") == "collapse"
        screenshot(page, tmp_path, "report_retry_csp")
    finally:
        chromium.close_page(page)


@pytest.mark.skipif(not available("handoff"), reason="handoff not registered")
def test_the_handoff_board_lays_verdicts_out_in_columns_with_the_held_column_last(chromium, tmp_path):
    from rules.handoff import verdicts as V

    page = chromium.open(write_page(tmp_path, "handoff", render_board(sample_board("handoff"))))
    try:
        boxes = page.evaluate("""Array.from(document.querySelectorAll('.columns > details.group'),
            g => { const r = g.getBoundingClientRect(); return [g.dataset.groupVerdict, r.x, r.y, r.width]; })""")
        assert [b[0] for b in boxes] == [*V.ORDER, V.HELD]
        assert len({round(b[2]) for b in boxes}) == 1  # one row: side by side, not stacked
        assert all(a[1] + a[3] <= b[1] + 1 for a, b in zip(boxes, boxes[1:]))
        assert page.evaluate("document.querySelector('.aggregates h2').innerText") == "집계 · 5일 (2026-09-30 ~ 2026-10-05)"
        screenshot(page, tmp_path, "board_handoff_columns")
        nothing_ran(page)
    finally:
        chromium.close_page(page)
