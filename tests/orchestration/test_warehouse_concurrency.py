"""The replace-partition transaction under concurrency on PostgreSQL: two processes writing
the same two partitions at the same moment leave exactly the rows of a serial run, and a
process killed mid-write leaves the previous rows until a retry replaces them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
import sqlalchemy as sa

from tests.conftest import ROOT
from tests.orchestration.partition_writer import ROWS, write

pytestmark = [pytest.mark.postgres, pytest.mark.slow]
DAYS = ["2026-09-07", "2026-09-08"]
TABLE = "retry_verdicts"


def _writer(url: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "tests.orchestration.partition_writer", url, TABLE, *args],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _table(url: str) -> pd.DataFrame:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            frame = pd.read_sql_query(sa.text(f'SELECT * FROM "{TABLE}"'), conn)
    finally:
        engine.dispose()
    frame["evidence"] = frame["evidence"].map(repr)
    return frame.sort_values(["partition_key", "row_id"]).reset_index(drop=True)


def _race(url: str) -> None:
    """Two writers start at the same instant, each holding every write's transaction open for a
    moment after its delete, so their writes of the same partitions overlap."""
    start = time.time() + 8
    writers = [_writer(url, ",".join(DAYS), "--start-at", str(start), "--hold", "1.5"),
               _writer(url, ",".join(reversed(DAYS)), "--start-at", str(start), "--hold", "1.5")]
    outputs = [w.communicate(timeout=180) for w in writers]
    for w, (out, err) in zip(writers, outputs):
        assert w.returncode == 0, err
        assert out.count("holding") == 2 and "done" in out


def test_two_processes_writing_the_same_partitions_at_once_leave_the_rows_of_a_serial_run(make_postgres_url):
    parallel, serial = make_postgres_url(), make_postgres_url()
    for day in DAYS:
        write(serial, TABLE, day)
    want = _table(serial)
    assert len(want) == ROWS * len(DAYS)
    _race(parallel)  # on an empty database: creating the table races too
    pd.testing.assert_frame_equal(_table(parallel), want)
    _race(parallel)  # on the existing table: each delete would miss the other's insert
    pd.testing.assert_frame_equal(_table(parallel), want)


def test_a_writer_killed_mid_write_leaves_the_previous_rows_and_a_retry_finishes(postgres_url):
    write(postgres_url, TABLE, DAYS[0], "v1")
    before = _table(postgres_url)
    writer = _writer(postgres_url, DAYS[0], "--version", "v2", "--hold", "120")
    try:
        assert writer.stdout.readline().startswith(f"holding {DAYS[0]}")  # deleted, not yet inserted
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
    finally:
        if writer.poll() is None:
            writer.kill()
        writer.stdout.close()
        writer.stderr.close()
    pd.testing.assert_frame_equal(_table(postgres_url), before)  # the dead write left nothing behind
    retry = _writer(postgres_url, DAYS[0], "--version", "v2")
    out, err = retry.communicate(timeout=120)
    assert retry.returncode == 0, err
    after = _table(postgres_url)
    assert len(after) == ROWS and set(after["version"]) == {"v2"}
