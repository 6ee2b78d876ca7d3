"""The console service's parts on their own: frames split into lines, the replayer's frames
under the size limit, slow consoles dropped without slowing anyone, checks merged over parts."""

from __future__ import annotations

import asyncio
import json

import pandas as pd
import sqlalchemy as sa

from live import store
from live.ingest_client import frames_of
from web.live.frames import lines_of
from web.live.clients import Hub
from web.live import records
from web.live.delivery import DeliveryLog
from web.live.frames import elements
from web.live.windows import merge_checks
from tests.live.console import SAMPLE_HORIZON, feed, lines, worker_service
from rules.common.checks import CheckResult
from rules.live_pick import verdicts as V


def test_a_frame_is_one_line_per_array_element_and_anything_else_is_one_line():
    def split(text):
        return [line.text for line in lines_of({"text": text}, 1000)]

    assert split('{"msg_id": "A"}') == ['{"msg_id": "A"}']
    assert split('[{"msg_id": "A"}, 3, "x"]') == ['{"msg_id": "A"}', "3", '"x"']
    assert split("not json") == ["not json"]
    assert split("[]") == []


def test_the_replayer_keeps_array_frames_under_the_limit_and_sends_bad_lines_alone():
    lines = [json.dumps({"msg_id": f"M-{i}", "body": "가" * 200}, ensure_ascii=False) for i in range(400)]
    frames = frames_of(lines[:200] + ["{broken"] + lines[200:], max_bytes=8 * 1024)
    assert "{broken" in frames
    assert all(len(f.encode()) <= 8 * 1024 for f in frames)
    back = [l for f in frames for l in (elements(f) if f != "{broken" else ["{broken"])]
    assert [json.loads(l)["msg_id"] for l in back if l != "{broken"] == [f"M-{i}" for i in range(400)]
    assert back.index("{broken") == 200, "order kept"


def test_a_console_that_falls_behind_is_dropped_and_publishing_never_waits():
    async def go():
        hub = Hub(limit=5)
        slow, quick = hub.join(), hub.join()
        for i in range(5):
            hub.publish(f"frame {i}", i + 1)
            await quick.queue.get()  # the quick one keeps up
        hub.publish("frame 5", 6)
        assert slow.dropped.is_set() and slow not in hub.clients
        assert not quick.dropped.is_set() and quick in hub.clients
        assert await quick.queue.get() == (6, "frame 5")

    asyncio.run(go())


def test_waiting_for_the_consoles_ends_when_each_was_sent_everything_or_at_the_timeout():
    async def go():
        hub = Hub(limit=5)
        reader, stuck = hub.join(), hub.join()

        async def read():
            for _ in range(2):
                await reader.queue.get()
                await asyncio.sleep(0.05)  # the send
                reader.queue.task_done()

        hub.publish("a", 1)
        hub.publish("b", 2)
        hub.leave(stuck)
        task = asyncio.ensure_future(read())
        loop = asyncio.get_running_loop()
        started = loop.time()
        await hub.sent(5.0)
        assert task.done() and loop.time() - started < 1.0, "returns once the reader has sent both"
        hub.clients.add(stuck)  # one that never reads: the wait ends at the timeout
        started = loop.time()
        await hub.sent(0.2)
        assert 0.15 < loop.time() - started < 1.0

    asyncio.run(go())


