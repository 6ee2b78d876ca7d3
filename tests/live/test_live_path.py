"""The live path in-process: lines land as a broadcast goes on, the sensor asks for closed
windows, the window job judges them; every line ends judged exactly once, with the verdict
the batch engine gives the same lines."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import sqlalchemy as sa
from dagster import DagsterInstance, RunRequest, SkipReason, build_sensor_context

from live import clock, landing, store
from orchestration.live_jobs import (
    live_pick_broadcast_close_sensor,
    live_pick_close_broadcast,
    live_pick_window_sensor,
    live_pick_windows,
)
from live.replay import replay
from assets.resources.raw_files import RawFilesResource
from assets.resources.warehouse import WarehouseResource
from rules.common import timestamps
from rules.live_pick.config import load_config
from rules.live_pick.engine import judge, records
from rules.live_pick.normalise import normalise, read_input_dir
from rules.live_pick.tags import tag_source
from tests.conftest import SEEDS

TZ = "Asia/Seoul"
SEC = 1_000_000_000


class Clock:
    def __init__(self, ns: int):
        self.ns = ns

    def __call__(self) -> int:
        return self.ns


@pytest.fixture
def live(tmp_path, monkeypatch):
    monkeypatch.setenv("VERDICTS_LIVE_TAGS", "model")
    monkeypatch.setenv("VERDICTS_LIVE_GRACE", "2")
    monkeypatch.setenv("VERDICTS_LIVE_CLOSE_GAP", "60")
    warehouse = WarehouseResource(url=f"sqlite:///{tmp_path / 'wh.sqlite'}")
    resources = {"warehouse": warehouse, "raw_files": RawFilesResource(root=str(SEEDS))}
    fake = Clock(0)
    monkeypatch.setattr(clock, "now_ns", fake)
    store.ensure_tables(warehouse.engine)
    return warehouse, resources, fake, DagsterInstance.ephemeral()


def broadcast_lines() -> list[str]:
    """The sample's overlapping CH-0007 and CH-0008 broadcast of 2026-09-08 (several windows each)."""
    out = []
    for text in (SEEDS / "live_pick" / "live_chat.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            obj = json.loads(text)
        except ValueError:
            continue
        if obj.get("character_id") in ("CH-0007", "CH-0008") and str(obj.get("sent_at", "")).startswith("2026-09-08T21:1"):
            out.append(text)
    return out


def run_sensor_loop(live, lines: list[str], until_ns: int, step_ns: int = 5 * SEC) -> list[RunRequest]:
    warehouse, resources, fake, instance = live
    config = load_config()
    stamps = [timestamps.parse(json.loads(t)["sent_at"], TZ).ns for t in lines]
    pending = sorted(zip(stamps, lines))
    cursor, requests = None, []
    fake.ns = pending[0][0]
    while fake.ns <= until_ns:
        arriving = [t for s, t in pending if s <= fake.ns]
        pending = [(s, t) for s, t in pending if s > fake.ns]
        landing.append(warehouse.engine, arriving, fake.ns, config.window_seconds, TZ)
        context = build_sensor_context(instance=instance, cursor=cursor, resources={"warehouse": warehouse})
        result = live_pick_window_sensor(context)
        cursor = context.cursor
        for request in [result] if isinstance(result, RunRequest) else []:
            requests.append(request)
            fake.ns += 3 * SEC  # a run takes a few seconds to start and judge
            run = live_pick_windows.execute_in_process(run_config=request.run_config, resources=resources, instance=instance)
            assert run.success
        fake.ns += step_ns
    return requests


def batch_verdicts(lines: list[str]) -> dict[str, dict]:
    raw = read_input_dir(SEEDS / "live_pick")
    raw["live_chat"] = pd.DataFrame({"dataset": "live_chat", "file": "x", "line": range(1, len(lines) + 1), "text": lines})
    norm = normalise(raw, load_config())
    rows = records(judge(norm.tables["live_chat"], norm.tables["character_sheet"], norm.tables["viewer_relation"],
                         load_config(), tag_source("model")))
    return {r["msg_id"]: r for r in rows}


def live_rows(warehouse) -> list[dict]:
    with warehouse.engine.connect() as conn:
        return [store.load_json(r) for r in conn.execute(sa.select(store.verdicts.c.row)).scalars()]


def test_every_line_is_judged_once_as_the_batch_engine_judges_it(live):
    warehouse, *_ = live
    lines = broadcast_lines()
    stamps = [timestamps.parse(json.loads(t)["sent_at"], TZ).ns for t in lines]
    requests = run_sensor_loop(live, lines, until_ns=max(stamps) + 60 * SEC)
    assert requests, "the sensor never asked for a run"

    rows = live_rows(warehouse)
    ids = [r["msg_id"] for r in rows]
    assert len(ids) == len(set(ids)), "a line was judged twice"
    expected = batch_verdicts(lines)
    assert set(ids) == set(expected), "a line was missed"
    for r in rows:
        e = expected[r["msg_id"]]
        assert (r["verdict"], r["rank_in_window"], r["cooldown_elapsed_sec"], r["window_start"]) == (
            e["verdict"], e["rank_in_window"], e["cooldown_elapsed_sec"], e["window_start"]), r["msg_id"]
    with warehouse.engine.connect() as conn:
        wins = pd.read_sql(sa.select(store.windows), conn)
    characters = {c for c, _ in [(json.loads(t)["character_id"], 0) for t in lines]}
    assert set(wins["character_id"]) == characters and len(wins) >= 6
    assert not wins.duplicated(["character_id", "window_ns"]).any()
    # the seed's checks ran on every window's verdicts, with the live default tagger, and passed
    with warehouse.engine.connect() as conn:
        audit = pd.read_sql(sa.select(store.audit), conn)
    assert set(zip(audit["character_id"], audit["window_ns"])) == set(zip(wins["character_id"], wins["window_ns"]))
    assert set(audit["tagger"]) == {"kiwi"} and set(audit["summary_writer"]) == {"template"}
    assert (audit["checks_run"] == 15).all()
    assert all(not store.load_json(f) for f in audit["checks_failed"])
    both = audit.merge(wins, on=["character_id", "window_ns"], suffixes=("", "_window"))
    assert (both["lines"] == both["lines_window"]).all() and (both["latency_ms"] == both["latency_ms_window"]).all()
    assert both["judged"].sum() == len(rows) and (both["late"] == 0).all()
    assert all(r["provenance"]["tagger"] == "kiwi" for r in rows)
    # judged after the window closed plus grace, within the loop's step and run time
    assert (wins["latency_ms"] >= 2000).all() and (wins["latency_ms"] <= 11000).all()


def test_a_line_after_its_window_was_judged_is_recorded_late(live):
    warehouse, resources, fake, instance = live
    lines = broadcast_lines()
    stamps = [timestamps.parse(json.loads(t)["sent_at"], TZ).ns for t in lines]
    run_sensor_loop(live, lines, until_ns=max(stamps) + 60 * SEC)
    straggler = json.loads(lines[0])
    straggler["msg_id"] = "MSG-LATE-0001"
    landing.append(warehouse.engine, [json.dumps(straggler, ensure_ascii=False)], fake.ns, 30, TZ)
    context = build_sensor_context(instance=instance, resources={"warehouse": warehouse})
    request = live_pick_window_sensor(context)
    assert isinstance(request, RunRequest)
    assert live_pick_windows.execute_in_process(run_config=request.run_config, resources=resources, instance=instance).success
    with warehouse.engine.connect() as conn:
        late = conn.execute(sa.select(store.late.c.msg_id)).scalars().all()
    assert late == ["MSG-LATE-0001"]
    with warehouse.engine.connect() as conn:  # counted on its window's audit row
        counted = dict(conn.execute(sa.select(store.audit.c.window_ns, store.audit.c.late)
                                    .where(store.audit.c.character_id == straggler["character_id"])).all())
    assert sum(counted.values()) == 1
    assert "MSG-LATE-0001" not in {r["msg_id"] for r in live_rows(warehouse)}
    again = live_pick_window_sensor(build_sensor_context(instance=instance, resources={"warehouse": warehouse}))
    assert isinstance(again, SkipReason)


def test_closing_a_broadcast_writes_answers_back_once(live):
    warehouse, resources, fake, instance = live
    lines = broadcast_lines()
    stamps = [timestamps.parse(json.loads(t)["sent_at"], TZ).ns for t in lines]
    run_sensor_loop(live, lines, until_ns=max(stamps) + 40 * SEC)
    fake.ns = max(stamps) + 200 * SEC
    request = live_pick_broadcast_close_sensor(build_sensor_context(instance=instance, resources={"warehouse": warehouse}))
    assert isinstance(request, RunRequest)
    assert live_pick_close_broadcast.execute_in_process(run_config=request.run_config, resources=resources,
                                                        instance=instance).success
    with warehouse.engine.connect() as conn:
        state = {v: store.load_json(r) for v, r in conn.execute(sa.select(store.viewer_state.c.viewer_id, store.viewer_state.c.row))}
    picked = [r for r in live_rows(warehouse) if r["verdict"] == "지금 답변할 질문" and r["viewer_id"] == "VW-1043"]
    assert picked, "VW-1043 was answered in the 21:14:00 window"
    assert "노래" in state["VW-1043"]["answered_topics"]
    assert state["VW-1043"]["last_replied_at"] > "2026-09-08T21:14:00"
    # Nothing new to close afterwards.
    assert isinstance(live_pick_broadcast_close_sensor(build_sensor_context(instance=instance, resources={"warehouse": warehouse})), SkipReason)


def test_replayer_paces_lines_and_re_times_them(tmp_path):
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'wh.sqlite'}")
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(broadcast_lines()[:20]) + "\n", encoding="utf-8")
    now = {"ns": 1_800_000_000 * SEC}
    sleeps = []

    def sleep(seconds):
        sleeps.append(seconds)
        now["ns"] += int(max(seconds, 0.01) * SEC)

    sent = replay(engine, path, load_config(), rate=40, shift_to_now=True, clock=lambda: now["ns"], sleep=sleep, progress=lambda s: None)
    assert sent == 20
    with engine.connect() as conn:
        rows = conn.execute(sa.select(store.landing.c.text, store.landing.c.arrived_ns)).all()
    assert len(rows) == 20
    sent_at = [timestamps.parse(json.loads(t)["sent_at"], TZ).ns for t, _ in rows]
    # re-timed to the send time (printed to the whole second, like the recording)
    assert all(-SEC <= a - s <= SEC for s, (_, a) in zip(sent_at, rows))
    assert 0.4 <= (now["ns"] - 1_800_000_000 * SEC) / SEC <= 0.8, "20 lines at 40 lines/s take about half a second"


