"""A backfill spread over Celery workers: the team instance (dagster.yaml) on PostgreSQL, the
warehouse on PostgreSQL, the real RabbitMQ broker and two `verdicts worker` processes started
here. Four days of the nightly chain run as four runs, two at a time under the queued
coordinator; every step runs on a worker, both workers take steps, and the warehouse ends
with exactly the rows of a serial in-process run of the same days."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pandas as pd
import pytest
import sqlalchemy as sa

from orchestration.instance import TEAM_CONFIG
from tests.conftest import ROOT, stop

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

DAYS = ["2026-09-08", "2026-09-21", "2026-10-04", "2026-10-05"]
"""Sample days of live_pick, retry, persona and handoff (the other domains' chains run empty)."""
MAX_RUNS = 2


def _pg_env(url: str) -> dict[str, str]:
    u = sa.engine.make_url(url)
    return {"DAGSTER_POSTGRES_USER": u.username, "DAGSTER_POSTGRES_PASSWORD": u.password or "unused",
            "DAGSTER_POSTGRES_HOST": u.host, "DAGSTER_POSTGRES_PORT": str(u.port or 5432),
            "DAGSTER_POSTGRES_DB": u.database}


def _snapshot(url: str) -> dict[str, pd.DataFrame]:
    """Every warehouse table, rows as text in a stable order."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            tables = sorted(sa.inspect(conn).get_table_names())
            frames = {t: pd.read_sql_query(sa.text(f'SELECT * FROM "{t}"'), conn).astype(str) for t in tables}
    finally:
        engine.dispose()
    return {t: f[sorted(f.columns)].sort_values(sorted(f.columns)).reset_index(drop=True) for t, f in frames.items()}


def _serial_rows(url: str, home: Path, monkeypatch) -> dict[str, pd.DataFrame]:
    """The same days, one after the other, in-process (what `verdicts demo` does)."""
    from dagster import DagsterInstance

    from orchestration.definitions import build_definitions

    monkeypatch.setenv("WAREHOUSE_URL", url)
    monkeypatch.setenv("VERDICTS_HOME", str(home))
    nightly = build_definitions("local").resolve_job_def("nightly")
    with DagsterInstance.ephemeral() as instance:
        for day in DAYS:
            assert nightly.execute_in_process(partition_key=day, instance=instance).success
    return _snapshot(url)


def _start_worker(name: str, env: dict, log: Path) -> subprocess.Popen:
    out = log.open("w")
    try:
        return subprocess.Popen([sys.executable, "-m", "orchestration.cli", "worker", "--name", name, "--pool", "solo",
                                 "--concurrency", "1"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    finally:
        out.close()


def _wait_ready(workers: dict[str, tuple[subprocess.Popen, Path]], timeout: float = 120) -> None:
    deadline = time.time() + timeout
    pending = dict(workers)
    while pending and time.time() < deadline:
        for name, (proc, log) in list(pending.items()):
            assert proc.poll() is None, log.read_text()[-3000:]
            if " ready." in log.read_text():
                del pending[name]
        time.sleep(0.5)
    assert not pending, {n: log.read_text()[-2000:] for n, (_, log) in pending.items()}


def _max_overlap(records) -> int:
    edges = sorted([(r.start_time, 1) for r in records] + [(r.end_time, -1) for r in records], key=lambda e: (e[0], e[1]))
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def test_a_four_day_backfill_runs_on_two_celery_workers_and_writes_what_a_serial_run_writes(
        make_postgres_url, broker_url, tmp_path, monkeypatch):
    from dagster import DagsterEventType, DagsterInstance
    from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
    from dagster._core.storage.dagster_run import DagsterRunStatus, RunsFilter
    from dagster._core.test_utils import create_test_daemon_workspace_context
    from dagster._core.workspace.load_target import ModuleTarget
    from dagster._daemon.backfill import execute_backfill_iteration
    from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon
    from dagster._utils.log import get_dagster_logger

    dagster_db, warehouse_db, serial_db = make_postgres_url(), make_postgres_url(), make_postgres_url()
    want = _serial_rows(serial_db, tmp_path / "serial", monkeypatch)
    assert sum(len(f) for f in want.values()) > 0

    # The team configuration: Dagster's storage in one database, the warehouse in another, steps
    # on Celery. A queue of its own keeps concurrent test runs from taking each other's steps.
    queue = f"verdicts-test-{uuid.uuid4().hex[:10]}"
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copyfile(TEAM_CONFIG, home / "dagster.yaml")
    settings = {**_pg_env(dagster_db), "DAGSTER_MAX_CONCURRENT_RUNS": str(MAX_RUNS), "DAGSTER_HOME": str(home),
                "VERDICTS_EXECUTOR": "celery", "VERDICTS_CELERY_BROKER": broker_url, "VERDICTS_CELERY_QUEUE": queue,
                "WAREHOUSE_URL": warehouse_db, "VERDICTS_HOME": str(tmp_path / "celery"),
                "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    for key, value in settings.items():
        monkeypatch.setenv(key, value)
    names = [f"a-{queue}", f"b-{queue}"]
    workers = {n: (_start_worker(n, dict(os.environ), tmp_path / f"{n}.log"), tmp_path / f"{n}.log") for n in names}
    instance = DagsterInstance.from_config(str(home))
    backfill_id = f"bf{uuid.uuid4().hex[:6]}"
    try:
        _wait_ready(workers)
        from orchestration.definitions import build_definitions

        selection = list(build_definitions().resolve_job_def("nightly").asset_layer.selected_asset_keys)
        target = ModuleTarget(module_name="orchestration.definitions", attribute="defs", working_directory=str(ROOT),
                              location_name="chat_verdicts")
        with create_test_daemon_workspace_context(target, instance) as context:
            instance.add_backfill(PartitionBackfill.from_asset_partitions(
                backfill_id=backfill_id, asset_graph=context.create_request_context().asset_graph,
                partition_names=DAYS, asset_selection=selection, backfill_timestamp=time.time(), tags={},
                dynamic_partitions_store=instance, all_partitions=False, title="four days", description=None,
                run_config=None,
            ))
            queue_daemon = QueuedRunCoordinatorDaemon(interval_seconds=1)
            logger = get_dagster_logger("backfill")
            done = (BulkActionStatus.COMPLETED_SUCCESS, BulkActionStatus.COMPLETED, BulkActionStatus.FAILED,
                    BulkActionStatus.COMPLETED_FAILED, BulkActionStatus.CANCELED)
            deadline = time.time() + 900
            while time.time() < deadline and instance.get_backfill(backfill_id).status not in done:
                list(execute_backfill_iteration(context, logger))
                list(queue_daemon.run_iteration(context))
                time.sleep(1)
            status = instance.get_backfill(backfill_id).status
            runs = instance.get_run_records(RunsFilter(tags={"dagster/backfill": backfill_id}))
            failed = [r.dagster_run.run_id for r in runs if r.dagster_run.status != DagsterRunStatus.SUCCESS]
            assert status in (BulkActionStatus.COMPLETED_SUCCESS, BulkActionStatus.COMPLETED), (status, failed)
    finally:
        for proc, _ in workers.values():
            stop(proc)  # warm shutdown: the current step finishes first
        for run in instance.get_runs(RunsFilter(statuses=[DagsterRunStatus.STARTED, DagsterRunStatus.STARTING,
                                                          DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED])):
            instance.run_launcher.terminate(run.run_id)
        _delete_queue(broker_url, queue)
    assert all(proc.returncode is not None for proc, _ in workers.values())

    # One run per day, all successful, at most MAX_RUNS at a time, and they did overlap.
    assert sorted(r.dagster_run.tags["dagster/partition"] for r in runs) == sorted(DAYS)
    assert all(r.dagster_run.status == DagsterRunStatus.SUCCESS for r in runs)
    assert _max_overlap(runs) == MAX_RUNS

    # Every step ran on a worker, and both workers took steps.
    by_worker: dict[str, int] = {}
    steps = 0
    for r in runs:
        run_id = r.dagster_run.run_id
        steps += len(instance.all_logs(run_id, of_type=DagsterEventType.STEP_SUCCESS))
        for event in instance.all_logs(run_id, of_type=DagsterEventType.ENGINE_EVENT):
            worker = event.dagster_event.engine_event_data.metadata.get("Celery worker")
            if worker is not None:
                by_worker[worker.value.split("@")[0]] = by_worker.get(worker.value.split("@")[0], 0) + 1
    assert set(by_worker) == set(names), by_worker
    assert sum(by_worker.values()) == steps > 0
    instance.dispose()

    got = _snapshot(warehouse_db)
    assert sorted(got) == sorted(want)
    for table in want:
        pd.testing.assert_frame_equal(got[table], want[table], obj=table)


def _delete_queue(broker_url: str, queue: str) -> None:
    from kombu import Connection

    try:
        with Connection(broker_url, connect_timeout=5) as conn:
            conn.default_channel.queue_delete(queue)
    except Exception:  # noqa: BLE001 - a queue left behind is harmless
        pass
