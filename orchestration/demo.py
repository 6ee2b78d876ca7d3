"""`verdicts demo`: the nightly job, in-process, on every day of the sample data, then the
cross-day evaluation (persona prompt comparison and review queue)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rules.common import environment
from orchestration.instance import prepare_home

# The run's event log stays complete in the instance; the terminal only shows problems.
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}

def sample_days(domain: str | None = None) -> list[str]:
    """Days (Asia/Seoul) that the sample data covers, for one domain or all."""
    from evals import domains
    from rules.common.days import line_days
    from rules.common.jsonl import dataset_path, read_raw

    days: set[str] = set()
    for name in domains.names():
        spec = domains.get(name).spec
        path = dataset_path(environment.raw_dir() / name, spec.event_dataset)
        if path.is_file() and domain in (None, name):
            days |= set(line_days(read_raw(path, spec.event_dataset), spec.event_time, "Asia/Seoul"))
    return sorted(days)


def next_day(day: str) -> str:
    """The calendar day after `day` (YYYY-MM-DD)."""
    from datetime import date, timedelta

    return (date.fromisoformat(day) + timedelta(days=1)).isoformat()


def _failed(result) -> bool:
    if result.success:
        return False
    for event in result.all_events:
        if event.is_failure:
            print(f"  {event.message}", file=sys.stderr)
    return True


def run_demo(dagster_home: Path | None = None) -> int:
    home = prepare_home(dagster_home or environment.verdicts_home() / "dagster_home")
    os.environ["DAGSTER_HOME"] = str(home)

    from dagster import DagsterInstance

    from evals import domains
    from orchestration.definitions import defs
    from assets.resources.warehouse import WarehouseResource

    instance = DagsterInstance.get()
    warehouse = WarehouseResource(url=environment.warehouse_url())
    reports = environment.reports_dir()
    failed = 0
    print(f"Dagster home: {home}")
    print(f"warehouse:    {_redact(environment.warehouse_url())}")
    nightly = defs.resolve_job_def("nightly")
    handoff_days = sample_days("handoff")
    # handoff judges day D once D+1 has landed: land the day after each of its days too.
    days = sorted(set(sample_days()) | {next_day(d) for d in handoff_days})
    for day in days:
        result = nightly.execute_in_process(partition_key=day, instance=instance, raise_on_error=False, run_config=QUIET)
        if _failed(result):
            print(f"\n{day}: nightly run {result.run_id[:8]} FAILED")
            failed += 1
    judge = defs.resolve_job_def("handoff_judge")
    for day in handoff_days:
        result = judge.execute_in_process(partition_key=day, instance=instance, raise_on_error=False, run_config=QUIET)
        if _failed(result):
            print(f"\n{day}: handoff run {result.run_id[:8]} FAILED")
            failed += 1
    for day in sample_days():
        print(f"\n{day}")
        for domain in domains.names():
            column = domains.get(domain).spec.verdict_key
            try:
                verdicts = warehouse.read_partition(f"{domain}_verdicts", day)
            except LookupError:
                continue
            if verdicts.empty:
                continue
            print(f"  {domain}: {len(verdicts)} verdicts")
            for verdict, n in verdicts[column].value_counts().items():
                print(f"    {n:5d}  {verdict}")
            print(f"    report: {reports / domain / day / 'report.md'}")
    result = defs.resolve_job_def("evaluation").execute_in_process(instance=instance, raise_on_error=False, run_config=QUIET)
    print(f"\nevaluation run {result.run_id[:8]} {'succeeded' if result.success else 'FAILED'}")
    if _failed(result):
        failed += 1
    else:
        for path in sorted((reports / "persona" / "comparison").glob("*.md")):
            print(f"  prompt comparison: {path}")
        print(f"  review queue:      {reports / 'persona' / 'review' / 'review_queue.md'}")
    print(f"\nOpen the UI on these runs: DAGSTER_HOME={home} dagster dev")
    return 1 if failed else 0


def _redact(url: str) -> str:
    """Hide a password in a database URL before printing it."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - printing only
        return "(unparseable URL)"
