"""Live console latency and delivery: window end → window frame received, through the real service,
and every window on every console.

    .venv/bin/python benchmarks/live_console.py [--rates 40 400 2000] [--windows 21] [--hog-rates 400] [--kill-at 45] [--sensor]

For each rate it starts `verdicts serve` on a free loopback port with its own SQLite warehouse and
seven characters (the sample's five sheets and two more), first measures the floor on it (two
windows of a single line: what every window pays, whatever it holds), then feeds it from two
senders, `verdicts replay --to ws://…/ws/ingest --shift-to-now` processes each carrying half the
characters (the rate split by characters), and receives the frames on two consoles in this process:
one steady, one that drops its socket every 20 s and resumes with `after_seq`. It prints p50/p95/max
of window end → frame received on the steady console, the ratio of the p95 to the floor, and for each
console the windows it received of those stored, any received twice, any gap in the numbers it was
sent live; and the lines sent / judged / quarantined / duplicates / late with the service's own
figures (`/live/status`). `--hog-rates` runs those rates again with two CPU-bound processes beside the
service (an operator's machine also encodes video).

The characters broadcast at the same time, so their windows end at the same instant and the
service finishes them one after the other: at 400 lines/s seven windows of about 1,700 lines close
together. `--sensor` runs the Dagster sensor path beside the first rate, as `benchmarks/live_latency.py`
sets it up. `--kill-at S` kills the service with SIGKILL S seconds into the first rate and restarts
it: the replayers reconnect and send again what was not acknowledged (the service recognises what it
had stored), and the accounting must still close.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
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
from live import store  # noqa: E402
from live.replay import replay  # noqa: E402
from live.windows_client import WindowsClient  # noqa: E402
from rules.live_pick.config import load_config  # noqa: E402

CHARACTERS = ("CH-0007", "CH-0008", "CH-0011", "CH-0012", "CH-0015", "CH-0107", "CH-0108")
"""Seven characters: the sample's five sheets, and two more made from CH-0007's and CH-0008's."""
COPIES = {"CH-0107": "CH-0007", "CH-0108": "CH-0008"}
WINDOW = 30


