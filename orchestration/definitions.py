"""The code location: assembles every domain's assets, jobs, schedules and resources."""

from __future__ import annotations

import os

from dagster import Definitions, EnvVar

from assets import handoff
from assets.domains import domain_assets
from assets.resources.raw_files import RawFilesResource
from assets.resources.reports import ReportsResource
from assets.resources.warehouse import WarehouseResource
from orchestration.evaluation import eval_job
from orchestration.execution import batch_executor
from orchestration.jobs import evaluation_job, nightly_job
from orchestration.live_jobs import (
    live_board,
    live_matches_batch,
    live_pick_broadcast_close_sensor,
    live_pick_close_broadcast,
    live_pick_window_sensor,
    live_pick_windows,
)
from orchestration.live_tuning import apply_sheet_suggestion, broadcast_suggestions, reject_sheet_suggestion
from orchestration.schedules import nightly_schedule
from rules.common import environment


def resources_for(env: str) -> dict:
    """`local`: SQLite and the sample data under VERDICTS_HOME; `prod`: everything from the environment."""
    if env == "prod":
        return {
            "warehouse": WarehouseResource(url=EnvVar("WAREHOUSE_URL")),
            "raw_files": RawFilesResource(root=EnvVar("VERDICTS_RAW_DIR")),
            "reports": ReportsResource(root=EnvVar("VERDICTS_REPORTS_DIR"), admin_url=environment.admin_url()),
        }
    return {
        "warehouse": WarehouseResource(url=environment.warehouse_url()),
        "raw_files": RawFilesResource(root=str(environment.raw_dir())),
        "reports": ReportsResource(root=str(environment.reports_dir()), admin_url=environment.admin_url()),
    }


def build_definitions(env: str | None = None) -> Definitions:
    return Definitions(
        assets=[*domain_assets(), broadcast_suggestions, live_board],
        asset_checks=[live_matches_batch],
        jobs=[nightly_job, evaluation_job, eval_job, handoff.judge_job, live_pick_windows, live_pick_close_broadcast,
              apply_sheet_suggestion, reject_sheet_suggestion],
        sensors=[handoff.lookahead_sensor, live_pick_window_sensor, live_pick_broadcast_close_sensor],
        schedules=[nightly_schedule],
        resources=resources_for(env or os.environ.get("VERDICTS_ENV", "local")),
        # The daily jobs and every run launched from the UI (backfills too): in the run's own
        # process by default, on Celery workers with VERDICTS_EXECUTOR=celery. The live jobs and
        # the eval job keep their own in-process executor.
        executor=batch_executor(),
    )


defs = build_definitions()