def test_the_frames_kept_for_resuming_consoles_are_bounded_by_their_bytes_once_recorded():
    """A window's frame is 3 MB at 400 lines/s: the frames kept as sent are bounded in bytes as well
    as in number, older ones read from the store; a frame not yet in the store stays, whatever the bounds."""
    log = DeliveryLog(7, keep_frames=10, keep_bytes=250)
    sent = [log.publish({"type": "window", "n": i, "pad": "x" * 60}, "window", str(i)) for i in range(1, 6)]
    assert [d.seq for d in sent] == [1, 2, 3, 4, 5] and all(b'"seq":%d,"epoch":7' % d.seq in d.data for d in sent)
    assert list(log.recent) == [1, 2, 3, 4, 5], "none recorded yet: all kept"
    log.recorded(log.take_unrecorded())
    assert log.recent_bytes <= 250 and list(log.recent) == list(range(6 - len(log.recent), 6)), "the newest within the bytes"
    assert log.held(log.seq - 1) == [sent[-1]] and log.held(0) is None, "older ones: from the store"
    big = log.publish({"type": "window", "pad": "y" * 400}, "window", "6")
    assert log.held(5) == [big], "larger than the bound, kept until recorded"
    log.recorded(log.take_unrecorded())
    assert log.held(5) is None or log.held(5) == [big]


def test_checks_over_parts_of_a_window_pass_only_when_every_part_passed():
    a = [CheckResult("1.x", "x", True), CheckResult("2.y", "y", False, ["M-1"], "M-1: wrong")]
    b = [CheckResult("1.x", "x", False, ["M-9"], "M-9: wrong"), CheckResult("2.y", "y", True)]
    merged = merge_checks([a, b])
    assert [(m.id, m.passed, m.failing_ids) for m in merged] == [("1.x", False, ["M-9"]), ("2.y", False, ["M-1"])]
    assert merge_checks([a[:1], a[:1]])[0].passed


def test_the_re_judgement_compares_field_for_field_but_for_a_model_written_sentence():
    from live.verify import same_verdict

    row = {"msg_id": "M-1", "verdict": "지금 답변할 질문", "rank_in_window": 1, "summary": "템플릿 문장입니다.",
           "provenance": {"tagger": "kiwi", "summary": "template", "summary_fallback": None}}
    model = {**row, "summary": "모델 문장입니다.", "provenance": {**row["provenance"], "summary": "openai"}}
    fell_back = {**row, "provenance": {**row["provenance"], "summary_fallback": "timeout"}}
    assert same_verdict(row, row) and same_verdict(row, model) and same_verdict(row, fell_back)
    assert not same_verdict(row, {**row, "summary": "다른 문장입니다."}), "a template sentence is the rules': compared"
    assert not same_verdict(row, {**model, "rank_in_window": 2}) and not same_verdict(row, None) and same_verdict(None, None)


def test_at_a_windows_due_time_only_frames_holding_its_lines_are_absorbed_before_it_finishes(tmp_path):
    """Frames that arrived for later windows wait until the due window is out; a straggler of the
    due window (sent inside it, arriving in its grace) is absorbed first."""
    from web.config import WebConfig
    from web.live.service import LiveService

    service = LiveService(WebConfig(tags="gold", warehouse_url=f"sqlite:///{tmp_path / 'w.sqlite'}"))
    step = 30 * 10**9
    due = 1_793_491_200 * 10**9  # 2026-11-01T00:00:00Z: a window start

    def line(sent: str) -> str:
        return json.dumps({"msg_id": "M-1", "character_id": "CH-0007", "viewer_id": "VW-1", "sent_at": sent, "body": "x"})

    service.due.deadlines = {("CH-0007", due): due + step + service.grace, ("CH-0008", due): due + 2 * step}
    now = due + step + service.grace
    later = [(None, 1, lines(line("2026-11-01T09:00:31"), "not json"))]  # naive Seoul time: the next window
    assert not service.due.holds_due(later, now)
    assert service.due.holds_due(later + [(None, 2, lines(line("2026-11-01T09:00:29")))], now)
    assert not service.due.holds_due([(None, 3, lines(line("2026-11-01T00:00:29+00:00").replace("CH-0007", "CH-0008")))], now)
    service.pool.shutdown()


