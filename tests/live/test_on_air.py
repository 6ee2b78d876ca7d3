"""Starting a broadcast (`live.on_air`, `verdicts live-start`, `POST /live/start`): it goes on air from
the window holding now, with the viewer relations in force then; a broadcast still open is closed first
only when the operator says so; the current broadcast's windows and figures begin after the start."""

from __future__ import annotations

import json

import sqlalchemy as sa

from assets.resources.warehouse import _engine

from live import landing, store
from live.judge import broadcasts_to_close, close_broadcast, judge_windows, seed_relations
from live.on_air import current_from, on_air, start_broadcast
from rules.common.jsonl import dataset_path, read_raw
from rules.live_pick.config import load_config
from tests.cli.helpers import run
from tests.cli.test_sheet_cli import warehouse  # noqa: F401 - the fixture
from tests.live.broadcasts import FIRST, SEC, VIEWERS, judge_and_close, ns
from web.live.broadcasts import start_lines, start_message, where_current
from web.live.records import counts

TZ = "Asia/Seoul"


def test_a_first_start_goes_on_air_from_the_window_holding_now(warehouse):
    engine, raw = warehouse
    store.ensure_tables(engine)
    store.seed_viewer_state(engine, _relations(raw), ns("2026-09-08T20:00:00"))
    at = ns("2026-09-08T20:59:47")
    done = start_broadcast(engine, "CH-0007", load_config(), lambda: at, by="operator-kim")
    assert done["started"] and done["closed"] is None and done["previous"] is None
    assert done["started_ns"] == at and done["first_window_ns"] == ns("2026-09-08T20:59:30")
    assert done["viewers"] == len(VIEWERS)
    with engine.connect() as conn:
        assert on_air(conn) == {"CH-0007": {"started_ns": at, "first_window_ns": ns("2026-09-08T20:59:30"),
                                            "viewers": len(VIEWERS), "started_by": "operator-kim"}}
        assert current_from(conn) == {"CH-0007": ns("2026-09-08T20:59:30") - 1}
    said = start_message(done, TZ)
    assert "2026-09-08 20:59:47 KST에 시작했습니다" in said and f"시청자 기록 {len(VIEWERS)}명" in said
    assert "20:59:30 KST 구간부터" in said
    # off air (nothing judged) and on again at the same instant of a paused clock (the recording's own time): one row a start
    assert close_broadcast(engine, "CH-0007", load_config(), lambda: at)["ended"]
    again = start_broadcast(engine, "CH-0007", load_config(), lambda: at)
    assert again["started"] and again["started_ns"] == at + 1


def test_a_broadcast_still_open_is_closed_first_only_when_asked(warehouse):
    engine, raw = warehouse
    config = load_config()
    done = judge_and_close(engine, raw, FIRST[:12])  # broadcast 1 judged and closed
    assert done["closed"]
    keys, last = judge_more(engine, raw, FIRST[12:])  # judged after that close: a broadcast not closed yet
    later = last + 600 * SEC

    refused = start_broadcast(engine, "CH-0007", config, lambda: later)
    assert not refused["started"] and refused["previous"]["windows"] == len(keys)
    assert refused["previous"]["first_window_ns"] == keys[0][1] and refused["previous"]["last_window_ns"] == keys[-1][1]
    with engine.connect() as conn:
        assert not conn.execute(sa.select(store.starts)).all(), "nothing written while the operator decides"
        closes = conn.execute(sa.select(sa.func.count()).select_from(store.broadcasts)).scalar_one()
    assert "이전 방송이 아직 닫히지 않았습니다" in start_message(refused, TZ)
    assert "--close-previous" in start_lines(refused, TZ)[0]

    before = counts(engine, {"CH-0007"})["broadcasts"]["CH-0007"]
    assert before["judged"] == len(FIRST) - 12
    started = start_broadcast(engine, "CH-0007", config, lambda: later, close_previous=True)
    assert started["started"] and started["closed"]["closed"] and started["closed"]["answered"] > 0
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(store.broadcasts)).scalar_one() == closes + 1
        assert set(on_air(conn)) == {"CH-0007"}
    said = start_message(started, TZ)
    assert "을 닫았습니다" in said and "시작했습니다" in said
    # the store's figures of the current broadcast start after it: nothing judged in it yet
    assert "CH-0007" not in counts(engine, {"CH-0007"})["broadcasts"]
    view = where_current(engine)
    assert view["closed_through"]["CH-0007"] == (started["first_window_ns"] - 1) // 1_000_000
    assert view["on_air"]["CH-0007"]["started_ms"] == later // 1_000_000

    # closing it again ends the time on air
    close_broadcast(engine, "CH-0007", config, lambda: later + 10 * SEC)
    with engine.connect() as conn:
        assert on_air(conn) == {}


