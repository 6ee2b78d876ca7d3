"""How long the operator's page takes to show a 3,000-line window: frame arrived → drawn, in Chromium.

    .venv/bin/python benchmarks/console_render.py [--rate 100] [--seconds 95] [--width 1366 --height 768]

Starts `verdicts serve` (as `benchmarks/live_console.py` does: SQLite warehouse, `--tags model`, grace
200 ms) on a free loopback port, opens `/live` in headless Chromium (Debian's, driven by Playwright)
and feeds one character at `--rate` lines a second (`verdicts replay --to … --shift-to-now`), so each
full 30-second window holds rate × 30 lines. The page stamps every window frame as its socket hands it
over and again once it is drawn (after the next animation frame: parsed, put in the page, styled,
laid out and painted; `window.__consoleRenders`). Prints, per window, its lines, the script's share
(parse + DOM) and frame → drawn, and the median and max over the full windows; then the same full
window frames sent again three times each to a page whose console socket this script plays (nothing
else running: the browser's own cost, without the service finishing windows on the same cores).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.live_console import BIN, Service, broadcast  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
LOAF = """window.__loaf = [];
new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__loaf.push({start: e.startTime, duration: e.duration,
  render: e.renderStart, layout: e.styleAndLayoutStart, scripts: e.scripts.reduce((a, s) => a + s.duration, 0)}); })
  .observe({type: "long-animation-frame", buffered: true});"""
"""Long animation frames (over 50 ms) as Chromium reports them: where a slow frame's time went."""


def where(render: dict, frames: list[dict]) -> str:
    """The long animation frames between a window frame's arrival and its drawing: script, style and
    layout, and the rest (paint, compositing, waiting), in ms."""
    end = render["at"] + render["drawn_ms"]
    hit = [f for f in frames if f["start"] < end and f["start"] + f["duration"] > render["at"]]
    if not hit:
        return "no long frame"
    script = sum(f["scripts"] for f in hit)
    layout = sum(f["start"] + f["duration"] - f["layout"] for f in hit if f["layout"])
    return f"{len(hit)} long frame(s) {sum(f['duration'] for f in hit):.0f} ms: scripts {script:.0f}, style+layout+paint {layout:.0f}"


def keep(payload, captured: list[dict]) -> None:
    """A window frame off the live page's socket, kept to be played again."""
    text = payload.decode("utf-8") if isinstance(payload, bytes) else payload
    if text.startswith('{"type":"window"'):
        captured.append(json.loads(text))


def replayed(browser, args, port: int, frames: list[dict], rounds: int = 3) -> list[dict]:
    """Each frame sent `rounds` times (as a new window each time) to a fresh page whose `/ws/windows`
    is this script, a second apart, once the page has settled; the page's render records."""
    page = browser.new_page(viewport={"width": args.width, "height": args.height})
    sockets = []
    page.route_web_socket(re.compile(r".*/ws/windows.*"), lambda ws: sockets.append(ws))
    page.goto(f"http://127.0.0.1:{port}/live")
    page.wait_for_function("() => document.querySelector('#status').dataset.state === 'live'", timeout=30000)
    sockets[0].send(json.dumps({"type": "resumed", "epoch": 1, "through": 0}))
    time.sleep(2)
    seq = 0
    for n in range(rounds):
        for frame in frames:
            seq += 1
            again = {**frame, "seq": seq, "epoch": 1, "window_start": f"{frame['window_start']}#{n}"}
            sockets[0].send(json.dumps(again, ensure_ascii=False))
            page.wait_for_function(f"() => window.__consoleRenders.length >= {seq}", timeout=30000)
            time.sleep(1)
    out = page.evaluate("() => window.__consoleRenders")
    page.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, default=100.0, help="lines a second (a full window holds 30 × rate)")
    ap.add_argument("--seconds", type=float, default=95.0, help="how long the broadcast lasts")
    ap.add_argument("--character", default="CH-0007")
    ap.add_argument("--width", type=int, default=1366)
    ap.add_argument("--height", type=int, default=768)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        service = Service(tmp, "render")
        service.start()
        chat = tmp / "chat.jsonl"
        sent = broadcast(chat, (args.character,), args.rate, args.seconds, seed=7)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": args.width, "height": args.height})
                page.add_init_script(LOAF)
                captured: list[dict] = []
                page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: keep(payload, captured)))
                page.goto(f"http://127.0.0.1:{service.port}/live")
                page.wait_for_selector("#status[data-state='live']", timeout=30000)
                replayer = subprocess.run([str(BIN / "verdicts"), "replay", str(chat), "--rate", str(args.rate), "--shift-to-now",
                                           "--to", f"ws://127.0.0.1:{service.port}/ws/ingest"], cwd=ROOT, env=service.env,
                                          capture_output=True, text=True, timeout=args.seconds + 120)
                if replayer.returncode != 0:
                    raise SystemExit(f"replay failed: {replayer.stdout[-2000:]} {replayer.stderr[-2000:]}")
                deadline = time.time() + 60
                while service.status()["pending"] and time.time() < deadline:
                    time.sleep(0.5)
                time.sleep(2)
                renders = page.evaluate("() => window.__consoleRenders")
                frames = page.evaluate("() => window.__loaf")
                # again with nothing else running: a page whose console socket is played by this script
                # sends it each full window the live page got, as it got it (the browser's own cost)
                quiet = replayed(browser, args, service.port, [f for f in captured if f["lines"] >= 0.95 * args.rate * 30])
                browser.close()
        finally:
            service.stop()
    full = [r for r in renders if r["lines"] >= 0.95 * args.rate * 30]
    print(f"{sent:,} lines sent at {args.rate:g} lines/s; {len(renders)} windows drawn, {len(full)} full")
    print(f"{'window':<32} {'lines':>6} {'script ms':>10} {'frame → drawn ms':>17}  where")
    for r in renders:
        print(f"{r['key']:<32} {r['lines']:>6} {r['script_ms']:>10.1f} {r['drawn_ms']:>17.1f}  {where(r, frames)}")
    for name, rows in (("live, full windows", full), ("the same frames again, nothing else running", quiet)):
        if not rows:
            continue
        drawn = [r["drawn_ms"] for r in rows]
        script = [r["script_ms"] for r in rows]
        print(f"{name}: frame → drawn median {statistics.median(drawn):.1f} ms, max {max(drawn):.1f} ms; "
              f"script median {statistics.median(script):.1f} ms, max {max(script):.1f} ms  "
              f"({', '.join(f'{d:.0f}' for d in drawn)})")


if __name__ == "__main__":
    main()