def _song_line(i: int, second: int, donation: int = 0) -> str:
    """Line M-i of CH-0007, sent `second` seconds into the window at 2026-11-01T00:00:00Z, asking for a song."""
    return json.dumps({"msg_id": f"M-{i}", "character_id": "CH-0007", "viewer_id": "VW-3320",
                       "sent_at": f"2026-11-01T09:00:{second:02d}", "body": "노래 불러 줘?", "topic_tags": ["노래"],
                       "donation_amount": donation, "is_question": True, "note": None}, ensure_ascii=False)


def test_a_window_ranked_in_its_grace_is_ranked_again_when_a_straggler_arrives(tmp_path, monkeypatch):
    """Finished and stored early (after its end, before end + grace), a window's result stands when nothing
    arrived since; a line that arrives in the grace makes it rank again, with that line."""
    start = 1_793_491_200 * 10**9  # 2026-11-01T00:00:00Z: a window start
    step = 30 * 10**9
    key = ("CH-0007", start)

    line = _song_line

    from web.live import ready as ready_module

    calls = []
    real = ready_module.finish
    monkeypatch.setattr(ready_module, "finish", lambda windows, *a: calls.append([w.key for w in windows]) or real(windows, *a))
    lines = [line(i, i, 0) for i in range(1, 6)]
    straggler = line(9, 29, 5000)  # sent inside the window, richest: it becomes the first pick
    frames = {}
    for name, late in (("quiet", []), ("straggler", [straggler])):
        now = [start + 10 * 10**9]
        service = worker_service(tmp_path, f"{name}.sqlite", lambda: now[0])
        feed(service, lines)
        now[0] = start + step + 50_000_000  # past the end and the settle, inside the 200 ms grace
        service.finishing.rank_early([key])
        assert key in service.finishing.early
        if late:
            feed(service, late)
        now[0] = start + step + service.grace
        calls.clear()
        early_seq = service.finishing.early[key][1]["push"]
        assert records.last_push_seq(service.engine) == early_seq, "stored in the grace"
        assert service.finishing.stored_push < early_seq, "not pushed yet: a late frame judged now would come before it"
        frames[name] = json.loads(records.window_json(service.finishing.finish([key])[0]))
        assert calls == ([[key]] if late else [])  # ranked again only for the straggler
        assert key not in service.finishing.early
        assert frames[name]["push"] == records.last_push_seq(service.engine) >= early_seq  # the newest push
        assert late or frames[name]["push"] == early_seq
        assert service.finishing.stored_push == frames[name]["push"]
        # what is stored is the window as pushed, once: the early result was replaced, not added to
        with service.engine.connect() as conn:
            for table, n in ((store.verdicts, len(lines) + len(late)), (store.windows, 1), (store.pushes, 1), (store.audit, 1)):
                assert conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one() == n, table.name
        again = records.stored_frames(service.engine, [frames[name]["push"]], [], service.rules.timezone)
        assert again[0][0]["verdicts"] == frames[name]["verdicts"]
        service.pool.shutdown()

    picks = {n: [r["msg_id"] for r in f["verdicts"] if r["verdict"] == V.PICK] for n, f in frames.items()}
    assert picks["quiet"] == ["M-1", "M-2", "M-3"]
    assert picks["straggler"] == ["M-9", "M-1", "M-2"]
    # the same lines judged without early ranking give the same verdicts
    now = [start + 10 * 10**9]
    fresh = worker_service(tmp_path, "fresh.sqlite", lambda: now[0])
    feed(fresh, lines + [straggler])
    now[0] = start + step + fresh.grace
    assert json.loads(records.window_json(fresh.finishing.finish([key])[0]))["verdicts"] == frames["straggler"]["verdicts"]
    fresh.pool.shutdown()