def test_replayer_stops_cleanly_on_ctrl_c(tmp_path):
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'wh.sqlite'}")
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(broadcast_lines()) + "\n", encoding="utf-8")
    now = {"ns": 0}
    calls = {"n": 0}

    def sleep(seconds):
        calls["n"] += 1
        now["ns"] += int(0.1 * SEC)
        if calls["n"] == 3:
            raise KeyboardInterrupt

    messages = []
    sent = replay(engine, path, load_config(), rate=10, clock=lambda: now["ns"], sleep=sleep, progress=messages.append)
    assert 0 < sent < len(broadcast_lines())
    assert messages[-1].startswith("replay: stopped after")


def test_live_board_shows_windows_with_their_latency(live):
    from live.view import latest_windows_markdown, live_board_html

    warehouse, *_ = live
    lines = broadcast_lines()
    stamps = [timestamps.parse(json.loads(t)["sent_at"], TZ).ns for t in lines]
    run_sensor_loop(live, lines, until_ns=max(stamps) + 60 * SEC)
    page = live_board_html(warehouse.engine)
    assert "MSG-20260908-1401" in page and "판정 지연 —" not in page
    md = latest_windows_markdown(warehouse.engine)
    assert "close → stored" in md and "지금 답변할 질문" not in md.split("###")[0]
    assert "tagger kiwi · summaries template: 0 model, 0 fell back to the template · checks 15/15 passed" in md


def test_a_failing_check_is_held_against_the_windows_of_its_failing_lines():
    from live.judge import window_audit
    from rules.common.checks import CheckResult

    rows = [{"msg_id": m, "provenance": {"summary": s, "summary_fallback": f}}
            for m, s, f in (("m1", "openai", None), ("m2", "template", "impolite"), ("m3", "template", None))]
    checks = [CheckResult("5.rank", "rank", False, ["m1", "zz"]), CheckResult("8.polite", "polite", True)]
    audit = window_audit(rows, checks, {"m1": ("A", 0), "m2": ("A", 0), "m3": ("B", 30)}, "kiwi", "openai")
    assert audit[("A", 0)] == {"tagger": "kiwi", "summary_writer": "openai", "summaries_kept": 1, "summaries_fallback": 1,
                               "checks_run": 2, "checks_failed": {"5.rank": ["m1"]}}
    assert audit[("B", 30)]["checks_failed"] == {} and audit[("B", 30)]["summaries_kept"] == 0
