"""The handoff assets: a day judged over its neighbours (D−1 … D+1), the newest day waiting for its
look-ahead, a backfill across the month boundary, provisional re-entry when the next day is missing."""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from dagster import (
    AssetKey,
    AssetSelection,
    DagsterInstance,
    Definitions,
    define_asset_job,
    evaluate_automation_conditions,
    in_process_executor,
    materialize,
    partition_loading_context,
)

from assets import handoff
from assets.common.partitions import judged_partitions
from assets.common.partitions import DAILY
from assets.resources.warehouse import WarehouseResource
from rules.handoff import verdicts as V
from tests.assets.helpers import oracle_rows, resources_in
from tests.conftest import ROOT, SEEDS

SEOUL = ZoneInfo("Asia/Seoul")
UPSTREAM = [a for a in handoff.assets if not set(a.keys) & set(handoff.JUDGED.resolve(handoff.assets))]
VERDICTS, REPORT = handoff.CHAIN.key("verdicts"), handoff.CHAIN.key("agreement_report")


def _land(res, instance, *days):
    """What the nightly job does for handoff: raw and normalised tables of a day."""
    for day in days:
        assert materialize(UPSTREAM, resources=res, partition_key=day, instance=instance).success


def _judge(res, instance, day):
    return materialize(handoff.assets, selection=handoff.JUDGED, resources=res, partition_key=day, instance=instance)


def _expected(day: str) -> dict[str, dict]:
    return {r["room_id"]: r for r in oracle_rows("handoff") if r["opened_day"] == day and r["status"] == V.LISTED}


def _checks(result) -> dict[str, bool]:
    return {c.check_name: c.passed for c in result.get_asset_check_evaluations()}


def test_a_day_judged_over_its_neighbours_reproduces_the_oracle(tmp_path):
    res, instance = resources_in(tmp_path), DagsterInstance.ephemeral()
    _land(res, instance, "2026-09-30", "2026-10-01", "2026-10-02")
    result = _judge(res, instance, "2026-10-01")
    assert result.success
    checks = _checks(result)
    assert checks and all(checks.values()), [k for k, v in checks.items() if not v]
    assert {"schema", "recompute", "window_complete", "11_polite"} <= set(checks)

    wh = res["warehouse"]
    rows = {r["room_id"]: r for r in handoff.CHAIN.records(wh.read_partition("handoff_verdicts", "2026-10-01", handoff.CHAIN.verdict_json_columns))}
    expected = _expected("2026-10-01")
    assert set(rows) == set(expected)
    for room_id, e in expected.items():
        assert {k: rows[room_id][k] for k in e if k in rows[room_id]} == {k: v for k, v in e.items() if k in rows[room_id]}, room_id
    assert wh.count_partition("handoff_day_rooms", "2026-10-01") == 31
    assert sorted(wh.read_partition("handoff_held_rows", "2026-10-01")["reason_code"]) == [
        "empty_room_id", "missing_sent_at", "schema", "schema", "unknown_room"]

    report = json.loads((tmp_path / "reports" / "handoff" / "2026-10-01" / "report.json").read_text(encoding="utf-8"))
    metrics = {m["name"]: m["ratio"]["display"] for m in report["metrics"] if m["ratio"]}
    assert metrics["판정 일치"] == "25 / 27 (92.6%)" and metrics["제때 연결"] == "2 / 7" and metrics["판정 보류"] == "4 / 31 (12.9%)"
    assert {x["id"] for x in report["excluded"]} == {"R-55240", "R-55245", "R-55250", "R-55255", "(대화 모름)"}


def test_the_newest_judged_day_is_the_one_whose_next_day_is_in():
    with partition_loading_context(effective_dt=datetime(2026, 10, 2, 3, 0, tzinfo=SEOUL)):
        assert DAILY.get_last_partition_key() == "2026-10-01"
        assert judged_partitions(1).get_last_partition_key() == "2026-09-30"
    assert handoff.CHAIN.window.before == handoff.CHAIN.window.after == 1


