"""How long the operator's page takes to show a 3,000-line window: frame arrived → drawn, in Chromium.

    .venv/bin/python benchmarks/console_render.py [--rate 100] [--seconds 95] [--width 1366 --height 768]

Starts `verdicts serve` (as `benchmarks/live_console.py` does: SQLite warehouse, `--tags model`, grace
200 ms) on a free loopback port, opens `/live` in headless Chromium (Debian's, driven by Playwright)
and feeds one character at `--rate` lines a second (`verdicts replay --to … --shift-to-now`), so each
full 30-second window holds rate × 30 lines. The page stamps every window frame as its socket hands it
over and again once it is drawn (after the next animation frame: parsed, put in the page, styled,
laid out and painted; `window.__consoleRenders`). Prints, per window, its lines, the script's share
(parse + DOM) and frame → drawn, and the median and max over the full windows; then each full window
again, with the service idle, on a fresh page resuming just before it (`?after=`): the browser's own
cost without the service finishing windows on the same cores.
"""

from __future__ import annotations

import argparse
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
                # again with the service idle: a fresh page resuming after the window before each full one
                # is sent that full window first (the browser's own cost, nothing else busy on the machine)
                quiet = []
                keys = [r["key"] for r in renders]
                for before, r in zip(keys, renders[1:]):
                    if r["lines"] < 0.95 * args.rate * 30:
                        continue
                    fresh = browser.new_page(viewport={"width": args.width, "height": args.height})
                    fresh.goto(f"http://127.0.0.1:{service.port}/live?after={before}")
                    fresh.wait_for_function("() => (window.__consoleRenders || []).length > 0", timeout=30000)
                    quiet.append(fresh.evaluate("() => window.__consoleRenders[0]"))
                    fresh.close()
                browser.close()
        finally:
            service.stop()
    full = [r for r in renders if r["lines"] >= 0.95 * args.rate * 30]
    print(f"{sent:,} lines sent at {args.rate:g} lines/s; {len(renders)} windows drawn, {len(full)} full")
    print(f"{'window':<32} {'lines':>6} {'script ms':>10} {'frame → drawn ms':>17}")
    for r in renders:
        print(f"{r['key']:<32} {r['lines']:>6} {r['script_ms']:>10.1f} {r['drawn_ms']:>17.1f}")
    for name, rows in (("live, full windows", full), ("the service idle, full windows again", quiet)):
        if not rows:
            continue
        drawn = [r["drawn_ms"] for r in rows]
        script = [r["script_ms"] for r in rows]
        print(f"{name}: frame → drawn median {statistics.median(drawn):.1f} ms, max {max(drawn):.1f} ms; "
              f"script median {statistics.median(script):.1f} ms, max {max(script):.1f} ms  "
              f"({', '.join(f'{d:.0f}' for d in drawn)})")


if __name__ == "__main__":
    main()
