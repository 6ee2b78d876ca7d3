"""A large day split in parts on Celery workers: generated days of live_pick and retry (the
character's window and the session as units; retry's baselines worked out once a day and handed to
every part), judged in parts of a few hundred rows and checked in three steps of their own, which
the two workers share. The warehouse ends with the tables of the same days run in-process in one
check step."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from evals import domains
from tests.conftest import SEEDS
from tests.orchestration.celery_runs import backfill, celery_team, snapshot, steps_by_worker
from tests.orchestration.test_celery_backfill import serial_rows

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

DAYS = {"live_pick": "2026-09-08", "retry": "2026-09-21"}
ROWS = 2_500
PARTS = {"VERDICTS_PART_ROWS": "200", "VERDICTS_CHECK_STEPS": "3"}


def test_a_day_in_parts_runs_its_check_steps_on_two_celery_workers_and_stores_what_one_process_stores(
        make_postgres_url, broker_url, tmp_path, monkeypatch):
    from dagster._core.storage.dagster_run import DagsterRunStatus

    raw = tmp_path / "raw"
    for name in domains.names():
        if name in DAYS:
            domains.get(name).generate(ROWS, 1, raw / name)
        else:
            shutil.copytree(SEEDS / name, raw / name)  # the other chains run on their samples
    monkeypatch.setenv("VERDICTS_RAW_DIR", str(raw))
    days = sorted(DAYS.values())

    dagster_db, warehouse_db, serial_db = make_postgres_url(), make_postgres_url(), make_postgres_url()
    monkeypatch.setenv("VERDICTS_PART_ROWS", PARTS["VERDICTS_PART_ROWS"])
    want = serial_rows(serial_db, tmp_path / "serial", monkeypatch, days)
    assert len(want["retry_verdicts"]) > 500 and len(want["live_pick_verdicts"]) > 500

    with celery_team(tmp_path, monkeypatch, dagster_db, warehouse_db, broker_url, 1, env=PARTS) as (instance, names):
        ok, status, runs = backfill(instance, days)
        assert ok, (status, [r.dagster_run.run_id for r in runs if r.dagster_run.status != DagsterRunStatus.SUCCESS])
    by_worker, steps = steps_by_worker(instance, runs)
    instance.dispose()

    # Each domain's day was checked in three steps, and the workers shared them.
    for name, day in DAYS.items():
        run = next(r for r in runs if r.dagster_run.tags["dagster/partition"] == day)
        checked = [s for keys in by_worker.values() for s in keys if s.startswith(f"{name}__verdicts.{name}_check_parts[")]
        assert len(set(checked)) == 3, (name, checked, run.dagster_run.run_id)
    parts_by_worker = {w: [s for s in keys if "_check_parts[" in s] for w, keys in by_worker.items()}
    assert all(parts_by_worker.get(n) for n in names), parts_by_worker

    got = snapshot(warehouse_db)
    assert sorted(got) == sorted(want)
    for table in want:
        pd.testing.assert_frame_equal(got[table], want[table], obj=table)