def write_input(folder: Path) -> Path:
    """The sample's sheets and viewers, with the two extra characters' sheets."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "seeds/live_pick/viewer_relation.jsonl", folder / "viewer_relation.jsonl")
    sheets = [json.loads(t) for t in (ROOT / "seeds/live_pick/character_sheet.jsonl").read_text(encoding="utf-8").splitlines()
              if t.startswith("{")]
    sheets = [s for s in sheets if isinstance(s, dict) and isinstance(s.get("character_id"), str)]
    by_id = {s["character_id"]: s for s in sheets}
    extra = [{**by_id[source], "character_id": copy, "character_name": f"{by_id[source]['character_name']} 2"}
             for copy, source in COPIES.items() if source in by_id]
    (folder / "character_sheet.jsonl").write_text("\n".join(json.dumps(s, ensure_ascii=False) for s in sheets + extra) + "\n",
                                                  encoding="utf-8")
    return folder


def broadcast(path: Path, characters: tuple[str, ...], rate: float, seconds: float, seed: int) -> int:
    """One sender's lines, its characters interleaved, shaped like the sample's broadcasts of them."""
    rows = [json.loads(t) for t in (ROOT / "seeds/live_pick/live_chat.jsonl").read_text(encoding="utf-8").splitlines()
            if t.startswith("{")]
    pools = {}
    for c in characters:
        source = COPIES.get(c, c)
        pools[c] = [r for r in rows if isinstance(r, dict) and r.get("character_id") == source
                    and isinstance(r.get("donation_amount"), int) and isinstance(r.get("msg_id"), str)]
    rng = random.Random(seed)
    n = int(rate * seconds)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            c = characters[i % len(characters)]
            line = dict(rng.choice(pools[c]))
            line["character_id"] = c
            line["msg_id"] = f"MSG-BENCH-{c}-{seed}-{i:07d}"
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
        self.input = write_input(tmp / f"{name}-input")
        self.env = {**os.environ, "WAREHOUSE_URL": self.url, "VERDICTS_HOME": str(tmp / name), "PYTHONPATH": str(ROOT)}
        self.env.pop("VERDICTS_LIVE_TOKEN", None)
        self.proc = None

    def start(self) -> None:
        self.proc = subprocess.Popen([str(BIN / "verdicts"), "serve", "--port", str(self.port), "--tags", "model",
                                      "--grace-ms", "200", "--input", str(self.input)], cwd=ROOT, env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + 120
        while time.time() < deadline:  # serving, and its judging helper loaded (or off, or failed)
            try:
                if self.status()["judge_helper"] != "starting":
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("verdicts serve did not start")

    def status(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/live/status", timeout=10) as r:
            return json.loads(r.read())

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


class Receiver(threading.Thread):
    """A console (`WindowsClient`): the first arrival of every window frame with its head; with
    `drop_every`, it drops its socket that often and resumes with `after_seq`.

    A frame is stamped as it comes off the socket and only its head is read then: parsing a
    3 MB frame whole (about 40 ms with json) would hold up the frames behind it, and the wait
    would be counted as the service's."""

    def __init__(self, port: int, drop_every: float | None = None):
        super().__init__(daemon=True)
        self.heads: dict[tuple, dict] = {}
        self.client = WindowsClient(f"ws://127.0.0.1:{port}", on_frame=self._took, drop_every=drop_every)
        self.loop = asyncio.new_event_loop()
        self.stop = asyncio.Event()

    def _took(self, text: str, frame: dict) -> None:
        if frame["type"] == "window":
            self.heads[(frame["character_id"], frame["window_start"])] = frame

    def run(self) -> None:
        self.loop.run_until_complete(self.client.run(self.stop))

    def stopping(self) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)

    @property
    def frames(self) -> list[tuple[int, dict]]:
        """(first arrival, head) of every window received."""
        return [(self.client.seen.windows[k][0], f) for k, f in self.heads.items()]

    def windows(self) -> dict[tuple, list[int]]:
        return self.client.seen.windows


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
        out = {"landed": n(store.landing), "judged": n(store.verdicts), "quarantined": n(store.quarantine) - dup,
               "duplicates": dup, "late": n(store.late), "windows": n(store.windows)}
    engine.dispose()
    return out


