"""Wall time of a 12-day backfill of the nightly chain on 1 and on 2 Celery workers.

    .venv/bin/python benchmarks/celery_backfill.py [--workers 1 2] [--admin-url postgresql+psycopg2://postgres@127.0.0.1:5432/postgres]

For each worker count: throw-away PostgreSQL databases for Dagster's storage and for the
warehouse, the team instance (dagster.yaml: queued runs, a backfill takes at most 2 slots),
that many `verdicts worker --pool solo` processes on a queue of their own, the real
`dagster-daemon`, and `dagster job backfill -j nightly` over 12 days (the 10 sample days and
2 empty ones). The clock runs from submitting the backfill to its last run finishing. The
floor, measured in the same run: the same 12 days one after another in one process
(`execute_in_process`, what `verdicts demo` does). Needs RabbitMQ on loopback (or
VERDICTS_CELERY_BROKER). Everything started is stopped by its PID.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BIN = Path(sys.executable).parent

from orchestration.execution import celery_settings  # noqa: E402
from orchestration.instance import TEAM_CONFIG  # noqa: E402

DAYS = ["2026-09-08", "2026-09-09", "2026-09-10", "2026-09-21", "2026-09-22", "2026-09-30",
        "2026-10-01", "2026-10-02", "2026-10-03", "2026-10-04", "2026-10-05", "2026-10-06"]


class Databases:
    def __init__(self, admin_url: str):
        self.admin_url = admin_url
        self.admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
        self.names: list[str] = []

    def new(self) -> str:
        name = f"verdicts_bench_{uuid.uuid4().hex[:10]}"
        with self.admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        self.names.append(name)
        return self.admin_url.rsplit("/", 1)[0] + f"/{name}"

    def drop_all(self) -> None:
        with self.admin.connect() as conn:
            for name in self.names:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        self.admin.dispose()


def floor(warehouse_url: str, home: Path) -> float:
    """The 12 days in one process, one after another, no broker."""
    env = {**os.environ, "WAREHOUSE_URL": warehouse_url, "VERDICTS_HOME": str(home), "VERDICTS_EXECUTOR": "in_process",
           "PYTHONPATH": str(ROOT)}
    code = ("import time, sys; from dagster import DagsterInstance; from orchestration.definitions import defs; "
            "job = defs.resolve_job_def('nightly'); i = DagsterInstance.ephemeral(); t = time.perf_counter(); "
            f"ok = all(job.execute_in_process(partition_key=d, instance=i).success for d in {DAYS!r}); "
            "print(time.perf_counter() - t); sys.exit(0 if ok else 1)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _stop(proc: subprocess.Popen, sig=signal.SIGTERM, timeout: float = 60) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def backfill(workers: int, dbs: Databases, tmp: Path, broker: str) -> tuple[float, int, dict[str, int]]:
    from dagster import DagsterEventType, DagsterInstance
    from dagster._core.storage.dagster_run import DagsterRunStatus, RunsFilter

    dagster_url, warehouse_url = sa.engine.make_url(dbs.new()), dbs.new()
    home = tmp / f"home-{workers}"
    home.mkdir()
    shutil.copyfile(TEAM_CONFIG, home / "dagster.yaml")
    queue = f"verdicts-bench-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "DAGSTER_HOME": str(home), "DAGSTER_POSTGRES_USER": dagster_url.username,
           "DAGSTER_POSTGRES_PASSWORD": dagster_url.password or "unused", "DAGSTER_POSTGRES_HOST": dagster_url.host,
           "DAGSTER_POSTGRES_PORT": str(dagster_url.port or 5432), "DAGSTER_POSTGRES_DB": dagster_url.database,
           "DAGSTER_MAX_CONCURRENT_RUNS": "3", "VERDICTS_EXECUTOR": "celery", "VERDICTS_CELERY_BROKER": broker,
           "VERDICTS_CELERY_QUEUE": queue, "WAREHOUSE_URL": warehouse_url, "VERDICTS_HOME": str(tmp / f"out-{workers}"),
           "PYTHONPATH": str(ROOT)}
    target = ["-m", "orchestration.definitions"]
    subprocess.run([str(BIN / "dagster"), "instance", "migrate"], env=env, cwd=ROOT, check=True, capture_output=True)
    # Only the backfill: the handoff look-ahead sensor would add runs of its own.
    subprocess.run([str(BIN / "dagster"), "sensor", "stop", "handoff_lookahead", *target], env=env, cwd=ROOT,
                   check=True, capture_output=True)
    procs: list[subprocess.Popen] = []
    try:
        for n in range(workers):
            log = (tmp / f"worker-{workers}-{n}.log").open("w")
            procs.append(subprocess.Popen([sys.executable, "-m", "orchestration.cli", "worker", "--name", f"w{n}-{queue}",
                                           "--pool", "solo", "--concurrency", "1"], cwd=ROOT, env=env, stdout=log,
                                          stderr=subprocess.STDOUT))
        daemon_log = (tmp / f"daemon-{workers}.log").open("w")
        # The daemon copies SIGINT's handler; a default one lets it stop cleanly by PID.
        procs.append(subprocess.Popen(["env", "--default-signal=INT", str(BIN / "dagster-daemon"), "run", *target],
                                      cwd=ROOT, env=env, stdout=daemon_log, stderr=subprocess.STDOUT))
        time.sleep(10)  # workers and daemon up before the clock starts
        start = time.perf_counter()
        subprocess.run([str(BIN / "dagster"), "job", "backfill", *target, "-j", "nightly", "--partitions", ",".join(DAYS),
                        "--noprompt"], env=env, cwd=ROOT, check=True, capture_output=True)
        os.environ.update({k: v for k, v in env.items() if k.startswith("DAGSTER_")})
        instance = DagsterInstance.from_config(str(home))
        finished = (DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED)
        backfill_id = instance.get_backfills()[0].backfill_id  # the only one in this fresh instance
        deadline = time.time() + 3600
        while time.time() < deadline:
            runs = instance.get_runs(RunsFilter(tags={"dagster/backfill": backfill_id}))
            if len(runs) == len(DAYS) and all(r.status in finished for r in runs):
                break
            time.sleep(1)
        wall = time.perf_counter() - start
        failed = [r.tags.get("dagster/partition") for r in runs if r.status != DagsterRunStatus.SUCCESS]
        if failed or len(runs) != len(DAYS):
            raise SystemExit(f"{workers} workers: {len(runs)} runs, failed days {failed}; see {tmp}")
        steps: dict[str, int] = {}
        for r in runs:
            for event in instance.all_logs(r.run_id, of_type=DagsterEventType.ENGINE_EVENT):
                worker = event.dagster_event.engine_event_data.metadata.get("Celery worker")
                if worker is not None:
                    steps[worker.value.split("-")[0]] = steps.get(worker.value.split("-")[0], 0) + 1
        instance.dispose()
        return wall, len(runs), steps
    finally:
        for proc in reversed(procs):
            _stop(proc)
        from kombu import Connection

        with Connection(broker, connect_timeout=5) as conn:
            conn.default_channel.queue_delete(queue)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--admin-url", default="postgresql+psycopg2://postgres@127.0.0.1:5432/postgres")
    args = p.parse_args()
    broker = celery_settings().broker
    dbs = Databases(args.admin_url)
    tmp = Path(tempfile.mkdtemp(prefix="verdicts-celery-bench-"))
    try:
        load = os.getloadavg()[0]
        base = floor(dbs.new(), tmp / "floor")
        print(f"{len(DAYS)} days, {os.cpu_count()} cores, load average {load:.1f} at start")
        print(f"floor, in one process one day after another: {base:.1f} s")
        for n in args.workers:
            wall, runs, steps = backfill(n, dbs, tmp, broker)
            print(f"{n} worker(s): {wall:.1f} s for {runs} runs ({wall / base:.2f}x the floor); "
                  f"steps per worker {sorted(steps.values(), reverse=True)}; load average now {os.getloadavg()[0]:.1f}")
    finally:
        dbs.drop_all()
    shutil.rmtree(tmp, ignore_errors=True)  # kept, with the logs, when something failed
    return 0


if __name__ == "__main__":
    sys.exit(main())