def test_a_crash_between_a_windows_store_in_its_grace_and_its_push_loses_nothing(tmp_path):
    """Stored in its grace, then a straggler acknowledged, then the service dies before the window
    is due: the restarted service has the window as stored (a console resuming gets it) and judges
    the straggler as late. Every line landed is judged once, in the window or late."""
    start = 1_793_491_200 * 10**9  # 2026-11-01T00:00:00Z: a window start
    step = 30 * 10**9
    key = ("CH-0007", start)

    line = _song_line

    now = [start + 10 * 10**9]
    first = worker_service(tmp_path, "w.sqlite", lambda: now[0])
    feed(first, [line(i, i) for i in range(1, 6)])
    now[0] = start + step + 50_000_000
    first.finishing.rank_early([key])
    stored = json.loads(records.window_json(first.finishing.early[key][1]))
    feed(first, [line(9, 29)])  # acknowledged (landed), then the process dies
    first.pool.shutdown()

    now[0] = start + step + 10**9
    second = worker_service(tmp_path, "w.sqlite", lambda: now[0])
    assert key in second.buffer.finished and key not in second.buffer.open
    todo = second._undelivered()
    assert [(kind, ref) for _, kind, ref, _ in todo][0] == ("window", str(stored["push"])), "never sent: sent when it restarts"
    frames = [f for f, _, _, _ in todo]
    assert [f["verdicts"] for f in frames if f["type"] == "window"] == [stored["verdicts"]]
    late = [f for f in frames if f["type"] == "late"]
    assert [r["msg_id"] for f in late for r in f["verdicts"]] == ["M-9"]
    with second.engine.connect() as conn:
        landed = conn.execute(sa.select(sa.func.count()).select_from(store.landing)).scalar_one()
        judged = conn.execute(sa.select(sa.func.count()).select_from(store.verdicts)).scalar_one()
        late_n = conn.execute(sa.select(sa.func.count()).select_from(store.late)).scalar_one()
    assert (landed, judged, late_n) == (6, 5, 1)
    second.pool.shutdown()


def test_a_copy_of_a_line_judged_long_ago_is_a_duplicate_though_only_open_windows_are_held(tmp_path):
    """The service holds the ids of its open windows' lines only: a finished window's (and a late
    line's) are looked up in the store, so a copy of either is still quarantined, naming the first line."""
    start = 1_793_491_200 * 10**9  # 2026-11-01T00:00:00Z: a window start
    step = 30 * 10**9

    def line(i: int, second: int, minute: int = 0) -> str:
        return json.dumps({"msg_id": f"M-{i}", "character_id": "CH-0007", "viewer_id": "VW-3320",
                           "sent_at": f"2026-11-01T09:{minute:02d}:{second:02d}", "body": "노래 불러 줘?", "topic_tags": ["노래"],
                           "donation_amount": 0, "is_question": True, "note": None}, ensure_ascii=False)

    now = [start + 10 * 10**9]
    service = worker_service(tmp_path, "w.sqlite", lambda: now[0])
    feed(service, [line(1, 1), line(2, 2)])
    assert set(service.buffer.seen) == {"M-1", "M-2"}
    now[0] = start + step + service.grace
    service.finishing.finish([("CH-0007", start)])
    assert not service.buffer.seen, "a finished window's ids are looked up in the store"
    now[0] = start + 2 * step + 5 * 10**9
    absorbed = feed(service, [line(3, 3, minute=1), line(1, 35), line(4, 20)])  # a copy of M-1; M-4 is late
    assert [(q["msg_id"], q["reason_code"], q["reason"]) for q in absorbed.quarantined] == [
        ("M-1", "duplicate_id", "msg_id 'M-1' repeats the row on line 1")]
    assert [r["msg_id"] for f in absorbed.late for r in f["verdicts"]] == ["M-4"]
    assert set(service.buffer.seen) == {"M-3"}, "the late line is looked up in the store"
    again = feed(service, [line(4, 40), line(3, 41, minute=1)])
    assert sorted((q["msg_id"], q["reason"]) for q in again.quarantined) == [
        ("M-3", "msg_id 'M-3' repeats the row on line 3"), ("M-4", "msg_id 'M-4' repeats the row on line 5")]
    service.pool.shutdown()


