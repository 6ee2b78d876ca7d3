"""The team instance (dagster.yaml): Dagster's storage on PostgreSQL, and a backfill of a
partition range launched as the UI launches it, run to completion without the daemon process."""

from __future__ import annotations

import shutil
import time
import uuid
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance, materialize

from assets import live_pick
from assets.resources.reports import ReportsResource
from orchestration.instance import TEAM_CONFIG
from assets.resources.raw_files import RawFilesResource
from assets.resources.warehouse import WarehouseResource
from tests.conftest import SEEDS


@pytest.fixture
def team_instance(postgres_url, tmp_path, monkeypatch):
    """A DagsterInstance from the project's dagster.yaml, pointed at a throw-away database."""
    from sqlalchemy.engine import make_url

    url = make_url(postgres_url)
    for key, value in {
        "DAGSTER_POSTGRES_USER": url.username, "DAGSTER_POSTGRES_PASSWORD": url.password or "unused",
        "DAGSTER_POSTGRES_HOST": url.host, "DAGSTER_POSTGRES_PORT": str(url.port or 5432),
        "DAGSTER_POSTGRES_DB": url.database, "DAGSTER_MAX_CONCURRENT_RUNS": "2",
    }.items():
        monkeypatch.setenv(key, value)
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copyfile(TEAM_CONFIG, home / "dagster.yaml")
    instance = DagsterInstance.from_config(str(home))
    try:
        yield instance
    finally:
        instance.dispose()


def test_team_instance_stores_runs_in_postgresql(team_instance, postgres_url, tmp_path):
    assert type(team_instance.run_storage).__name__ == "PostgresRunStorage"
    resources = {
        "warehouse": WarehouseResource(url=postgres_url),
        "raw_files": RawFilesResource(root=str(SEEDS)),
        "reports": ReportsResource(root=str(tmp_path / "reports")),
    }
    result = materialize(live_pick.assets, resources=resources, partition_key="2026-09-08", instance=team_instance)
    assert result.success
    run = team_instance.get_run_by_id(result.run_id)
    assert run is not None and run.is_success and run.tags["dagster/partition"] == "2026-09-08"
    mats = team_instance.fetch_materializations(AssetKey(["live_pick", "verdicts"]), limit=10).records
    assert [m.partition_key for m in mats] == ["2026-09-08"]


def test_backfill_of_a_partition_range_runs_every_day_once(team_instance, monkeypatch, tmp_path):
    from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
    from dagster._core.test_utils import create_test_daemon_workspace_context
    from dagster._core.workspace.load_target import ModuleTarget
    from dagster._daemon.backfill import execute_backfill_iteration
    from dagster._utils.log import get_dagster_logger

    from orchestration.definitions import defs

    # The code location the runs load reads its warehouse from the environment, like production.
    warehouse_url = f"sqlite:///{tmp_path / 'warehouse.sqlite'}"
    monkeypatch.setenv("WAREHOUSE_URL", warehouse_url)
    monkeypatch.setenv("VERDICTS_HOME", str(tmp_path / "home"))
    days = ["2026-09-07", "2026-09-08", "2026-09-09"]
    graph = defs.get_repository_def().asset_graph
    # the daily chain (the live board is an external asset the window runs report, not a partition to backfill)
    selection = [k for k in graph.get_all_asset_keys() if k.path[0] == "live_pick" and graph.get(k).is_materializable]

    target = ModuleTarget(module_name="orchestration.definitions", attribute="defs",
                          working_directory=str(Path(__file__).resolve().parents[2]), location_name="chat_verdicts")
    with create_test_daemon_workspace_context(target, team_instance) as context:
        backfill_id = f"bf{uuid.uuid4().hex[:6]}"
        team_instance.add_backfill(PartitionBackfill.from_asset_partitions(
            backfill_id=backfill_id, asset_graph=context.create_request_context().asset_graph,
            partition_names=days, asset_selection=selection, backfill_timestamp=time.time(), tags={},
            dynamic_partitions_store=team_instance, all_partitions=False, title="three days", description=None,
            run_config=None,
        ))
        deadline = time.time() + 420
        logger = get_dagster_logger("backfill")
        while time.time() < deadline:
            list(execute_backfill_iteration(context, logger))
            _launch_queued_runs(team_instance, context)
            backfill = team_instance.get_backfill(backfill_id)
            if backfill.status in (BulkActionStatus.COMPLETED_SUCCESS, BulkActionStatus.COMPLETED, BulkActionStatus.FAILED,
                                   BulkActionStatus.COMPLETED_FAILED):
                break
            time.sleep(1)
        assert team_instance.get_backfill(backfill_id).status in (BulkActionStatus.COMPLETED_SUCCESS, BulkActionStatus.COMPLETED)

    runs = team_instance.get_runs()
    assert sorted(r.tags.get("dagster/partition") for r in runs if r.tags.get("dagster/backfill") == backfill_id) == days
    warehouse = WarehouseResource(url=warehouse_url)
    counts = {d: warehouse.count_partition("live_pick_verdicts", d) for d in days}
    assert counts == {"2026-09-07": 0, "2026-09-08": 51, "2026-09-09": 29}

    # Re-running one day of the range changes nothing.
    before = warehouse.read_partition("live_pick_verdicts", "2026-09-08").sort_values("msg_id").reset_index(drop=True)
    rerun = materialize(live_pick.assets, partition_key="2026-09-08", resources={
        "warehouse": warehouse, "raw_files": RawFilesResource(root=str(SEEDS)),
        "reports": ReportsResource(root=str(tmp_path / "home" / "reports"))})
    assert rerun.success
    after = warehouse.read_partition("live_pick_verdicts", "2026-09-08").sort_values("msg_id").reset_index(drop=True)
    assert after.equals(before)
    assert {d: warehouse.count_partition("live_pick_verdicts", d) for d in days} == counts


def _launch_queued_runs(instance, context) -> None:
    """What the daemon's run queue does: launch queued runs, then wait for them to finish."""
    from dagster._core.storage.dagster_run import DagsterRunStatus, RunsFilter
    from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon

    daemon = QueuedRunCoordinatorDaemon(interval_seconds=1)
    list(daemon.run_iteration(context))
    deadline = time.time() + 300
    active = (DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED)
    while time.time() < deadline and instance.get_runs(RunsFilter(statuses=list(active))):
        list(daemon.run_iteration(context))
        time.sleep(1)
