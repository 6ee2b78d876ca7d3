"""Time and memory of the admin pages' report and board of a large stored day, in the web process.

    .venv/bin/python benchmarks/stored_pages.py [--domain live_pick] [--rows 100000] [--source DIR ...]

Generates a day of `--rows` main rows (`scale.nightly_folder`, cached under var/bench), runs the
nightly job on it once (a fresh Dagster home and SQLite warehouse under var/bench/stored_pages), then
for each `--source` checkout (default: this one) starts a fresh process running that checkout's web
app over the same raw folder and warehouse and asks for the day's item list (first page, read from
the warehouse by every version: the floor), then the report page; then the same in another fresh
process with the board page (`--pages`: also the domain's page, listing its runs). Per
request: seconds, the page's size, where its figures came from, and the process's resident memory
before it and at its peak during it (`VmHWM`, reset before each request through `clear_refs`).
Prints one JSON object per source and page.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))


def memory() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process, in MB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def serve_child(home: Path, warehouse: str, raw: Path, domain: str, day: str, page_name: str) -> None:
    """In the process measured: the web app of the checkout first on sys.path, asked for the day's item
    list (the floor) and then `page_name`."""
    from starlette.testclient import TestClient

    from web.app import create_app
    from web.config import WebConfig

    config = WebConfig(home=home, warehouse_url=warehouse, raw_dir=raw, token=None, admin_warm=False, judge_helper=False)
    out = {}
    with TestClient(create_app(config), base_url="http://127.0.0.1:8765") as client:
        for name in ("items", page_name):
            before, _ = memory()
            reset_peak()
            t = time.perf_counter()
            page = client.get(f"/admin/{domain}" if name == "domain_page" else f"/admin/{domain}/runs/day-{day}/{name}")
            seconds = time.perf_counter() - t
            _, peak = memory()
            stored = "창고에 저장한 판정" if name == "items" else f"data-run='day-{day}' data-source='stored'" if name == "domain_page" \
                else "data-source='stored'"
            source = "stored" if stored in page.text else "judged"
            out[name] = {"status": page.status_code, "seconds": round(seconds, 2), "bytes": len(page.content), "source": source,
                         "rss_before_mb": round(before), "peak_mb": round(peak)}
    import web

    print(json.dumps({"code": web.__file__, **out}))


def main() -> None:
    import scale

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--domain", default="live_pick")
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--data", type=Path, default=ROOT / "var" / "bench")
    p.add_argument("--source", type=Path, nargs="+", default=[ROOT], help="checkouts whose web app is measured, in turn")
    p.add_argument("--pages", nargs="+", default=["report", "board"], choices=["report", "board", "domain_page"],
                   help="pages asked for, each in a fresh process (domain_page: the domain's page, which lists its runs with their figures)")
    p.add_argument("--child", nargs=7, metavar=("SOURCE", "HOME", "WAREHOUSE", "RAW", "DOMAIN", "DAY", "PAGE"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        source, home, warehouse, raw, domain, day, page_name = args.child
        sys.path.insert(0, source)  # the checkout measured, ahead of the one installed
        serve_child(Path(home), warehouse, Path(raw), domain, day, page_name)
        return
    raw, day, that_day = scale.nightly_folder(args.data, args.domain, args.rows)
    work = args.data / "stored_pages" / args.domain / str(args.rows)
    env = scale.nightly_env(str(work), raw)
    if not (work / "done").is_file():
        work.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "scale.py"), "--nightly-child", str(raw), day],
                              cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit("the nightly job failed: " + done.stderr[-2000:])
        print(f"nightly job on {args.domain} {day} ({that_day:,} main rows): {time.perf_counter() - t:.0f} s; "
              + done.stdout.strip().splitlines()[-1], flush=True)
        (work / "done").write_text(day)
    for source in args.source:
        for page_name in args.pages:  # each in a fresh process: none finds another's run judged
            done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(source), str(work / "web-home"),
                                   env["WAREHOUSE_URL"], str(raw), args.domain, day, page_name], cwd=source, env=env, capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"{source}: " + done.stderr[-2000:])
            result = json.loads(done.stdout.strip().splitlines()[-1])
            print(json.dumps({"source": str(source), "domain": args.domain, "day": day, "rows": that_day,
                              "load": round(os.getloadavg()[0], 1), **result}, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
