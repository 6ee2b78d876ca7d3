"""The code location: one Definitions with the assets, checks, partitions, job and schedule."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from dagster import AssetKey, build_schedule_context

from orchestration.definitions import build_definitions, defs
from orchestration.schedules import nightly_schedule
from tests.conftest import ROOT


def test_definitions_hold_the_live_pick_chain():
    graph = defs.get_repository_def().asset_graph
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert {
        "live_pick/raw_live_chat", "live_pick/live_chat", "live_pick/quarantine",
        "live_pick/verdicts", "live_pick/agreement_report",
    } <= keys
    checks = {(c.asset_key.to_user_string(), c.name) for c in graph.asset_check_keys}
    assert ("live_pick/verdicts", "recompute") in checks
    from evals.check_titles import dagster_name, keys

    # The same keys as the reports' check ids (`1.verdict_enum` → `1_verdict_enum`).
    assert {dagster_name(k) for k in keys("live_pick")} <= {n for a, n in checks if a == "live_pick/verdicts"}
    assert "1_verdict_enum" in {n for a, n in checks if a == "live_pick/verdicts"}
    assert ("live_pick/live_chat", "rows_reconcile") in checks
    assert graph.get(AssetKey(["live_pick", "verdicts"])).partitions_def.timezone == "Asia/Seoul"


def test_blocking_checks_are_the_ones_that_must_stop_a_report():
    spec = {s.name: s.blocking for s in defs.get_assets_def(AssetKey(["live_pick", "verdicts"])).check_specs}
    assert spec["schema"] and spec["recompute"] and not spec["8_polite"]


def test_nightly_schedule_targets_yesterday_in_seoul():
    # 2026-10-02 02:30 in Seoul is still 2026-10-01 17:30 UTC; the run must be for 10-01.
    when = datetime(2026, 10, 2, 2, 30, tzinfo=ZoneInfo("Asia/Seoul"))
    context = build_schedule_context(scheduled_execution_time=when)
    requests = list(nightly_schedule.evaluate_tick(context).run_requests or [])
    assert [r.partition_key for r in requests] == ["2026-10-01"]


def test_prod_resources_come_from_the_environment_and_local_needs_no_server():
    from dagster import EnvVar

    prod = build_definitions("prod").resources
    assert prod["warehouse"].url == EnvVar("WAREHOUSE_URL")
    assert prod["raw_files"].root == EnvVar("VERDICTS_RAW_DIR")
    assert prod["reports"].root == EnvVar("VERDICTS_REPORTS_DIR")
    local = build_definitions("local").resources
    assert local["warehouse"].url.startswith("sqlite:///")
    assert Path(local["raw_files"].root) == ROOT / "seeds"


def test_code_location_loads_in_dagster_tooling(tmp_path):
    import os

    from orchestration.instance import prepare_home

    dagster = Path(sys.executable).parent / "dagster"
    env = {**os.environ, "DAGSTER_HOME": str(prepare_home(tmp_path / "home"))}
    out = subprocess.run(
        [str(dagster), "definitions", "validate", "-m", "orchestration.definitions"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=env,
    )
    assert out.returncode == 0, out.stdout + out.stderr