@pytest.mark.filterwarnings("ignore::dagster_shared.utils.warnings.BetaWarning")  # raised inside the automation tester
def test_the_newest_day_is_judged_once_its_look_ahead_lands(tmp_path):
    res, instance = resources_in(tmp_path), DagsterInstance.ephemeral()
    defs = Definitions(assets=handoff.assets, resources=res, sensors=[handoff.lookahead_sensor], jobs=[handoff.judge_job])
    _land(res, instance, "2026-09-29", "2026-09-30")
    tick = datetime(2026, 10, 2, 2, 0, tzinfo=SEOUL)  # before the nightly run for 10-01
    first = evaluate_automation_conditions(defs=defs, instance=instance, evaluation_time=tick)
    assert first.total_requested == 0
    _land(res, instance, "2026-10-01")  # the nightly run for yesterday
    second = evaluate_automation_conditions(defs=defs, instance=instance, evaluation_time=tick + timedelta(minutes=40), cursor=first.cursor)
    assert second.get_requested_partitions(VERDICTS) == {"2026-09-30"}
    assert second.get_requested_partitions(REPORT) == {"2026-09-30"}


def test_a_missing_next_day_marks_reentry_provisional_until_rerun(tmp_path):
    res, instance = resources_in(tmp_path), DagsterInstance.ephemeral()
    _land(res, instance, "2026-09-30", "2026-10-01")
    result = _judge(res, instance, "2026-10-01")
    assert result.success  # the look-ahead check warns, it does not block
    failed = [c for c in result.get_asset_check_evaluations() if not c.passed]
    assert [c.check_name for c in failed] == ["window_complete"] and "2026-10-02" in failed[0].description
    wh = res["warehouse"]
    rows = {r["room_id"]: r for r in handoff.CHAIN.records(wh.read_partition("handoff_verdicts", "2026-10-01", handoff.CHAIN.verdict_json_columns))}
    assert (rows["R-55230"]["verdict"], rows["R-55160"]["next_room_id"]) == (V.AI_ENDED, None)
    assert "잠정" in rows["R-55230"]["hedge"]
    report = (tmp_path / "reports" / "handoff" / "2026-10-01" / "report.md").read_text(encoding="utf-8")
    assert "재문의 잠정" in report and "❌ 실패" in report

    _land(res, instance, "2026-10-02")
    again = _judge(res, instance, "2026-10-01")
    assert all(_checks(again).values())
    rows = {r["room_id"]: r for r in handoff.CHAIN.records(wh.read_partition("handoff_verdicts", "2026-10-01", handoff.CHAIN.verdict_json_columns))}
    assert len(rows) == wh.count_partition("handoff_verdicts", "2026-10-01") == 21
    assert (rows["R-55230"]["verdict"], rows["R-55160"]["reentry_hours"]) == (V.REENTRY, 25.08)


def test_the_nightly_selection_lands_the_look_ahead_without_judging(tmp_path):
    res = resources_in(tmp_path)
    nightly = define_asset_job("nightly", selection=AssetSelection.groups("handoff") - handoff.JUDGED, partitions_def=DAILY,
                               executor_def=in_process_executor)
    defs = Definitions(assets=handoff.assets, jobs=[nightly, handoff.judge_job], sensors=[handoff.lookahead_sensor], resources=res)
    Definitions.validate_loadable(defs)
    result = defs.resolve_job_def("nightly").execute_in_process(partition_key="2026-10-01", instance=DagsterInstance.ephemeral())
    assert result.success
    keys = {m.asset_key.path[-1] for m in result.get_asset_materialization_events()}
    assert "chat_messages" in keys and "verdicts" not in keys
    assert defs.resolve_job_def("handoff_judge").partitions_def == judged_partitions(1)


def test_day_folders_are_read_per_day(tmp_path):
    root = tmp_path / "raw" / "handoff"
    lines = (SEEDS / "handoff" / "chat_messages.jsonl").read_text(encoding="utf-8").splitlines()
    for day in ("2026-09-30", "2026-10-01", "2026-10-02"):
        folder = root / day
        folder.mkdir(parents=True)
        for name in ("rooms", "handoff_phrases", "help_articles"):
            (folder / f"{name}.jsonl").write_bytes((SEEDS / "handoff" / f"{name}.jsonl").read_bytes())
        (folder / "chat_messages.jsonl").write_text("\n".join(l for l in lines if f'"{day}T' in l) + "\n", encoding="utf-8")
    res, instance = resources_in(tmp_path, raw_root=tmp_path / "raw"), DagsterInstance.ephemeral()
    _land(res, instance, "2026-09-30", "2026-10-01", "2026-10-02")
    assert _judge(res, instance, "2026-09-30").success
    got = {r["room_id"]: r for r in handoff.CHAIN.records(res["warehouse"].read_partition("handoff_verdicts", "2026-09-30", handoff.CHAIN.verdict_json_columns))}
    assert (got["R-55001"]["next_room_id"], got["R-55001"]["reentry_hours"]) == ("R-55105", 10.5)
    assert (got["R-55003"]["verdict"], got["R-55003"]["ai_after_trigger"]) == (V.KEPT_ANSWERING, 2)


