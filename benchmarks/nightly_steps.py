"""Where a nightly run's memory goes, step by step: the nightly job in-process on one domain's generated
day (the same folder and fresh Dagster home as `scale.py --nightly`), with the process's resident
memory sampled every 0.1 s and each sample given to the step running then (from the run's event log).

    .venv/bin/python benchmarks/nightly_steps.py live_pick 100000 [--keep DIR]

Prints one line per step: its wall seconds, the resident memory when it started and its peak (MB).
In-process, every step runs in one process, so a step starts from what the steps before it left
held. `--keep DIR` keeps the run's SQLite warehouse and Dagster home there (to look at a stage again).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale  # noqa: E402 - the benchmark's own folder and environment


def resident_mb() -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("domain", choices=scale.DOMAINS)
    p.add_argument("rows", type=int, help="main rows of the day")
    p.add_argument("--data", type=Path, default=scale.ROOT / "var" / "bench")
    p.add_argument("--keep", type=Path, help="keep the warehouse and Dagster home in this folder")
    a = p.parse_args()
    raw, day, that_day = scale.nightly_folder(a.data, a.domain, a.rows)
    where = a.keep or Path(tempfile.mkdtemp(dir=os.environ.get("VERDICTS_BENCH_TMP")))
    where.mkdir(parents=True, exist_ok=True)
    os.environ.update(scale.nightly_env(str(where), raw))
    print(scale.conditions("start"), flush=True)

    samples: list[tuple[float, float]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            samples.append((time.time(), resident_mb()))
            time.sleep(0.1)

    threading.Thread(target=sample, daemon=True).start()
    from dagster import DagsterInstance

    from orchestration.definitions import defs
    from orchestration.demo import QUIET

    instance = DagsterInstance.get()
    started = time.perf_counter()
    result = defs.resolve_job_def("nightly").execute_in_process(partition_key=day, instance=instance, raise_on_error=False,
                                                                 run_config=QUIET)
    seconds = time.perf_counter() - started
    done.set()
    spans: dict[str, list[float | None]] = {}
    for record in instance.all_logs(result.run_id):
        event = record.dagster_event
        if event and event.step_key and event.event_type_value in ("STEP_START", "STEP_SUCCESS", "STEP_FAILURE"):
            span = spans.setdefault(event.step_key, [None, None])
            span[0 if event.event_type_value == "STEP_START" else 1] = record.timestamp
    print(json.dumps({"domain": a.domain, "day": day, "rows_that_day": that_day, "seconds": round(seconds, 1), "ok": result.success,
                      "peak_mb": round(max(m for _, m in samples)), "load": [round(v, 2) for v in os.getloadavg()]}))
    print(f"{'step':<48} {'s':>7} {'start MB':>9} {'peak MB':>8}")
    for step, (begin, end) in sorted(spans.items(), key=lambda kv: kv[1][0] or 0):
        inside = [m for t, m in samples if begin and end and begin <= t <= end]
        if inside:
            print(f"{step:<48} {end - begin:>7.1f} {inside[0]:>9.0f} {max(inside):>8.0f}")
    print(scale.conditions("end"), flush=True)


if __name__ == "__main__":
    main()
