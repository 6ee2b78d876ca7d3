"""A day's event rows are read a part at a time through the index over the partition and the bucket.

The judging step reads what every part reads of the whole day (retry's baselines) before its first
part, then each part. Every read of rows of a bucketed table must find its rows through that index:
a read that searches the partition alone, or sorts it, visits the whole day, and done once per part
or per block it makes the step grow with the square of the day (an hour before the first part of a
10⁷-row retry day). Counting queries (the plan's rows per bucket) visit the day once, by design.
Checked on SQLite's own plan of each statement the step sent, on generated data of every domain in
parts of 150 rows."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from dagster import AssetSelection, DagsterInstance

from assets.common import day_plan
from assets.resources.warehouse import _engine
from evals import domains
from tests.assets.helpers import materialise_day, resources_in
from tests.assets.test_day_in_parts import DAYS, _days, _module_chain, generated  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow


def _sent(engine: sa.Engine, run) -> list[tuple[str, tuple]]:
    """The SELECT statements (and their parameters) `run()` sends through `engine`."""
    sent = []

    def record(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("SELECT"):
            sent.append((statement, tuple(parameters or ())))

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        run()
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)
    return sent


def _whole_day_reads(engine: sa.Engine, sent, tables: set[str]) -> list[tuple[str, str]]:
    """(statement, plan) of each read of rows of `tables` that does not go through the bucket index."""
    found = []
    with engine.connect() as conn:
        for statement, parameters in sent:
            if "COUNT(" in statement.upper():
                continue  # counting (the plan's rows per bucket, handoff's tied buckets): once a day
            plan = [row[3] for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)]
            for line in plan:
                table = next((t for t in tables if f" {t} " in f" {line} "), None)
                if table and ("unit_bucket=?" not in line or any("TEMP B-TREE" in p for p in plan)):
                    found.append((statement, " | ".join(plan)))
    return found


@pytest.mark.parametrize("name", list(DAYS))
def test_the_judging_step_reads_each_part_through_the_bucket_index(name, generated, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setattr(day_plan, "PART_ROWS", 150)
    monkeypatch.setenv("VERDICTS_CHECK_STEPS", "1")
    c, assets = _module_chain(name)
    day = DAYS[name]
    url = f"sqlite:///{tmp_path / 'parts.sqlite'}"
    resources = resources_in(tmp_path, url, generated)
    instance = DagsterInstance.ephemeral()
    ingest = AssetSelection.assets(*[c.key(f"raw_{d}") for d in c.datasets], *[c.key(d) for d in c.datasets], c.key("quarantine"))
    for d in _days(c, day):
        assert materialise_day(assets, resources, d, instance, selection=ingest).success
    engine = _engine(url)
    judged = []
    sent = _sent(engine, lambda: judged.append(
        materialise_day(assets, resources, day, instance, selection=AssetSelection.assets(c.key("verdicts")))))
    assert judged[0].success
    tables = {c.table(d) for d in day_plan.bucketed(c)}
    reads = [s for s, _ in sent if any(f'"{t}"' in s for t in tables)]
    assert len(reads) > 3, "the day was read in parts"
    assert _whole_day_reads(engine, sent, tables) == []