def test_a_stored_window_reads_back_the_same_on_sqlite_and_postgresql(tmp_path, postgres_url, monkeypatch):
    """The window store writes verdict rows as encoded JSON text: both warehouses read back the
    rows as they were, with the verdicts' tags, in push order (on SQLite, however many rows each
    INSERT statement takes)."""
    import sqlalchemy as sa

    from live import store
    from web.live import records

    key = ("CH-0007", 1_793_491_200 * 10**9)
    AUDIT = {"tagger": "kiwi", "summary_writer": "template", "summaries_kept": 0, "summaries_fallback": 0, "checks_run": 15,
             "checks_failed": {}}
    rows = [{"pick_id": f"PICK-{i}", "msg_id": f"M-{i}", "verdict": V.DEFERRED, "rank_in_window": i, "summary": "미룹니다.",
             "evidence": [{"dataset": "live_chat", "field": "msg_id", "value": 2, "agg": "count"}],
             "provenance": {"tagger": "kiwi", "tags": ["노래"] if i else None}} for i in (1, 2)]
    tags_of = {"M-1": ["노래"], "M-2": None}
    got = {}
    for name, url, per in (("sqlite", f"sqlite:///{tmp_path / 'w.sqlite'}", records.VALUES_ROWS),
                           ("sqlite, a row a statement", f"sqlite:///{tmp_path / 'r.sqlite'}", 1),
                           ("postgresql", postgres_url, records.VALUES_ROWS)):
        monkeypatch.setattr(records, "VALUES_ROWS", per)
        engine = sa.create_engine(url)
        store.ensure_tables(engine)
        params = records.verdict_params(key, rows, tags_of, {"M-1": 11, "M-2": 12})
        stored = records.store_window(engine, key, "2026-11-01T09:00:00", key[1] + 30 * 10**9, 3, [r["msg_id"] for r in rows], params,
                                      [], [], key[1], lambda: key[1] + 31 * 10**9, AUDIT)
        assert stored is not None
        assert records.store_window(engine, key, "2026-11-01T09:00:00", key[1] + 30 * 10**9, 3, [r["msg_id"] for r in rows], params,
                                    [], [], key[1], lambda: key[1], AUDIT) is None  # judged once
        frames = [f for f, _ in records.stored_frames(engine, [stored[0]], [], "Asia/Seoul")]
        with engine.connect() as conn:
            tags = dict(conn.execute(sa.select(store.verdicts.c.msg_id, store.verdicts.c.tags)).all())
        got[name] = (frames[0]["verdicts"], {m: store.load_json(t) for m, t in tags.items()})
        engine.dispose()
    assert got["sqlite"] == got["sqlite, a row a statement"] == got["postgresql"] == (rows, tags_of)


def test_a_window_frame_spliced_from_stored_row_texts_reads_as_the_frame():
    """The pushed text reuses each verdict row's stored text; parsed, it is the frame itself,
    Korean, escapes and an integer past 64 bits (which orjson refuses: stored by json) included."""
    rows = [{"msg_id": "M-1", "summary": "세계관 밖이라 넘김 \"</script>\"", "evidence": [{"value": 2**70}]},
            {"msg_id": "M-2", "summary": None, "rank_in_window": 1, "evidence": []}]
    params = records.verdict_params(("CH-0007", 0), rows, {}, {"M-1": 1, "M-2": 2})
    frame = records.window_frame("CH-0007", 0, "2026-11-01T09:00:00+09:00", 30 * 10**9, 2, 12.5, [], records.stored_rows(params),
                                 [], 7, "Asia/Seoul", {"M-1": "노래 불러줘?"})
    data = records.window_json(frame)
    assert json.loads(data.decode("utf-8")) == json.loads(json.dumps({**frame, "verdicts": rows}))


