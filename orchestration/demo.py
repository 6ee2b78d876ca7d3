"""`verdicts demo`: the nightly job, in-process, on every day of the sample data."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from orchestration import environment
from orchestration.instance import prepare_home


# The run's event log stays complete in the instance; the terminal only shows problems.
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def sample_days() -> list[str]:
    """Days (Asia/Seoul) that the sample live chat covers."""
    from rules.common.days import line_days
    from rules.common.jsonl import dataset_path, read_raw
    from rules.live_pick.config import load_config

    raw = read_raw(dataset_path(environment.raw_dir() / "live_pick", "live_chat"), "live_chat")
    return sorted(set(line_days(raw, "sent_at", load_config().timezone)))


def run_demo(dagster_home: Path | None = None) -> int:
    home = prepare_home(dagster_home or environment.verdicts_home() / "dagster_home")
    os.environ["DAGSTER_HOME"] = str(home)

    from dagster import DagsterInstance

    from orchestration.definitions import defs
    from orchestration.resources.warehouse import WarehouseResource

    instance = DagsterInstance.get()
    job = defs.resolve_job_def("nightly")
    warehouse = WarehouseResource(url=environment.warehouse_url())
    failed = 0
    print(f"Dagster home: {home}")
    print(f"warehouse:    {_redact(environment.warehouse_url())}")
    for day in sample_days():
        result = job.execute_in_process(
            partition_key=day, instance=instance, raise_on_error=False, run_config=QUIET
        )
        status = "succeeded" if result.success else "FAILED"
        failed += not result.success
        print(f"\n{day}: run {result.run_id[:8]} {status}")
        if not result.success:
            for event in result.all_events:
                if event.is_failure:
                    print(f"  {event.message}", file=sys.stderr)
            continue
        verdicts = warehouse.read_partition("live_pick_verdicts", day)
        for verdict, n in verdicts["verdict"].value_counts().items():
            print(f"  {n:5d}  {verdict}")
        print(f"  report: {environment.reports_dir() / 'live_pick' / day / 'report.md'}")
    print(f"\nOpen the UI on these runs: DAGSTER_HOME={home} dagster dev")
    return 1 if failed else 0


def _redact(url: str) -> str:
    """Hide a password in a database URL before printing it."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - printing only
        return "(unparseable URL)"