def hogs(n: int) -> list[subprocess.Popen]:
    """`n` CPU-bound processes beside the service (an operator's machine also encodes video)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(n)]


def floor(service: Service, tmp: Path) -> float:
    """The floor of end → frame received on this service: windows of a single line (one character),
    two of them, median. What every window pays whatever it holds (the grace, storing, sending)."""
    receiver = Receiver(service.port)
    receiver.start()
    time.sleep(max(0.0, WINDOW - time.time() % WINDOW + 1.0))
    path = tmp / "floor.jsonl"
    broadcast(path, ("CH-0012",), 1 / WINDOW, 2 * WINDOW, seed=99)
    subprocess.run([str(BIN / "verdicts"), "replay", str(path), "--rate", str(1 / WINDOW), "--shift-to-now", "--to",
                    f"ws://127.0.0.1:{service.port}/ws/ingest"], cwd=ROOT, env=service.env, capture_output=True, timeout=300)
    deadline = time.time() + 2 * WINDOW
    while time.time() < deadline and len(receiver.windows()) < 2:
        time.sleep(0.2)
    receiver.stopping()
    receiver.join(timeout=10)
    return quantile([(got - f["window_end_ns"]) / 1e6 for got, f in receiver.frames], 0.5)


def run_rate(tmp: Path, rate: float, windows: int, with_sensor: bool, kill_at: float | None, hog_count: int) -> dict:
    chars = CHARACTERS
    halves = (chars[0::2], chars[1::2])  # two senders, each with its own characters
    seconds = (math.ceil(windows / len(chars)) + 1) * WINDOW
    name = f"svc{int(rate)}{'h' if hog_count else ''}"
    service = Service(tmp, name)
    files, sent = [], 0
    for i, half in enumerate(halves):
        path = tmp / f"chat_{name}_{i}.jsonl"
        sent += broadcast(path, half, rate * len(half) / len(chars), seconds, seed=int(rate) * 10 + i)
        files.append((path, rate * len(half) / len(chars)))
    service.start()
    floor_ms = floor(service, tmp)
    before = counts(service.url)
    steady, resuming = Receiver(service.port), Receiver(service.port, drop_every=20.0)
    steady.start()
    resuming.start()
    daemon = sensor_engine = None
    if with_sensor:
        env, workspace, sensor_engine = live_latency.setup(tmp, f"sensor{int(rate)}", "orchestration.definitions")
        daemon = live_latency.start_daemon(Path(env["DAGSTER_HOME"]), workspace, env)
        time.sleep(15)  # the daemon loads the code location and starts the sensor
    hogged = hogs(hog_count)
    time.sleep(max(0.0, WINDOW - time.time() % WINDOW + 0.5))  # start just after a window begins
    started = time.time()
    config = load_config()
    replayers = [subprocess.Popen([str(BIN / "verdicts"), "replay", str(f), "--rate", str(r), "--shift-to-now",
                                   "--to", f"ws://127.0.0.1:{service.port}/ws/ingest"], cwd=ROOT, env=service.env,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) for f, r in files]
    feeders = []
    if sensor_engine is not None:
        feeders = [threading.Thread(target=replay, args=(sensor_engine, f, config),
                                    kwargs={"rate": r, "shift_to_now": True, "progress": lambda s: None})
                   for f, r in files]
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
        summaries = [p.stdout.read() for p in replayers]
        replay_errors = [out[-300:] for p, out in zip(replayers, summaries) if p.returncode != 0]
        for t in feeders:
            t.join()
        deadline = time.time() + 240
        while time.time() < deadline:
            status = service.status()
            if status["pending"] == 0:
                break
            time.sleep(0.5)
        engine = sa.create_engine(service.url)
        with engine.connect() as conn:
            expected = {(c, s) for c, s in conn.execute(sa.select(store.windows.c.character_id, store.windows.c.window_start))}
        engine.dispose()
        while time.time() < deadline and any(set(r.windows()) < expected for r in (steady, resuming)):
            time.sleep(0.5)
        time.sleep(1.5)
        if sensor_engine is not None:
            with sensor_engine.connect() as conn:
                n = conn.execute(sa.select(sa.func.count()).select_from(
                    sa.select(store.landing.c.character_id, store.landing.c.window_ns).distinct().subquery())).scalar_one()
            live_latency.wait_for_windows(sensor_engine, n, 120)
    finally:
        for p in hogged:
            p.kill()
            p.wait()
        for p in replayers:
            if p.poll() is None:
                p.kill()
        for r in (steady, resuming):
            r.stopping()
            r.join(timeout=10)
        service.stop()
        if daemon is not None:
            live_latency.stop(daemon)
    first = {}
    for recv_ns, f in steady.frames:  # first arrival of each window
        first.setdefault((f["character_id"], f["window_start"]), (recv_ns, f))
    rate_windows = {k: v for k, v in first.items() if v[1]["window_end_ns"] // 10**9 >= started}
    lat = [(recv - f["window_end_ns"]) / 1e6 for recv, f in rate_windows.values()]
    per_char = rate / len(chars)
    full = [f for _, f in rate_windows.values() if f["lines"] >= 0.9 * per_char * WINDOW]
    after = counts(service.url)
    out = {"rate": rate, "characters": len(chars), "senders": len(halves), "hogs": hog_count, "sent": sent,
           "windows": len(rate_windows), "full_windows": len(full), "lines_per_window": int(per_char * WINDOW),
           "floor_ms": floor_ms, "p50": quantile(lat, 0.5), "p95": quantile(lat, 0.95), "max": max(lat) if lat else float("nan"),
           "sent_to_received_ms": quantile([(recv - f["window_end_ns"]) / 1e6 - f["latency_ms"] for recv, f in rate_windows.values()], 0.5),
           "pushed_p95": quantile([f["latency_ms"] for _, f in rate_windows.values()], 0.95),
           "stored_windows": len(expected),
           "consoles": [{"received": len(set(r.windows()) & expected), "missing": len(expected - set(r.windows())),
                         "twice": sum(1 for v in r.windows().values() if len(v) > 1), "gaps": len(r.client.seen.gaps),
                         "too_old": r.client.seen.too_old, "connections": r.client.seen.connections} for r in (steady, resuming)],
           "killed": killed, "replay_errors": replay_errors, "replay_summaries": [s.strip().splitlines()[-1:] for s in summaries],
           "status": {k: status[k] for k in ("received", "judged", "quarantined", "duplicates", "late", "pending")},
           **{k: after[k] - before.get(k, 0) for k in after}}
    out["accounted"] = out["judged"] + out["quarantined"] + out["late"]
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
    parser.add_argument("--windows", type=int, default=21, help="windows per rate, over all seven characters")
    parser.add_argument("--hog-rates", type=float, nargs="*", default=[400],
                        help="rates run again with two CPU-bound processes beside the service")
    parser.add_argument("--kill-at", type=float, help="SIGKILL the service this many seconds into the first rate, then restart it")
    parser.add_argument("--sensor", action="store_true", help="run the Dagster sensor path beside the first rate")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="live_console_bench_"))
    load = os.getloadavg()[0]
    print(f"load average before: {load:.2f}; {os.cpu_count()} cores", flush=True)
    try:
        results = []
        runs = [(r, 0) for r in args.rates] + [(r, 2) for r in args.hog_rates]
        for i, (rate, hog_count) in enumerate(runs):
            r = run_rate(tmp, rate, args.windows, with_sensor=(i == 0 and args.sensor),
                         kill_at=args.kill_at if i == 0 else None, hog_count=hog_count)
            results.append(r)
            consoles = "; ".join(f"console {j + 1}: {c['received']}/{r['stored_windows']} windows, {c['twice']} twice, "
                                 f"{c['gaps']} gaps, {c['too_old']} too old, {c['connections']} connections"
                                 for j, c in enumerate(r["consoles"]))
            print(f"{int(rate):>5} lines/s ({r['characters']} characters, {r['senders']} senders, {r['lines_per_window']} lines a window"
                  f"{', 2 CPU-bound processes beside it' if hog_count else ''}{', killed and restarted' if r['killed'] else ''}): "
                  f"windows {r['windows']} ({r['full_windows']} full)  floor (1-line windows) p50 {r['floor_ms']:.0f} ms  "
                  f"end → frame received p50 {r['p50']:.0f} ms  p95 {r['p95']:.0f} ms ({r['p95'] / r['floor_ms']:.2f}× the floor)  "
                  f"max {r['max']:.0f} ms (end → pushed p95 {r['pushed_p95']:.0f} ms, pushed → received p50 {r['sent_to_received_ms']:.0f} ms)  |  "
                  f"{consoles}  |  sent {r['sent']}  judged {r['judged']}  quarantined {r['quarantined']}  duplicates {r['duplicates']}  "
                  f"late {r['late']}  → accounted {r['accounted']} of {r['sent']}  (status: {r['status']})", flush=True)
            if r["replay_errors"]:
                print("  replayer errors:", r["replay_errors"], flush=True)
            if "sensor" in r:
                s = r["sensor"]
                print(f"      sensor path, same lines, same minutes: windows {s['windows']}  end → stored p50 {s['p50'] / 1000:.2f} s  "
                      f"p95 {s['p95'] / 1000:.2f} s  max {s['max'] / 1000:.2f} s", flush=True)
        print(f"load average after: {os.getloadavg()[0]:.2f}", flush=True)
        print(json.dumps(results, default=float), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
