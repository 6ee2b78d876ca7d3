"""Live window latency: window close → verdicts stored, with the real daemon.

    .venv/bin/python benchmarks/live_latency.py [--windows 20] [--rates 40 400]

For each rate it starts `dagster-daemon` on a throw-away instance (SQLite, default run
coordinator: runs launch as soon as the sensor asks), with the window sensor running,
replays a synthetic broadcast at that rate for the given number of 30-second windows
(`sent_at` shifted to now), waits for the last window, and prints p50, p95 and max latency,
windows judged, lines judged / late / quarantined. During the first rate a second daemon
runs the floor: the same sensor launching a job that judges nothing (benchmarks/live_floor_defs.py).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pandas as pd
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BIN = Path(sys.executable).parent

from live import store  # noqa: E402
from live.replay import replay  # noqa: E402
from rules.live_pick.config import load_config  # noqa: E402

INSTANCE = """
telemetry:
  enabled: false
run_coordinator:
  module: dagster.core.run_coordinator
  class: DefaultRunCoordinator
"""


def synthetic_broadcast(path: Path, rate: float, windows: int, seed: int = 7) -> None:
    """Lines shaped like the sample's CH-0007 broadcast: its bodies, tags, viewers, donations."""
    sample = [json.loads(t) for t in (ROOT / "seeds/live_pick/live_chat.jsonl").read_text(encoding="utf-8").splitlines()
              if t.startswith("{") and '"CH-0007"' in t]
    rng = random.Random(seed)
    n = int(rate * 30 * windows)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            line = dict(rng.choice(sample))
            line["msg_id"] = f"MSG-BENCH-{i:07d}"
            line["donation_amount"] = rng.choice([0, 0, 0, 1000, 5000, 10000])
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")


def start_daemon(home: Path, workspace: Path, env: dict) -> subprocess.Popen:
    subprocess.run([str(BIN / "dagster"), "instance", "migrate"], env=env, check=True, capture_output=True)
    return subprocess.Popen([str(BIN / "dagster-daemon"), "run", "-w", str(workspace)], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def stop(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def setup(tmp: Path, name: str, target: str) -> tuple[dict, Path, sa.Engine]:
    """`target`: a module name, or a .py file for the floor's own definitions."""
    home = tmp / f"{name}_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(INSTANCE, encoding="utf-8")
    workspace = tmp / f"{name}_workspace.yaml"
    kind, key = ("python_file", "relative_path") if target.endswith(".py") else ("python_module", "module_name")
    workspace.write_text(f"load_from:\n  - {kind}:\n      {key}: {target}\n      working_directory: {ROOT}\n", encoding="utf-8")
    url = f"sqlite:///{tmp / f'{name}.sqlite'}"
    env = {**os.environ, "DAGSTER_HOME": str(home), "WAREHOUSE_URL": url, "VERDICTS_HOME": str(tmp / name),
           "VERDICTS_LIVE_SENSORS": "running", "VERDICTS_LIVE_SENSOR_INTERVAL": "1", "VERDICTS_LIVE_GRACE": "1",
           "VERDICTS_LIVE_TAGS": "model"}
    engine = sa.create_engine(url, connect_args={"timeout": 30})
    store.ensure_tables(engine)
    return env, workspace, engine


def wait_for_windows(engine: sa.Engine, expected: int, timeout: float) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        with engine.connect() as conn:
            if conn.execute(sa.select(sa.func.count()).select_from(store.windows)).scalar_one() >= expected:
                return
        time.sleep(1)


def summary(engine: sa.Engine, label: str, landed: int) -> str:
    with engine.connect() as conn:
        wins = pd.read_sql(sa.select(store.windows), conn)
        judged = conn.execute(sa.select(sa.func.count()).select_from(store.verdicts)).scalar_one()
        late = conn.execute(sa.select(sa.func.count()).select_from(store.late)).scalar_one()
        quarantined = conn.execute(sa.select(sa.func.count()).select_from(store.quarantine)).scalar_one()
    s = wins["latency_ms"] / 1000
    return (f"{label:<18} windows {len(wins):>3}  p50 {s.quantile(0.5):5.2f} s  p95 {s.quantile(0.95):5.2f} s  "
            f"max {s.max():5.2f} s  lines landed {landed:>6} judged {judged:>6} late {late:>3} quarantined {quarantined:>3}")


def run_rate(tmp: Path, rate: float, windows: int, with_floor: bool) -> list[str]:
    config = load_config()
    env, workspace, engine = setup(tmp, f"rate{int(rate)}", "orchestration.definitions")
    chat = tmp / f"chat{int(rate)}.jsonl"
    synthetic_broadcast(chat, rate, windows)
    procs = [start_daemon(Path(env["DAGSTER_HOME"]), workspace, env)]
    floor_engine = None
    if with_floor:
        fenv, fworkspace, floor_engine = setup(tmp, "floor", str(ROOT / "benchmarks" / "live_floor_defs.py"))
        procs.append(start_daemon(Path(fenv["DAGSTER_HOME"]), fworkspace, fenv))
    time.sleep(15)  # daemons load the code location and start the sensor
    try:
        feeders = [threading.Thread(target=replay, args=(engine, chat, config),
                                    kwargs={"rate": rate, "shift_to_now": True, "progress": lambda s: None})]
        if floor_engine is not None:
            feeders.append(threading.Thread(target=replay, args=(floor_engine, chat, config),
                                            kwargs={"rate": rate, "shift_to_now": True, "progress": lambda s: None}))
        for f in feeders:
            f.start()
        for f in feeders:
            f.join()
        with engine.connect() as conn:
            expected = conn.execute(sa.select(sa.func.count(sa.distinct(store.landing.c.window_ns)))).scalar_one()
        wait_for_windows(engine, expected, 120)
        if floor_engine is not None:
            wait_for_windows(floor_engine, expected, 120)
    finally:
        for p in procs:
            stop(p)
    landed = int(rate * 30 * windows)
    out = [summary(engine, f"{int(rate)} lines/s", landed)]
    if floor_engine is not None:
        out.append(summary(floor_engine, "floor (empty job)", landed))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--windows", type=int, default=20)
    parser.add_argument("--rates", type=float, nargs="+", default=[40, 400])
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="live_bench_"))
    try:
        lines = []
        for i, rate in enumerate(args.rates):
            lines += run_rate(tmp, rate, args.windows, with_floor=(i == 0))
            print("\n".join(lines[-2 if i == 0 else -1:]), flush=True)
        print("\nlatency = window end → verdicts committed; instance: SQLite, DefaultRunCoordinator, "
              "in-process executor, sensor minimum interval 1 s (daemon loop ≥ 5 s), grace 1 s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
