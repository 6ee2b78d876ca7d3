"""A backfill spread over Celery workers: the team instance (dagster.yaml) on PostgreSQL, the
warehouse on PostgreSQL, the real RabbitMQ broker and two `verdicts worker` processes started
here. Four days of the nightly chain run as four runs, two at a time under the queued
coordinator; every step runs on a worker, both workers take steps, and the warehouse ends
with exactly the rows of a serial in-process run of the same days."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.orchestration.celery_runs import backfill, celery_team, snapshot, steps_by_worker

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

DAYS = ["2026-09-08", "2026-09-21", "2026-10-04", "2026-10-05"]
"""Sample days of live_pick, retry, persona and handoff (the other domains' chains run empty)."""
MAX_RUNS = 2


def serial_rows(url: str, home: Path, monkeypatch, days: list[str]) -> dict[str, pd.DataFrame]:
    """The same days, one after the other, in-process (what `verdicts demo` does)."""
    from dagster import DagsterInstance

    from orchestration.definitions import build_definitions

    monkeypatch.setenv("WAREHOUSE_URL", url)
    monkeypatch.setenv("VERDICTS_HOME", str(home))
    nightly = build_definitions("local").resolve_job_def("nightly")
    with DagsterInstance.ephemeral() as instance:
        for day in days:
            assert nightly.execute_in_process(partition_key=day, instance=instance).success
    return snapshot(url)


def _max_overlap(records) -> int:
    edges = sorted([(r.start_time, 1) for r in records] + [(r.end_time, -1) for r in records], key=lambda e: (e[0], e[1]))
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def test_a_four_day_backfill_runs_on_two_celery_workers_and_writes_what_a_serial_run_writes(
        make_postgres_url, broker_url, tmp_path, monkeypatch):
    from dagster._core.storage.dagster_run import DagsterRunStatus

    dagster_db, warehouse_db, serial_db = make_postgres_url(), make_postgres_url(), make_postgres_url()
    want = serial_rows(serial_db, tmp_path / "serial", monkeypatch, DAYS)
    assert sum(len(f) for f in want.values()) > 0

    with celery_team(tmp_path, monkeypatch, dagster_db, warehouse_db, broker_url, MAX_RUNS) as (instance, names):
        ok, status, runs = backfill(instance, DAYS)
        assert ok, (status, [r.dagster_run.run_id for r in runs if r.dagster_run.status != DagsterRunStatus.SUCCESS])

    # One run per day, all successful, at most MAX_RUNS at a time, and they did overlap.
    assert sorted(r.dagster_run.tags["dagster/partition"] for r in runs) == sorted(DAYS)
    assert all(r.dagster_run.status == DagsterRunStatus.SUCCESS for r in runs)
    assert _max_overlap(runs) == MAX_RUNS

    # Every step ran on a worker, and both workers took steps.
    by_worker, steps = steps_by_worker(instance, runs)
    assert set(by_worker) == set(names), by_worker
    assert sum(map(len, by_worker.values())) == steps > 0
    instance.dispose()

    got = snapshot(warehouse_db)
    assert sorted(got) == sorted(want)
    for table in want:
        pd.testing.assert_frame_equal(got[table], want[table], obj=table)