def test_live_start_prints_to_stdout_and_refuses_loudly(warehouse):
    engine, raw = warehouse
    code, out, err = run("live-start", "CH-0007", "--input", str(raw))
    assert code == 0 and not err
    assert out.startswith("CH-0007: on air since ") and " KST" in out and "viewer relations" in out
    code, _, err = run("live-start", "CH-9999", "--input", str(raw))
    assert code == 2 and "CH-9999: no character sheet" in err
    judge_and_close(engine, raw, FIRST[:6])
    judge_more(engine, raw, FIRST[6:12])  # judged after a close, never closed: refused without --close-previous
    code, out, err = run("live-start", "CH-0007", "--input", str(raw))
    assert code == 2 and "previous broadcast is still open" in err and not out
    code, out, err = run("live-start", "CH-0007", "--close-previous", "--input", str(raw))
    assert code == 0 and "CH-0007: closed" in out and "on air since" in out


def judge_more(engine, raw, lines: list[str]) -> tuple[list, int]:
    """Land and judge more CH-0007 lines (no close); their windows and the last line's instant."""
    config = load_config()
    stamps = [ns(json.loads(t)["sent_at"]) for t in lines]
    landing.append(engine, lines, max(stamps), config.window_seconds, TZ)
    keys = sorted({("CH-0007", s - s % (config.window_seconds * SEC)) for s in stamps})
    judge_windows(engine, keys, raw, config, "gold", None, lambda: max(stamps) + 60 * SEC)
    return keys, max(stamps)


def _relations(raw):
    sheet = read_raw(dataset_path(raw, "character_sheet"), "character_sheet")
    return seed_relations(raw, sheet, load_config())


def test_a_quarantined_window_keeps_no_broadcast_open(warehouse):
    """A window whose every line was quarantined has no verdicts: nothing to close, so it neither
    makes a start wait for a close nor keeps the close sensor closing the character forever."""
    engine, raw = warehouse
    config = load_config()
    store.ensure_tables(engine)
    bad = json.dumps({"msg_id": "MSG-Q01", "character_id": "CH-0022", "viewer_id": "VW-Q", "sent_at": "2026-09-08T21:00:05",
                      "body": "질문", "donation_amount": 0, "is_question": "maybe"}, ensure_ascii=False)
    at = ns("2026-09-08T21:00:05")
    landing.append(engine, [bad], at, config.window_seconds, TZ)
    judge_windows(engine, [("CH-0022", ns("2026-09-08T21:00:00"))], raw, config, "gold", None, lambda: at + 60 * SEC)
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(store.windows)).scalar_one() == 1
    later = at + 600 * SEC
    assert "CH-0022" not in broadcasts_to_close(engine, later, 120)
    done = start_broadcast(engine, "CH-0022", config, lambda: later)
    assert done["started"] and done["previous"] is None and done["closed"] is None
    assert "CH-0022" not in broadcasts_to_close(engine, later + 600 * SEC, 120), "the start stays on air"