@pytest.mark.slow
def test_a_backfill_across_the_month_boundary_judges_each_day_after_its_look_ahead(tmp_path, monkeypatch):
    """Launched as the UI launches a backfill; Dagster orders each day's verdicts after D−1 … D+1."""
    from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
    from dagster._core.test_utils import create_test_daemon_workspace_context, instance_for_test
    from dagster._core.workspace.load_target import ModuleTarget
    from dagster._daemon.backfill import execute_backfill_iteration
    from dagster._utils.log import get_dagster_logger

    from tests.fixtures.handoff.location import defs

    url = f"sqlite:///{tmp_path / 'wh.sqlite'}"
    monkeypatch.setenv("WAREHOUSE_URL", url)
    monkeypatch.setenv("VERDICTS_RAW_DIR", str(SEEDS))
    monkeypatch.setenv("VERDICTS_REPORTS_DIR", str(tmp_path / "reports"))
    days = ["2026-09-30", "2026-10-01", "2026-10-02"]
    in_process = {"run_launcher": {"module": "dagster._core.launcher.sync_in_memory_run_launcher", "class": "SyncInMemoryRunLauncher"},
                  "run_coordinator": {"module": "dagster._core.run_coordinator.default_run_coordinator", "class": "DefaultRunCoordinator"}}
    target = ModuleTarget(module_name="tests.fixtures.handoff.location", attribute="defs", working_directory=str(ROOT),
                          location_name="handoff_backfill")
    with instance_for_test(overrides=in_process) as instance, create_test_daemon_workspace_context(target, instance) as context:
        backfill_id = f"bf{uuid.uuid4().hex[:6]}"
        instance.add_backfill(PartitionBackfill.from_asset_partitions(
            backfill_id=backfill_id, asset_graph=context.create_request_context().asset_graph, partition_names=days,
            asset_selection=list(defs.get_repository_def().asset_graph.get_all_asset_keys()), backfill_timestamp=time.time(),
            tags={}, dynamic_partitions_store=instance, all_partitions=False, title="month boundary", description=None, run_config=None,
        ))
        deadline = time.time() + 300
        while time.time() < deadline and instance.get_backfill(backfill_id).status == BulkActionStatus.REQUESTED:
            list(execute_backfill_iteration(context, get_dagster_logger("backfill")))
        assert instance.get_backfill(backfill_id).status == BulkActionStatus.COMPLETED_SUCCESS
        judged = {r.tags["dagster/partition"]: r for r in instance.get_runs() if AssetKey(["handoff", "verdicts"]) in (r.asset_selection or ())}
        landed = {r.tags["dagster/partition"]: r for r in instance.get_runs() if AssetKey(["handoff", "chat_messages"]) in (r.asset_selection or ())}
        assert set(landed) == set(days)
        # 09-30 was judged after 10-01 landed, and 10-01 after 10-02.
        for day, nxt in (("2026-09-30", "2026-10-01"), ("2026-10-01", "2026-10-02")):
            assert instance.get_run_stats(judged[day].run_id).start_time >= instance.get_run_stats(landed[nxt].run_id).end_time

    wh = WarehouseResource(url=url)
    sept = {r["room_id"]: r for r in handoff.CHAIN.records(wh.read_partition("handoff_verdicts", "2026-09-30", handoff.CHAIN.verdict_json_columns))}
    assert {k: (v["verdict"], v["next_room_id"], v["reentry_hours"]) for k, v in sept.items()} == {
        "R-55001": (V.REENTRY, "R-55105", 10.5), "R-55002": (V.AI_ENDED, None, None), "R-55003": (V.KEPT_ANSWERING, None, None)}
    october = {r["room_id"] for r in handoff.CHAIN.records(wh.read_partition("handoff_verdicts", "2026-10-01", handoff.CHAIN.verdict_json_columns))}
    assert october == set(_expected("2026-10-01"))
    checks = wh.read_partition("handoff_checks", "2026-10-01").set_index("id")["passed"]
    assert bool(checks["window_complete"]) and bool(checks["recompute"])