def test_a_window_is_finished_in_its_grace_once_every_connection_that_sent_to_it_has_passed_it(tmp_path):
    """A connection sends in time order: its line of a later window means its lines of this one are
    in. Until each sender has passed the window (or closed with every frame absorbed), a line of
    it may still be on its way, and finishing it early would only mean finishing it twice."""
    from web.live.intake import Origin

    start = 1_793_491_200 * 10**9  # 2026-11-01T00:00:00Z: a window start
    key, step = ("CH-0007", start), 30 * 10**9
    service = worker_service(tmp_path, "marks.sqlite", lambda: start + 10 * 10**9)

    def line(i: int, second: int, character: str = "CH-0007") -> str:
        return json.dumps({"msg_id": f"M-{i}", "character_id": character, "viewer_id": "VW-3320",
                           "sent_at": f"2026-11-01T09:00:{second:02d}", "body": "노래 불러 줘?", "topic_tags": ["노래"],
                           "donation_amount": 0, "is_question": True, "note": None}, ensure_ascii=False)

    async def send(origin, *texts):
        origin.received += 1
        await service._ingest_items([(origin, origin.received, lines(*texts))])

    async def go():
        a, b, quiet = Origin(), Origin(), Origin()
        assert service.due.complete(key), "a window no connection sent to (recovered at start) is complete"
        await send(a, line(1, 5))
        await send(b, line(2, 6))
        await send(quiet, line(3, 7, "CH-0008"))
        assert service.due.senders[key] == {a, b}
        assert not service.due.complete(key)
        await send(a, line(4, 31), line(5, 8, "CH-0011"))  # a is in the next window
        assert a.passed == {"CH-0007": start + step, "CH-0011": start}
        assert not service.due.complete(key), "b may still be sending"
        await send(b, line(6, 35, "CH-0008"))
        assert not service.due.complete(key), "another character's next window does not pass this one"
        b.received += 1  # a frame of b's is on its way to the worker
        b.closed = True
        assert not service.due.complete(key), "closed, but a frame is not absorbed yet"
        await service._ingest_items([(b, b.received, lines(line(7, 9)))])
        assert service.due.complete(key)
        assert not service.due.complete(("CH-0008", start)), "quiet sent to CH-0008's window and has not passed it"
        assert not service.due.complete(("CH-0011", start)), "a sent to it and has not passed it"
        a.closed = True
        assert service.due.complete(("CH-0011", start)), "closed with every frame absorbed"
        c = Origin()
        await send(c, line(8, 10, "CH-0015"))
        assert not service.due.complete(("CH-0015", start))
        arrived = [(c, 2, lines(line(9, 11, "CH-0015"))), (c, 3, lines(line(10, 12, "CH-0008"), line(11, 33, "CH-0015")))]
        assert not service.due.complete(("CH-0015", start), arrived[:1]), "its frame not absorbed yet holds this window only"
        assert service.due.complete(("CH-0015", start), arrived), "a frame of it that arrived holds the next window"
        assert not service.due.complete(("CH-0015", start), [(a, 9, lines(line(12, 40, "CH-0015")))]), "another connection's"

    asyncio.run(go())
    service.pool.shutdown()


