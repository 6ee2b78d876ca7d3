"""The team run queue (dagster.yaml) with a backfill waiting: its runs take no more than their
tag limit, and a live window's run submitted after them (and after a scheduled run) takes the
free slot at once."""

from __future__ import annotations

import yaml
from dagster._core.remote_origin import RegisteredCodeLocationOrigin, RemoteRepositoryOrigin
from dagster._core.storage.dagster_run import DagsterRunStatus
from dagster._core.test_utils import create_run_for_test, create_test_daemon_workspace_context, instance_for_test
from dagster._core.workspace.load_target import EmptyWorkspaceTarget
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon

from orchestration.execution import LIVE_RUN_TAGS
from orchestration.instance import TEAM_CONFIG

TOTAL = 3


def test_a_backfill_takes_its_limit_and_a_live_run_is_launched_ahead_of_the_rest():
    coordinator = yaml.safe_load(TEAM_CONFIG.read_text(encoding="utf-8"))["run_coordinator"]
    coordinator["config"]["max_concurrent_runs"] = TOTAL  # DAGSTER_MAX_CONCURRENT_RUNS in .env.example
    backfill_limit = next(t["limit"] for t in coordinator["config"]["tag_concurrency_limits"] if t["key"] == "dagster/backfill")
    assert backfill_limit < TOTAL
    overrides = {"run_coordinator": coordinator,
                 "run_launcher": {"module": "dagster._core.test_utils", "class": "MockedRunLauncher"}}
    repository = RemoteRepositoryOrigin(RegisteredCodeLocationOrigin("chat_verdicts"), "__repository__")
    with instance_for_test(overrides=overrides) as instance:
        backfill = [create_run_for_test(instance, job_name="__ASSET_JOB", status=DagsterRunStatus.QUEUED,
                                        remote_job_origin=repository.get_job_origin("__ASSET_JOB"),
                                        tags={"dagster/backfill": "bf1", "dagster/partition": f"2026-09-{d:02d}"})
                    for d in range(1, 9)]
        scheduled = create_run_for_test(instance, job_name="nightly", status=DagsterRunStatus.QUEUED,
                                        remote_job_origin=repository.get_job_origin("nightly"),
                                        tags={"dagster/partition": "2026-09-09"})
        live = create_run_for_test(instance, job_name="live_pick_windows", status=DagsterRunStatus.QUEUED,
                                   remote_job_origin=repository.get_job_origin("live_pick_windows"),
                                   tags=dict(LIVE_RUN_TAGS))
        with create_test_daemon_workspace_context(EmptyWorkspaceTarget(), instance) as context:
            list(QueuedRunCoordinatorDaemon(interval_seconds=1).run_iteration(context))
        launched = {r.run_id for r in instance.run_launcher.queue()}
        assert live.run_id in launched and scheduled.run_id not in launched  # queued before it, lower priority
        assert len(launched & {r.run_id for r in backfill}) == backfill_limit
        assert len(launched) == TOTAL
