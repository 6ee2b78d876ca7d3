"""The operator's loop end to end, on the live default tagger (kiwi, reading the bodies): a
broadcast closes with a suggestion to shorten the cooldown and one to lower 팬과의추억's closeness,
the `apply_sheet_suggestion` job (run config as the Launchpad sends it) applies both (versions 2
and 3: applying one leaves the other open), the next broadcast is judged with version 3, and
re-judging the first day still gives version-1 verdicts."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import sqlalchemy as sa
from dagster import DagsterInstance, RunRequest, build_sensor_context, materialize

from assets import live_pick
from live import clock, landing, sheets, store
from orchestration.live_jobs import live_pick_broadcast_close_sensor, live_pick_close_broadcast, live_pick_window_sensor, live_pick_windows
from orchestration.live_tuning import BROADCASTS, BY_TAG, SUGGESTIONS, apply_sheet_suggestion, broadcast_suggestions, reject_sheet_suggestion
from rules.live_pick import verdicts as V
from rules.live_pick.config import load_config
from rules.live_pick.engine import judge, records
from rules.live_pick.normalise import normalise, read_input_dir
from tests.assets.helpers import materialise_day, resources_in
from tests.live.broadcasts import DAY1, DAY2, FIRST, FIRST_ID, SECOND, TZ, ns, write_raw

SEC = 1_000_000_000


@pytest.fixture
def loop(tmp_path, monkeypatch):
    monkeypatch.delenv("VERDICTS_LIVE_TAGS", raising=False)  # the live default tagger
    monkeypatch.setenv("VERDICTS_LIVE_GRACE", "2")
    monkeypatch.setenv("VERDICTS_LIVE_CLOSE_GAP", "60")
    raw = write_raw(tmp_path / "raw")
    resources = resources_in(tmp_path, raw_root=raw.parent)
    fake = type("Clock", (), {"ns": 0, "__call__": lambda self: self.ns})()
    monkeypatch.setattr(clock, "now_ns", fake)
    store.ensure_tables(resources["warehouse"].engine)
    return resources, fake, DagsterInstance.ephemeral(), raw


def play(loop, lines: list[str]) -> None:
    """Lines land as sent; the window sensor launches the window job; then the broadcast closes."""
    resources, fake, instance, _ = loop
    warehouse, config = resources["warehouse"], load_config()
    pending = sorted((ns(json.loads(t)["sent_at"]), t) for t in lines)
    end, cursor = pending[-1][0] + 60 * SEC, None
    fake.ns = pending[0][0]
    while fake.ns <= end:
        landing.append(warehouse.engine, [t for s, t in pending if s <= fake.ns], fake.ns, config.window_seconds, TZ)
        pending = [(s, t) for s, t in pending if s > fake.ns]
        context = build_sensor_context(instance=instance, cursor=cursor, resources={"warehouse": warehouse})
        request = live_pick_window_sensor(context)
        cursor = context.cursor
        if isinstance(request, RunRequest):
            assert live_pick_windows.execute_in_process(run_config=request.run_config, resources=resources, instance=instance).success
        fake.ns += 5 * SEC
    fake.ns += 120 * SEC
    request = live_pick_broadcast_close_sensor(build_sensor_context(instance=instance, resources={"warehouse": warehouse}))
    assert isinstance(request, RunRequest)
    assert live_pick_close_broadcast.execute_in_process(run_config=request.run_config, resources=resources, instance=instance).success


def launch(job, instance, resources, by: str | None = None, **config):
    """A run as the Launchpad submits it: the job, its run config and who launched it (a run tag)."""
    op = "apply_suggestion" if job is apply_sheet_suggestion else "reject_suggestion"
    return job.execute_in_process(run_config={"ops": {op: {"config": config}}}, resources=resources, instance=instance,
                                  raise_on_error=False, tags={BY_TAG: by} if by else None)


def live_rows(engine) -> dict[str, dict]:
    with engine.connect() as conn:
        return {r["msg_id"]: r for r in (store.load_json(x) for x in conn.execute(sa.select(store.verdicts.c.row)).scalars())}


def failure_message(result) -> str:
    return " ".join(e.event_specific_data.error.message for e in result.all_events if e.event_type_value == "STEP_FAILURE")


def test_a_suggestion_applied_from_the_job_judges_the_next_broadcast_and_history_stays(loop):
    resources, fake, instance, raw = loop
    engine = resources["warehouse"].engine

    # -- broadcast 1 closes with two suggestions, recorded as a partition of the broadcast asset
    play(loop, FIRST)
    bid = FIRST_ID
    assert instance.get_dynamic_partitions(BROADCASTS.name) == [bid]
    found = {s["field"]: s for s in sheets.list_suggestions(engine, bid)}
    cool, close = found["reply_cooldown_sec"], found["min_closeness_by_topic"]
    assert (cool["current_value"], cool["proposed_value"], cool["base_version"], cool["status"]) == (180, 150, 1, "open")
    assert cool["rationale"].startswith("쿨다운에 걸려 미룬 줄이 30건 가운데 10건이었고 중앙값 경과가 150초였습니다.")
    assert {"dataset": "live_chat", "field": "msg_id", "agg": "count_just_answered", "value": 10} in cool["evidence"]
    assert (close["topic"], close["current_value"], close["proposed_value"]) == ("팬과의추억", 3, 2)
    event = instance.get_latest_materialization_event(SUGGESTIONS).asset_materialization
    assert event.partition == bid and cool["suggestion_id"] in event.metadata["suggestions"].value
    assert all(r["sheet_version"] == 1 for r in live_rows(engine).values())

    # -- unknown id: the run fails, saying so
    fake.ns = ns(f"{DAY2}T10:00:00")
    bad = launch(apply_sheet_suggestion, instance, resources, suggestion_id="SUG-000000000000")
    assert not bad.success and "no suggestion 'SUG-000000000000'" in failure_message(bad)

    # -- apply from the job: version 2, in force from now; applying again changes nothing
    run = launch(apply_sheet_suggestion, instance, resources, by="kim", suggestion_id=cool["suggestion_id"])
    assert run.success
    again = launch(apply_sheet_suggestion, instance, resources, suggestion_id=cool["suggestion_id"])
    assert again.success
    history = sheets.history(engine, "CH-0007")
    assert [(h["version"], h["reply_cooldown_sec"], h["source"], h["suggestion_id"], h["author"]) for h in history] == [
        (1, 180, "file", None, None), (2, 150, "suggestion", cool["suggestion_id"], "kim")]
    assert history[1]["effective_ns"] == fake.ns and history[1]["min_closeness_by_topic"] == history[0]["min_closeness_by_topic"]
    after = {s["field"]: s for s in sheets.list_suggestions(engine, bid)}
    assert after["reply_cooldown_sec"]["status"] == "applied" and after["reply_cooldown_sec"]["applied_version"] == 2
    assert (after["reply_cooldown_sec"]["decided_by"], after["reply_cooldown_sec"]["decided_ns"]) == ("kim", fake.ns)

    # -- the other suggestion changes another value: still open, and applies on top of version 2
    assert after["min_closeness_by_topic"]["status"] == "open"
    fake.ns += 60 * SEC
    assert launch(apply_sheet_suggestion, instance, resources, by="lee", suggestion_id=close["suggestion_id"]).success
    history = sheets.history(engine, "CH-0007")
    assert [(h["version"], h["reply_cooldown_sec"], h["min_closeness_by_topic"]["팬과의추억"], h["author"]) for h in history] == [
        (1, 180, 3, None), (2, 150, 3, "kim"), (3, 150, 2, "lee")]
    assert {s["status"] for s in sheets.list_suggestions(engine, bid)} == {"applied"}
    # a decided suggestion cannot be rejected
    refused = launch(reject_sheet_suggestion, instance, resources, suggestion_id=close["suggestion_id"], reason="늦었습니다")
    assert not refused.success and "was applied as version 3" in failure_message(refused)
    assert len(sheets.history(engine, "CH-0007")) == 3
    # re-materialising the broadcast's partition (as from the UI) shows the decisions, who and when (KST)
    again = materialize([broadcast_suggestions], partition_key=bid, resources={"warehouse": resources["warehouse"]}, instance=instance)
    md = next(m for m in again.asset_materializations_for_node("live_pick_tuning__broadcast_suggestions")).metadata["suggestions"].value
    assert "applied (v2) · by kim · 2026-09-09 10:00:00 KST" in md and "applied (v3) · by lee · 2026-09-09 10:01:00 KST" in md
    assert "apply_sheet_suggestion" not in md

    # -- broadcast 2: VW-C01's line, 160 s after their last 게임 answer, is ranked under version 3 ...
    play(loop, SECOND)
    c01 = live_rows(engine)["MSG-C01"]
    assert (c01["verdict"], c01["rank_in_window"], c01["cooldown_elapsed_sec"], c01["sheet_version"]) == (V.PICK, 1, 160, 3)
    assert {"dataset": "character_sheet", "field": "reply_cooldown_sec", "value": 150} in c01["evidence"]
    # ... where version 1 (the sheet file) holds it as just answered.
    norm = normalise(read_input_dir(raw), load_config())
    by_file = {r["msg_id"]: r for r in records(judge(norm.chat, norm.sheet, norm.relation, load_config()))}
    assert by_file["MSG-C01"]["verdict"] == V.JUST_ANSWERED

    # -- re-judging both days through the daily chain reproduces history
    first = live_rows(engine)
    for day in (DAY1, DAY2):
        assert materialise_day(live_pick.assets, resources, day, instance).success
    day1 = resources["warehouse"].read_partition("live_pick_verdicts", DAY1, ("evidence",)).to_dict("records")
    assert len(day1) == len(FIRST) and {int(r["sheet_version"]) for r in day1} == {1}
    for r in day1:
        elapsed = None if pd.isna(r["cooldown_elapsed_sec"]) else int(r["cooldown_elapsed_sec"])
        assert (r["verdict"], elapsed) == (first[r["msg_id"]]["verdict"], first[r["msg_id"]]["cooldown_elapsed_sec"])
    assert sum(r["verdict"] == V.JUST_ANSWERED for r in day1) == 10
    day2 = {r["msg_id"]: r for r in resources["warehouse"].read_partition("live_pick_verdicts", DAY2, ("evidence",)).to_dict("records")}
    assert (day2["MSG-C01"]["verdict"], int(day2["MSG-C01"]["sheet_version"])) == (V.PICK, 3)
