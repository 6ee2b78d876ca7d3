"""Live console latency: window end → window frame received, through the real service.

    .venv/bin/python benchmarks/live_console.py [--rates 40 400 2000] [--windows 20] [--characters 4] [--kill-at 45] [--no-sensor]

For each rate it starts `verdicts serve` on a free loopback port with its own SQLite
warehouse, feeds it with `verdicts replay --to ws://…/ws/ingest --shift-to-now` (one replayer
process per character, the rate split evenly between them so the service takes R lines/s in
all), receives the window frames on a second client in this process, and prints p50/p95/max of
window end → frame received, and lines sent / judged / quarantined / late.

The characters broadcast at the same time, so their windows end at the same instant and the
service finishes them one after the other: at 400 lines/s and 4 characters, 12,000 lines close
together (4 windows of 3,000), the work of one 12,000-line window. This is how ≥ 20 windows
per rate finish in ⌈20 / characters⌉ + 1 window lengths instead of 20.

During the first rate the Dagster sensor path runs beside it, as `benchmarks/live_latency.py`
sets it up (dagster-daemon, SQLite instance, the window sensor and job, a second warehouse fed
the same lines through the landing table), so both latencies come from the same minutes.
`--kill-at S` kills the service with SIGKILL S seconds into the first rate and restarts it:
the replayers reconnect and send again what was not acknowledged, and the accounting must still
close (every line sent is judged, quarantined or late; a frame sent again after the kill comes
back quarantined as a duplicate, counted apart).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BIN = Path(sys.executable).parent

from benchmarks import live_latency  # noqa: E402
from orchestration.live import store  # noqa: E402
from orchestration.live.replay import replay  # noqa: E402
from rules.live_pick.config import load_config  # noqa: E402

CHARACTERS = ("CH-0007", "CH-0008", "CH-0011", "CH-0015")
WINDOW = 30


def broadcast(path: Path, character: str, rate: float, seconds: float, seed: int) -> int:
    """Lines shaped like the sample's broadcast of that character: its bodies, tags, viewers."""
    sample = [json.loads(t) for t in (ROOT / "seeds/live_pick/live_chat.jsonl").read_text(encoding="utf-8").splitlines()
              if t.startswith("{") and f'"{character}"' in t]
    sample = [s for s in sample if isinstance(s.get("donation_amount"), int) and isinstance(s.get("msg_id"), str)]
    rng = random.Random(seed)
    n = int(rate * seconds)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            line = dict(rng.choice(sample))
            line["msg_id"] = f"MSG-BENCH-{character}-{seed}-{i:07d}"
            line["donation_amount"] = rng.choice([0, 0, 0, 1000, 5000, 10000])
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    return n


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    def __init__(self, tmp: Path, name: str):
        self.port = free_port()
        self.url = f"sqlite:///{tmp / f'{name}.sqlite'}"
        self.env = {**os.environ, "WAREHOUSE_URL": self.url, "VERDICTS_HOME": str(tmp / name), "PYTHONPATH": str(ROOT)}
        self.env.pop("VERDICTS_LIVE_TOKEN", None)
        self.proc = None

    def start(self) -> None:
        self.proc = subprocess.Popen([str(BIN / "verdicts"), "serve", "--port", str(self.port), "--tags", "model",
                                      "--grace-ms", "200"], cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + 120
        while time.time() < deadline:  # serving, and its judging helper loaded (or off, or failed)
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/live/status", timeout=2) as r:
                    if json.loads(r.read())["judge_helper"] != "starting":
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("verdicts serve did not start")

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()


HEAD = re.compile(r'"(type|character_id|window_start|window_end_ns|lines|late_seq|latency_ms)":("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|null)')


def head(text: str) -> dict:
    """A frame's top-level fields that come before its verdicts (the first of each key)."""
    out: dict = {}
    for key, value in HEAD.findall(text[:1000]):
        out.setdefault(key, json.loads(value))
    return out


class Receiver(threading.Thread):
    """The console's side: every window frame with its arrival time; resumes with `after` when dropped.

    A frame is stamped as it comes off the socket and only its head is read then: parsing a
    3 MB frame whole (about 40 ms with json) would hold up the frames behind it, and the wait
    would be counted as the service's."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.port = port
        self.frames: list[tuple[int, dict]] = []
        self.late_lines = 0
        self.late_seen: set[int] = set()
        self.stopping = False
        self.last: str | None = None

    def run(self) -> None:
        asyncio.run(self._run())

    async def _run(self) -> None:
        import websockets

        while not self.stopping:
            after = self.last or "none/none"
            try:
                async with websockets.connect(f"ws://127.0.0.1:{self.port}/ws/windows?after={after}", max_size=None) as ws:
                    while not self.stopping:
                        try:
                            text = await asyncio.wait_for(ws.recv(), 0.5)
                        except asyncio.TimeoutError:
                            continue
                        got = time.time_ns()
                        frame = head(text)
                        if frame["type"] == "window":
                            self.frames.append((got, frame))
                            self.last = f"{frame['character_id']}/{frame['window_start']}"
                        elif frame["type"] == "late" and frame["late_seq"] not in self.late_seen:  # resent on resume
                            self.late_seen.add(frame["late_seq"])
                            self.late_lines += frame["lines"]
            except (OSError, websockets.exceptions.ConnectionClosed, websockets.exceptions.InvalidStatus):
                await asyncio.sleep(0.3)


def quantile(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    pos = (len(s) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def counts(url: str) -> dict:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        def n(table):
            return conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()

        dup = conn.execute(sa.select(sa.func.count()).select_from(store.quarantine)
                           .where(store.quarantine.c.reason_code == "duplicate_id")).scalar_one()
        out = {"landed": n(store.landing), "judged": n(store.verdicts), "quarantined": n(store.quarantine),
               "duplicates": dup, "late": n(store.late), "windows": n(store.windows)}
    engine.dispose()
    return out


def run_rate(tmp: Path, rate: float, windows: int, characters: int, with_sensor: bool, kill_at: float | None) -> dict:
    chars = CHARACTERS[:characters]
    seconds = (math.ceil(windows / characters) + 1) * WINDOW
    files, sent = [], 0
    for i, c in enumerate(chars):
        path = tmp / f"chat_{int(rate)}_{c}.jsonl"
        sent += broadcast(path, c, rate / characters, seconds, seed=int(rate) * 10 + i)
        files.append(path)
    service = Service(tmp, f"svc{int(rate)}")
    service.start()
    receiver = Receiver(service.port)
    receiver.start()
    daemon = sensor_engine = None
    if with_sensor:
        env, workspace, sensor_engine = live_latency.setup(tmp, f"sensor{int(rate)}", "orchestration.definitions")
        daemon = live_latency.start_daemon(Path(env["DAGSTER_HOME"]), workspace, env)
        time.sleep(15)  # the daemon loads the code location and starts the sensor
    time.sleep(max(0.0, WINDOW - time.time() % WINDOW + 0.5))  # start just after a window begins
    started = time.time()
    config = load_config()
    replayers = [subprocess.Popen([str(BIN / "verdicts"), "replay", str(f), "--rate", str(rate / characters), "--shift-to-now",
                                   "--to", f"ws://127.0.0.1:{service.port}/ws/ingest"], cwd=ROOT, env=service.env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for f in files]
    feeders = []
    if sensor_engine is not None:
        feeders = [threading.Thread(target=replay, args=(sensor_engine, f, config),
                                    kwargs={"rate": rate / characters, "shift_to_now": True, "progress": lambda s: None})
                   for f in files]
        for t in feeders:
            t.start()
    killed = False
    try:
        while any(p.poll() is None for p in replayers):
            if kill_at is not None and not killed and time.time() - started >= kill_at:
                service.kill()
                service.start()
                killed = True
            time.sleep(0.2)
        replay_errors = [p.stderr.read()[-300:] for p in replayers if p.returncode != 0]
        for t in feeders:
            t.join()
        engine = sa.create_engine(service.url)
        with engine.connect() as conn:  # every window that holds a line, pushed and received
            expected = conn.execute(sa.select(sa.func.count()).select_from(
                sa.select(store.landing.c.character_id, store.landing.c.window_ns)
                .where(store.landing.c.window_ns.is_not(None)).distinct().subquery())).scalar_one()
        engine.dispose()
        deadline = time.time() + 240
        while time.time() < deadline and len({(f["character_id"], f["window_start"]) for _, f in receiver.frames}) < expected:
            time.sleep(0.5)
        time.sleep(1.5)
        if sensor_engine is not None:
            with sensor_engine.connect() as conn:
                expected = conn.execute(sa.select(sa.func.count()).select_from(
                    sa.select(store.landing.c.character_id, store.landing.c.window_ns).distinct().subquery())).scalar_one()
            live_latency.wait_for_windows(sensor_engine, expected, 120)
    finally:
        for p in replayers:
            if p.poll() is None:
                p.kill()
        receiver.stopping = True
        receiver.join(timeout=10)
        service.stop()
        if daemon is not None:
            live_latency.stop(daemon)
    got = {}
    for recv_ns, f in receiver.frames:  # first arrival of each window
        got.setdefault((f["character_id"], f["window_start"]), (recv_ns, f))
    lat = [(recv - f["window_end_ns"]) / 1e6 for recv, f in got.values()]
    full = [f for _, f in got.values() if f["lines"] >= 0.9 * rate / characters * WINDOW]
    out = {"rate": rate, "characters": characters, "sent": sent, "windows": len(got), "full_windows": len(full),
           "lines_per_window": int(rate / characters * WINDOW), "p50": quantile(lat, 0.5), "p95": quantile(lat, 0.95),
           "max": max(lat) if lat else float("nan"),
           "sent_to_received_ms": quantile([(recv - f["window_end_ns"]) / 1e6 - f["latency_ms"] for recv, f in got.values()], 0.5),
           "pushed_p95": quantile([f["latency_ms"] for _, f in got.values()], 0.95),
           "latencies_ms": {f"{f['character_id']}/{f['window_start']}": round((recv - f["window_end_ns"]) / 1e6, 1) for recv, f in got.values()},
           "pushed_ms": {f"{f['character_id']}/{f['window_start']}": f["latency_ms"] for _, f in got.values()},
           "killed": killed, "replay_errors": replay_errors, **counts(service.url)}
    out["accounted"] = out["judged"] + out["quarantined"] - out["duplicates"] + out["late"]
    if sensor_engine is not None:
        import pandas as pd

        with sensor_engine.connect() as conn:
            wins = pd.read_sql(sa.select(store.windows), conn)
        s = wins["latency_ms"]
        out["sensor"] = {"windows": len(wins), "p50": s.quantile(0.5), "p95": s.quantile(0.95), "max": s.max()}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rates", type=float, nargs="+", default=[40, 400, 2000])
    parser.add_argument("--windows", type=int, default=20, help="windows per rate, over all characters")
    parser.add_argument("--characters", type=int, default=4, choices=range(1, len(CHARACTERS) + 1))
    parser.add_argument("--kill-at", type=float, help="SIGKILL the service this many seconds into the first rate, then restart it")
    parser.add_argument("--no-sensor", action="store_true", help="leave the Dagster sensor path out (a quicker look at the service alone)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="live_console_bench_"))
    try:
        results = []
        for i, rate in enumerate(args.rates):
            r = run_rate(tmp, rate, args.windows, args.characters, with_sensor=(i == 0 and not args.no_sensor), kill_at=args.kill_at if i == 0 else None)
            results.append(r)
            print(f"{int(rate):>5} lines/s ({r['characters']} characters × {r['lines_per_window']} lines a window"
                  f"{', killed and restarted' if r['killed'] else ''}): windows {r['windows']} ({r['full_windows']} full)  "
                  f"end → frame received p50 {r['p50']:.0f} ms  p95 {r['p95']:.0f} ms  max {r['max']:.0f} ms (end → frame pushed p95 {r['pushed_p95']:.0f} ms, pushed → received p50 {r['sent_to_received_ms']:.0f} ms)  |  "
                  f"sent {r['sent']}  judged {r['judged']}  quarantined {r['quarantined']} (duplicates of resent frames {r['duplicates']})  "
                  f"late {r['late']}  → accounted {r['accounted']} of {r['sent']}", flush=True)
            if r["replay_errors"]:
                print("  replayer errors:", r["replay_errors"], flush=True)
            if "sensor" in r:
                s = r["sensor"]
                print(f"      sensor path, same lines, same minutes: windows {s['windows']}  end → stored p50 {s['p50'] / 1000:.2f} s  "
                      f"p95 {s['p95'] / 1000:.2f} s  max {s['max'] / 1000:.2f} s  → live p95 is {s['p95'] / r['p95']:.0f}× lower", flush=True)
        print(json.dumps(results, default=float), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