def test_a_window_cheap_to_finish_is_finished_halfway_through_its_grace_though_a_sender_has_not_passed_it(tmp_path):
    """A sender that has not passed a window holds up its early finish only while finishing it could
    not be done by its due time (at the cost measured on earlier windows): past the middle of the
    grace, a cheap window is finished early anyway; a large one waits for its senders."""
    from web.live.intake import Origin
    from web.live.policy import SETTLE_S

    start = 1_793_491_200 * 10**9  # 2026-11-01T00:00:00Z: a window start
    key, step = ("CH-0007", start), 30 * 10**9
    now = [start + 10 * 10**9]
    service = worker_service(tmp_path, "midway.sqlite", lambda: now[0])

    line = _song_line

    async def go():
        a, b = Origin(), Origin()
        for origin, i in ((a, 1), (b, 2), (a, 3)):
            origin.received += 1
            await service._ingest_items([(origin, origin.received, lines(line(i, i)))])
            service.due.deadlines[key] = start + step + service.grace
        a.received += 1
        await service._ingest_items([(a, a.received, lines(line(4, 31)))])  # a passed it; b has not
        assert not service.due.complete(key)
        end = start + step
        assert service.due.ripe(end) == [], "not before its end and settle"
        assert service.due.ripe(end + int(SETTLE_S * 1e9)) == [], "b may still be sending"
        assert service.due.midway(key) == end + service.grace // 2
        assert service.due.cheap([key]), "three lines at the default cost"
        assert service.due.ripe(service.due.midway(key)) == [key]
        service.finishing.ns_per_line = service.grace  # as if each line took the whole grace to finish
        assert not service.due.cheap([key])
        assert service.due.ripe(service.due.midway(key)) == [], "too costly: it waits for its senders or its due time"
        b.closed = True
        assert service.due.ripe(end + int(SETTLE_S * 1e9)) == [key], "complete: finished early at once"
        service.finishing.ns_per_line = 1.0
        ticks = iter(range(service.due.midway(key), end + step, 1_000_000))  # a millisecond per reading
        service.finishing.clock = lambda: next(ticks)
        service.due.ranked_early.add(key)
        service.finishing.rank_early([key])
        assert key in service.finishing.early
        assert service.finishing.ns_per_line > 0.7 * 1.0, "the time this finish took was measured into the cost"
        assert service.due.ripe(service.due.midway(key)) == [], "finished already"

    asyncio.run(go())
    service.pool.shutdown()


def test_background_work_waits_from_shortly_before_a_windows_end_until_it_is_out(tmp_path):
    """The admin pages' warm-up shares the interpreter with the live worker: it is told to wait
    from QUIET_MARGIN_S before a window's end until that window is finished."""
    from web.admin import _warm
    from web.live.policy import QUIET_MARGIN_S

    now = [1_793_491_200 * 10**9]
    service = worker_service(tmp_path, "quiet.sqlite", lambda: now[0])
    margin = int(QUIET_MARGIN_S * 1e9)
    assert service.quiet(), "no window open"
    service.due.next_end = now[0] + margin + 10**9
    assert service.quiet()
    now[0] += 2 * 10**9  # within the margin
    assert not service.quiet()
    now[0] = service.due.next_end + 500_000_000  # ended, not out yet (the drive loop has not moved on)
    assert not service.quiet()
    service.pool.shutdown()

    answers = iter([False, False, True, True, False, True])
    loaded = []

    class Runs:
        def keys(self, domain):
            return ["a", "b", "c"] if domain == "live_pick" else []

        def load(self, domain, key):
            loaded.append((key, asked))

    asked = 0

    def quiet():
        nonlocal asked
        asked += 1
        return next(answers)

    _warm(type("State", (), {"runs": Runs()})(), quiet, wait_s=0)
    assert loaded == [("a", 3), ("b", 4), ("c", 6)], "each run waits until it is quiet"


def test_sockets_offer_compression_only_off_the_loopback_address():
    """A console on this machine gets nothing back for a deflated 3 MB frame; one across a network does."""
    from web.config import WebConfig

    for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"):
        assert not WebConfig(host=host).compress_frames, host
    for host in ("0.0.0.0", "192.168.0.10", "::", "verdicts.example"):
        assert WebConfig(host=host).compress_frames, host


