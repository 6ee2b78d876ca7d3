"""Runs on Celery workers started by a test: the team instance (dagster.yaml) on PostgreSQL, the
warehouse on PostgreSQL, the real RabbitMQ broker, `verdicts worker` processes, and a backfill
driven through the daemon's own iterations."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import sqlalchemy as sa

from orchestration.instance import TEAM_CONFIG
from tests.conftest import ROOT, stop

PER_RUN = ("step_values",)
"""Warehouse tables that hold what one run's steps handed each other: not the same in two runs."""
WHEN_STORED = ("stored_at",)
"""Columns that say when a run stored a row (a day's stored report): the one difference two runs may have."""


def pg_env(url: str) -> dict[str, str]:
    u = sa.engine.make_url(url)
    return {"DAGSTER_POSTGRES_USER": u.username, "DAGSTER_POSTGRES_PASSWORD": u.password or "unused",
            "DAGSTER_POSTGRES_HOST": u.host, "DAGSTER_POSTGRES_PORT": str(u.port or 5432),
            "DAGSTER_POSTGRES_DB": u.database}


def snapshot(url: str) -> dict[str, pd.DataFrame]:
    """Every warehouse table (but those of one run, and when each row was stored), rows as text in a stable order."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            tables = sorted(t for t in sa.inspect(conn).get_table_names() if t not in PER_RUN)
            frames = {t: pd.read_sql_query(sa.text(f'SELECT * FROM "{t}"'), conn).drop(columns=list(WHEN_STORED), errors="ignore").astype(str)
                      for t in tables}
    finally:
        engine.dispose()
    return {t: f[sorted(f.columns)].sort_values(sorted(f.columns)).reset_index(drop=True) for t, f in frames.items()}


def start_worker(name: str, env: dict, log: Path) -> subprocess.Popen:
    out = log.open("w")
    try:
        return subprocess.Popen([sys.executable, "-m", "orchestration.cli", "worker", "--name", name, "--pool", "solo",
                                 "--concurrency", "1"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    finally:
        out.close()


def wait_ready(workers: dict[str, tuple[subprocess.Popen, Path]], timeout: float = 120) -> None:
    deadline = time.time() + timeout
    pending = dict(workers)
    while pending and time.time() < deadline:
        for name, (proc, log) in list(pending.items()):
            assert proc.poll() is None, log.read_text()[-3000:]
            if " ready." in log.read_text():
                del pending[name]
        time.sleep(0.5)
    assert not pending, {n: log.read_text()[-2000:] for n, (_, log) in pending.items()}


def delete_queue(broker_url: str, queue: str) -> None:
    from kombu import Connection

    try:
        with Connection(broker_url, connect_timeout=5) as conn:
            conn.default_channel.queue_delete(queue)
    except Exception:  # noqa: BLE001 - a queue left behind is harmless
        pass


@contextmanager
def celery_team(tmp_path: Path, monkeypatch, dagster_db: str, warehouse_db: str, broker_url: str, max_runs: int,
                env: dict[str, str] | None = None, workers: int = 2):
    """The team configuration with `workers` Celery workers on a queue of their own (concurrent test
    runs never take each other's steps): yields (instance, worker names); stops the workers and any
    run left unfinished."""
    from dagster import DagsterInstance
    from dagster._core.storage.dagster_run import DagsterRunStatus, RunsFilter

    queue = f"verdicts-test-{uuid.uuid4().hex[:10]}"
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copyfile(TEAM_CONFIG, home / "dagster.yaml")
    settings = {**pg_env(dagster_db), "DAGSTER_MAX_CONCURRENT_RUNS": str(max_runs), "DAGSTER_HOME": str(home),
                "VERDICTS_EXECUTOR": "celery", "VERDICTS_CELERY_BROKER": broker_url, "VERDICTS_CELERY_QUEUE": queue,
                "WAREHOUSE_URL": warehouse_db, "VERDICTS_HOME": str(tmp_path / "celery"),
                "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
                **(env or {})}
    for key, value in settings.items():
        monkeypatch.setenv(key, value)
    names = [f"{chr(ord('a') + i)}-{queue}" for i in range(workers)]
    procs = {n: (start_worker(n, dict(os.environ), tmp_path / f"{n}.log"), tmp_path / f"{n}.log") for n in names}
    instance = DagsterInstance.from_config(str(home))
    try:
        wait_ready(procs)
        yield instance, names
    finally:
        for proc, _ in procs.values():
            stop(proc)  # warm shutdown: the current step finishes first
        for run in instance.get_runs(RunsFilter(statuses=[DagsterRunStatus.STARTED, DagsterRunStatus.STARTING,
                                                          DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED])):
            instance.run_launcher.terminate(run.run_id)
        delete_queue(broker_url, queue)
        assert all(proc.returncode is not None for proc, _ in procs.values())


def backfill(instance, days: list[str], job: str = "nightly", timeout: float = 900):
    """A backfill of the job's assets over `days`, driven to its end; (status, run records)."""
    from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
    from dagster._core.storage.dagster_run import RunsFilter
    from dagster._core.test_utils import create_test_daemon_workspace_context
    from dagster._core.workspace.load_target import ModuleTarget
    from dagster._daemon.backfill import execute_backfill_iteration
    from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon
    from dagster._utils.log import get_dagster_logger

    from orchestration.definitions import build_definitions

    backfill_id = f"bf{uuid.uuid4().hex[:6]}"
    selection = list(build_definitions().resolve_job_def(job).asset_layer.selected_asset_keys)
    target = ModuleTarget(module_name="orchestration.definitions", attribute="defs", working_directory=str(ROOT),
                          location_name="chat_verdicts")
    with create_test_daemon_workspace_context(target, instance) as context:
        instance.add_backfill(PartitionBackfill.from_asset_partitions(
            backfill_id=backfill_id, asset_graph=context.create_request_context().asset_graph,
            partition_names=days, asset_selection=selection, backfill_timestamp=time.time(), tags={},
            dynamic_partitions_store=instance, all_partitions=False, title=f"{len(days)} days", description=None,
            run_config=None,
        ))
        queue_daemon = QueuedRunCoordinatorDaemon(interval_seconds=1)
        logger = get_dagster_logger("backfill")
        done = (BulkActionStatus.COMPLETED_SUCCESS, BulkActionStatus.COMPLETED, BulkActionStatus.FAILED,
                BulkActionStatus.COMPLETED_FAILED, BulkActionStatus.CANCELED)
        deadline = time.time() + timeout
        while time.time() < deadline and instance.get_backfill(backfill_id).status not in done:
            list(execute_backfill_iteration(context, logger))
            list(queue_daemon.run_iteration(context))
            time.sleep(1)
        status = instance.get_backfill(backfill_id).status
        runs = instance.get_run_records(RunsFilter(tags={"dagster/backfill": backfill_id}))
    ok = (BulkActionStatus.COMPLETED_SUCCESS, BulkActionStatus.COMPLETED)
    return status in ok, status, runs


def steps_by_worker(instance, runs) -> tuple[dict[str, list[str]], int]:
    """(worker name → the step keys it ran, steps that succeeded) over the runs."""
    from dagster import DagsterEventType

    by_worker: dict[str, list[str]] = {}
    steps = 0
    for r in runs:
        run_id = r.dagster_run.run_id
        steps += len(instance.all_logs(run_id, of_type=DagsterEventType.STEP_SUCCESS))
        for event in instance.all_logs(run_id, of_type=DagsterEventType.ENGINE_EVENT):
            worker = event.dagster_event.engine_event_data.metadata.get("Celery worker")
            if worker is not None:
                by_worker.setdefault(worker.value.split("@")[0], []).append(event.step_key)
    return by_worker, steps