def test_starting_what_is_on_air_writes_nothing(warehouse):
    engine, raw = warehouse
    config = load_config()
    at = ns("2026-09-08T20:59:47")
    first = start_broadcast(engine, "CH-0007", config, lambda: at, by="operator-kim")
    again = start_broadcast(engine, "CH-0007", config, lambda: at + 45 * SEC)
    assert again["started"] and again["already"] and again["started_ns"] == first["started_ns"]
    assert "이미 방송 중입니다" in start_message(again, TZ) and "on air already" in start_lines(again, TZ)[0]
    with engine.connect() as conn:
        assert len(conn.execute(sa.select(store.starts)).all()) == 1
    keys, last = judge_more(engine, raw, FIRST[:6])  # judged while on air: that broadcast must be closed to start anew
    refused = start_broadcast(engine, "CH-0007", config, lambda: last + 60 * SEC)
    assert not refused["started"] and refused["on_air"]["started_ns"] == at
    assert "부터 방송 중입니다" in start_message(refused, TZ) and "on air since" in start_lines(refused, TZ)[0]


def test_live_start_names_an_unusable_input_folder(warehouse, tmp_path):
    code, out, err = run("live-start", "CH-0007", "--input", str(tmp_path / "nowhere"))
    assert code == 2 and not out and "--input" in err and "Traceback" not in err


def test_two_starts_at_once_leave_one_broadcast_on_air(warehouse, monkeypatch):
    """Two processes that both found the character off air: the store keeps one start, the second
    is told the first stands."""
    import live.on_air as module

    engine, _ = warehouse
    config = load_config()
    at = ns("2026-09-08T21:00:05")
    first = start_broadcast(engine, "CH-0011", config, lambda: at, by="page")
    real, calls = module.on_air, []

    def read_before_the_first_wrote(conn):
        calls.append(1)
        return {} if len(calls) == 1 else real(conn)
    monkeypatch.setattr(module, "on_air", read_before_the_first_wrote)
    second = start_broadcast(engine, "CH-0011", config, lambda: at + SEC, by="command line")
    assert second["started"] and second["already"] and second["started_ns"] == first["started_ns"]
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(store.starts)
                            .where(store.starts.c.ended_ns.is_(None))).scalar_one() == 1


def test_the_close_sensor_leaves_a_started_broadcast_to_its_operator(warehouse):
    engine, raw = warehouse
    config = load_config()
    start_broadcast(engine, "CH-0007", config, lambda: ns("2026-09-08T21:00:00"))
    _, last = judge_more(engine, raw, FIRST[:6])
    quiet = last + 3600 * SEC  # an hour without a line
    assert "CH-0007" not in broadcasts_to_close(engine, quiet, 120)
    close_broadcast(engine, "CH-0007", config, lambda: quiet)
    judge_more(engine, raw, FIRST[6:12])  # lines nobody started a broadcast for: the gap rule closes them
    assert "CH-0007" in broadcasts_to_close(engine, quiet + 3600 * SEC, 120)


def test_live_close_refuses_a_character_no_sheet_names(warehouse):
    _, raw = warehouse
    code, out, err = run("live-close", "CH-9999")
    assert code == 2 and not out and "CH-9999" in err


def test_on_air_on_postgresql(postgres_url):
    """The start table, its one-on-air index and the judged-window queries on PostgreSQL."""
    engine = _engine(postgres_url)
    store.ensure_tables(engine)
    config = load_config()
    at = ns("2026-09-08T21:00:05")
    first = start_broadcast(engine, "CH-0011", config, lambda: at, by="page")
    with engine.begin() as conn:  # a second process's start, written as if it had not seen the first
        try:
            conn.execute(store.starts.insert(), {"character_id": "CH-0011", "started_ns": at + 1, "first_window_ns": first["first_window_ns"],
                                                 "viewers": 0, "started_by": "command line"})
        except sa.exc.IntegrityError:
            conn.rollback()
        else:
            raise AssertionError("two broadcasts on air for one character")
    assert start_broadcast(engine, "CH-0011", config, lambda: at + SEC)["already"]
    assert broadcasts_to_close(engine, at + 3600 * SEC, 120) == []
    assert close_broadcast(engine, "CH-0011", config, lambda: at + 2 * SEC)["ended"]
    with engine.connect() as conn:
        assert on_air(conn) == {} and current_from(conn) == {"CH-0011": first["first_window_ns"] - 1}