def test_a_window_due_while_it_is_being_finished_goes_out_once_stored_and_a_line_after_that_is_late(tmp_path):
    """Windows that end together take longer than the grace to finish: a window found due with no line
    of its among the frames arrived (`_clear`) goes out as soon as it is stored — cleared before or
    after its store — and a line of it absorbed after that is judged late, never in the pushed window."""
    start = 1_793_491_200 * 10**9  # 2026-11-01T00:00:00Z: a window start
    step = 30 * 10**9
    key = ("CH-0007", start)

    line = _song_line

    for cleared_first in (True, False):
        now = [start + 10 * 10**9]
        service = worker_service(tmp_path, f"out_{cleared_first}.sqlite", lambda: now[0])
        feed(service, [line(i, i) for i in range(1, 6)])
        now[0] = start + step + service.grace  # due while the worker finishes it
        if cleared_first:
            service.finishing.clear({key})
            assert service.publisher.windows == 0, "nothing stored yet: nothing pushed"
        service.finishing.rank_early([key])
        assert service.publisher.windows == int(cleared_first), "pushed as soon as stored, once cleared"
        if not cleared_first:
            service.finishing.clear({key})
        assert service.publisher.windows == 1 and key in service.finishing.out_early
        seq = service.finishing.early[key][1]["push"]
        assert service.finishing.stored_push == seq
        feed(service, [line(9, 29)])  # sent inside the window, absorbed after it went out
        assert service.finishing.finish([key]) == [], "not pushed again, nor finished again"
        assert service.publisher.windows == 1 and key not in service.finishing.out_early and key in service.buffer.finished
        with service.engine.connect() as conn:
            assert sorted(conn.execute(sa.select(store.verdicts.c.msg_id)).scalars()) == [f"M-{i}" for i in range(1, 6)]
            assert conn.execute(sa.select(store.late.c.msg_id)).scalars().all() == ["M-9"]
            assert conn.execute(sa.select(sa.func.count()).select_from(store.pushes)).scalar_one() == 1
        service.pool.shutdown()


def test_a_waiting_lines_evidence_is_checked_as_it_arrives_and_what_its_place_adds_when_it_finishes(tmp_path, monkeypatch):
    """Checks 6 and 7 walk a waiting line's rank-free evidence as it arrives and, when its window
    finishes, only the count its place adds: a wrong value in either part is named in the window's
    checks, as when the window's rows are checked whole."""
    from web.live.windows import check_part
    from rules.live_pick import engine
    from tests.live.console import sample_lines

    real_bases, real_ranked = engine.ranked_bases, engine.ranked
    wrong = {}

    def bases(w, config):  # the first waiting line's donation cited wrong
        out = real_bases(w, config)
        if len(out) and "base" not in wrong:
            wrong["base"] = w["msg_id"].iloc[0]
            out[0][0][0] = {**out[0][0][0], "value": -1}
        return out

    def ranked(base, verdict, rank, n, config):  # the line ranked second cites a wrong count
        cited, summary = real_ranked(base, verdict, rank, n, config)
        return ([*cited[:-1], {**cited[-1], "value": n + 1}] if rank == 2 else cited), summary

    monkeypatch.setattr(engine, "ranked_bases", bases)
    monkeypatch.setattr(engine, "ranked", ranked)
    service = worker_service(tmp_path, "evidence.sqlite", lambda: 2_000_000_000 * 10**9, late_horizon_s=SAMPLE_HORIZON)
    feed(service, sample_lines())
    key = next(k for k, w in service.buffer.open.items() if wrong["base"] in {m["msg_id"] for m in w.waiting})
    window = service.buffer.open[key]
    fin = __import__("web.live.windows", fromlist=["finish"]).finish([window], service.rules)[0]
    second = next(r["msg_id"] for r in fin.rows if r["rank_in_window"] == 2)
    c07 = next(c for c in fin.checks if c.id == "7.evidence_values")
    assert not c07.passed and sorted(c07.failing_ids) == sorted({wrong["base"], second})
    chat = pd.concat(window.filtered_chat + window.survivors, ignore_index=True)
    whole = next(c for c in check_part(chat, fin.rows, window.refs, service.rules) if c.id == "7.evidence_values")
    assert sorted(whole.failing_ids) == sorted(c07.failing_ids)
    assert [c.passed for c in fin.checks if c.id != "7.evidence_values"] == \
        [c.passed for c in check_part(chat, fin.rows, window.refs, service.rules) if c.id != "7.evidence_values"]
    service.pool.shutdown()
