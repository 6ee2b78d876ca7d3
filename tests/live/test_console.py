"""The live console service for real: `verdicts serve` on a free loopback port, driven by
WebSocket clients (the `websockets` library). Windows whose end has already passed finish as
soon as their lines are in, so nothing here waits 30 seconds for a window."""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.error
import urllib.request
from collections import Counter

import pytest
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

from evals import domains
from tests.conftest import SEEDS
from tests.live.console import Service, as_frames, ingest, key, pushed, sample_lines, until_resumed, window_frames, windows

pytestmark = pytest.mark.slow
TOKEN = "s3cret-token"


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    """One service fed the whole sample (malformed lines included), and everything it said."""
    tmp = tmp_path_factory.mktemp("console")
    service = Service(tmp).start()
    try:
        lines = sample_lines()
        frames = as_frames(lines) + ["42", "{\"msg_id\": \"MSG-TRUNCATED\", \"sent_at\": "]
        told = asyncio.run(ingest(service.ws, frames))
        expected_windows = len({(r["character_id"], r["window_start"]) for r in batch().rows})
        got = asyncio.run(windows(service.ws, lambda fs: len(window_frames(fs)) >= expected_windows, after="none/none"))
        yield service, lines, frames, told, window_frames(got)
    finally:
        service.stop()


def batch():
    """What `verdicts judge live_pick --tags model` writes for the sample."""
    return domains.get("live_pick").judge_dir(SEEDS / "live_pick", tags="model")


def test_window_frames_carry_the_batch_judges_verdicts_field_for_field(sample_run):
    _, _, _, _, frames = sample_run
    expected = {r["msg_id"]: r for r in batch().rows}
    streamed = [r for f in frames for r in f["verdicts"]]
    assert Counter(r["msg_id"] for r in streamed) == Counter(list(expected)), "every judged line once, none missing"
    for r in streamed:
        # the service judges with the stored sheet versions (version 1: the same file, as loaded);
        # a plain file judge writes no version
        assert r == {**expected[r["msg_id"]], "sheet_version": 1}, r["msg_id"]
    for f in frames:
        assert {r["window_start"] for r in f["verdicts"]} <= {f["window_start"]}
        assert [c["passed"] for c in f["checks"]] and all(c["passed"] for c in f["checks"]), f["checks"]
        assert f["latency_ms"] >= 0 and f["lines"] >= len(f["verdicts"])
    ends = [(f["window_end_ns"], f["character_id"]) for f in frames]
    assert ends == sorted(ends), "frames come in window-end order"
    assert [f["seq"] for f in frames] == sorted(f["seq"] for f in frames)


def test_malformed_frames_are_quarantined_as_the_batch_path_does_and_the_socket_survives(sample_run):
    _, lines, frames, told, _ = sample_run
    assert told["acked"] == len(frames), "every frame acknowledged: the socket stayed open to the end"
    expected = batch().quarantine
    expected = expected[expected["dataset"] == "live_chat"]
    got = [(q["msg_id"], q["reason_code"]) for q in told["quarantined"]]
    # the sample's bad lines, plus the two extra frames (a JSON number, a truncated object)
    assert sorted(got[:-2], key=str) == sorted(zip(expected["id"], expected["reason_code"]), key=str)
    assert [c for _, c in got[-2:]] == ["schema", "invalid_json"] or [c for _, c in got[-2:]] == ["invalid_json", "schema"] \
        or {c for _, c in got[-2:]} <= {"schema", "invalid_json"}
    by_id = dict(zip(expected["id"], expected["reason"]))
    for q in told["quarantined"][:-2]:
        # the same reason; a line number names the landing row instead of the file's line
        assert re.sub(r"line \d+", "line N", q["reason"]) == re.sub(r"line \d+", "line N", by_id[q["msg_id"]])


def test_resume_after_a_window_sends_exactly_the_missing_ones(sample_run):
    service, _, _, _, frames = sample_run
    cut = 3
    again = window_frames(asyncio.run(windows(service.ws, lambda fs: any(f["type"] == "resumed" for f in fs),
                                              after=key(frames[cut - 1]))))
    assert again == frames[cut:], "the windows after the one named, each exactly as first sent"
    # the same by a resume message on an open socket
    both = asyncio.run(windows(service.ws, lambda fs: sum(f["type"] == "resumed" for f in fs) >= 2,
                               after=key(frames[-1]), send=[{"type": "resume", "after": key(frames[-3])}]))
    assert window_frames(both) == frames[-2:]


def test_a_late_line_never_changes_its_window_and_is_judged_in_a_follow_up(sample_run):
    service, lines, _, _, frames = sample_run
    first = next(f for f in frames if f["verdicts"])
    straggler = json.loads(next(t for t in lines if first["verdicts"][0]["msg_id"] in t))
    straggler["msg_id"] = "MSG-LATE-0001"
    straggler["donation_amount"] = 100000

    async def send_and_watch():
        async with websockets.connect(service.ws + "/ws/windows?after=" + key(frames[-1])) as ws:
            await until_resumed(ws)
            told = await ingest(service.ws, [json.dumps(straggler, ensure_ascii=False)])
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
                if frame["type"] == "late":
                    return told, frame

    told, late = asyncio.run(send_and_watch())
    assert told["acked"] == 1 and not told["quarantined"]
    assert late["character_id"] == first["character_id"] and late["window_start"] == first["window_start"]
    assert [r["msg_id"] for r in late["verdicts"]] == ["MSG-LATE-0001"] and late["lines"] == 1
    seen = asyncio.run(windows(service.ws, lambda fs: any(f["type"] == "resumed" for f in fs), after="x/y"))
    assert window_frames(seen) == frames, "pushed windows unchanged"
    req = urllib.request.Request(service.http + "/live/pickup", data=b'{"msg_id": "MSG-LATE-0001"}', method="POST",
                                 headers={"content-type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(req)
    assert refused.value.code == 404  # a late line is not part of any window's verdicts


def test_the_status_names_the_judging_helper_and_counts_what_was_judged(sample_run):
    service, _, _, _, frames = sample_run
    with urllib.request.urlopen(service.http + "/live/status") as r:
        status = json.loads(r.read())
    assert status["judge_helper"] in ("ready", "starting", "off")  # on by default where there is more than one core
    assert status["windows"] >= 1 and status["judged"] >= 1 and status["open_windows"] >= 0


def test_a_console_on_the_loopback_address_is_sent_frames_uncompressed(sample_run):
    """The client offers compression (as browsers do); `verdicts serve` on 127.0.0.1 declines it."""
    service = sample_run[0]

    async def negotiated():
        async with websockets.connect(service.ws + "/ws/windows?after=x/y", compression="deflate") as ws:
            return ws.protocol.extensions

    assert asyncio.run(negotiated()) == []


def test_every_finished_window_has_its_audit_row_with_the_windows_counts(sample_run):
    """One audit row per window the service finished, written with the window: what the Dagster
    record shows for it; late lines are counted on their window's row as they are recorded."""
    import sqlalchemy as sa

    from live import store

    service, lines, _, _, frames = sample_run
    last = frames[-1]
    straggler = json.loads(next(t for t in lines if last["verdicts"][0]["msg_id"] in t))
    straggler["msg_id"] = "MSG-LATE-AUDIT"

    async def send_late():
        async with websockets.connect(service.ws + "/ws/windows?after=" + key(frames[-1])) as ws:
            await until_resumed(ws)
            await ingest(service.ws, [json.dumps(straggler, ensure_ascii=False)])
            while "MSG-LATE-AUDIT" not in await asyncio.wait_for(ws.recv(), 10):
                pass

    asyncio.run(send_late())
    engine = sa.create_engine(f"sqlite:///{service.tmp / 'warehouse.sqlite'}")
    with engine.connect() as conn:
        audit = {(a.character_id, int(a.window_ns)): a for a in conn.execute(sa.select(store.audit))}
        stored = {(w.character_id, int(w.window_ns)): w for w in conn.execute(sa.select(store.windows))}
        late = Counter((c, int(w)) for c, w in conn.execute(sa.select(store.late.c.character_id, store.late.c.window_ns)))
    engine.dispose()
    assert len(audit) == len(frames) and set(audit) == set(stored)
    assert late[(last["character_id"], last["window_end_ns"] - 30 * 10**9)] >= 1
    for f in frames:
        k = (f["character_id"], f["window_end_ns"] - 30 * 10**9)
        a = audit[k]
        assert (a.lines, a.judged, a.quarantined, a.late) == (f["lines"], len(f["verdicts"]), len(f["quarantined"]), late[k]), k
        assert a.latency_ms == stored[k].latency_ms and a.latency_ms > 0
        assert (a.tagger, a.summary_writer, a.checks_run, store.load_json(a.checks_failed)) == ("kiwi", "template", 15, {})
        assert a.summaries_kept == 0 and a.summaries_fallback == 0


def test_pick_up_a_skipped_line_is_stored_and_pushed(sample_run):
    service, _, _, _, frames = sample_run
    skipped = next(r for f in frames for r in f["verdicts"] if r["verdict"] == "다음 차례로 미룸" or r["verdict"] == "방금 답한 주제")

    async def pick_and_watch():
        async with websockets.connect(service.ws + "/ws/windows?after=" + key(frames[-1])) as ws:
            await until_resumed(ws)
            req = urllib.request.Request(service.http + "/live/pickup", data=json.dumps({"msg_id": skipped["msg_id"]}).encode(),
                                         method="POST", headers={"content-type": "application/json"})
            out = await asyncio.to_thread(lambda: json.loads(urllib.request.urlopen(req).read()))
            pushed = json.loads(await asyncio.wait_for(ws.recv(), 10))
            while pushed["type"] in ("tick", "chat"):  # what every console is sent every few seconds
                pushed = json.loads(await asyncio.wait_for(ws.recv(), 10))
            return out, pushed

    out, pushed = asyncio.run(pick_and_watch())
    assert out["msg_id"] == pushed["msg_id"] == skipped["msg_id"] and pushed["type"] == "pickup"
    assert out["verdict"] == skipped["verdict"] and out["window_start"] == skipped["window_start"] and out["picked_at_ns"] > 0
    # a console resuming from before that window gets the pick-up after the windows
    seen = asyncio.run(windows(service.ws, lambda fs: any(f["type"] == "resumed" for f in fs), after="x/y"))
    assert [f["msg_id"] for f in seen if f["type"] == "pickup"] == [skipped["msg_id"]]
    # closing the broadcast counts it as answered (on a copy: later tests re-judge with this viewer state)
    import sqlite3

    import sqlalchemy as sa

    from live import store
    from live.judge import close_broadcast
    from rules.live_pick.config import load_config

    copy = service.tmp / "closed.sqlite"
    with sqlite3.connect(service.tmp / "warehouse.sqlite") as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    engine = sa.create_engine(f"sqlite:///{copy}")
    done = close_broadcast(engine, skipped["character_id"], load_config(), time.time_ns)
    picks = sum(r["verdict"] == "지금 답변할 질문" for f in frames if f["character_id"] == skipped["character_id"] for r in f["verdicts"])
    assert done["answered"] == picks + 1
    with engine.connect() as conn:
        state = store.load_json(conn.execute(sa.select(store.viewer_state.c.row)
                                             .where(store.viewer_state.c.viewer_id == skipped["viewer_id"])).scalar_one())
    assert state["last_replied_at"] is not None
    engine.dispose()


def test_token_origin_and_frame_size_refuse_what_they_should(tmp_path):
    service = Service(tmp_path, token=TOKEN).start()
    try:
        async def attempts():
            for path, headers in (("/ws/ingest", {}), ("/ws/ingest", {"Authorization": "Bearer wrong"}),
                                  ("/ws/windows", {}), ("/ws/windows", {"Authorization": f"Bearer {TOKEN}", "Origin": "http://evil.example"})):
                with pytest.raises(InvalidStatus) as refused:
                    async with websockets.connect(service.ws + path, additional_headers=headers):
                        pass
                assert refused.value.response.status_code == 403, path
            # the right token, as a header or a query parameter, and the service's own origin
            async with websockets.connect(service.ws + f"/ws/windows?token={TOKEN}&after=x/y",
                                          additional_headers={"Origin": service.http}) as ws:
                told = json.loads(await ws.recv())
                assert told["type"] == "too_old" and "x/y" in told["reason"], "a window never sent: said so, not the whole store"
                assert json.loads(await ws.recv())["type"] == "resumed"
            async with websockets.connect(service.ws + "/ws/ingest", additional_headers={"X-Verdicts-Token": TOKEN},
                                          max_size=None) as ws:
                await ws.send("x" * (64 * 1024 + 1))
                with pytest.raises(ConnectionClosed) as closed:
                    await asyncio.wait_for(ws.recv(), 10)
                assert closed.value.rcvd.code == 1009 and "65536" in closed.value.rcvd.reason, closed.value.rcvd
            told = await asyncio.to_thread(lambda: asyncio.run(ingest(service.ws, ["{}"], headers={"Authorization": f"Bearer {TOKEN}"})))
            assert told["acked"] == 1 and told["quarantined"][0]["reason_code"] == "schema"

        asyncio.run(attempts())
        for url, status in ((service.http + "/live", 403), (service.http + f"/live?token={TOKEN}", 200)):
            try:
                with urllib.request.urlopen(url) as r:
                    got, csp = r.status, r.headers["content-security-policy"]
            except urllib.error.HTTPError as e:
                got, csp = e.code, e.headers["content-security-policy"]
            assert got == status and "script-src 'self'" in csp
    finally:
        service.stop()


def test_a_restart_after_kill_9_loses_no_acknowledged_line(tmp_path):
    """Lines of open windows are acknowledged, the service is killed before any window finishes,
    and the restarted service finishes them from the landing table; consoles resume with after."""
    service = Service(tmp_path, window_seconds=4).start()
    try:
        sample = [json.loads(t) for t in sample_lines() if t.startswith("{") and '"CH-0007"' in t][:30]
        now = time.time()
        window_end = (int(now) // 4 + 2) * 4  # the next window but one: still open when we kill
        lines = []
        for i in range(120):
            line = dict(sample[i % len(sample)])
            line["msg_id"] = f"MSG-KILL-{i:04d}"
            sent = window_end - 4 + (i % 4)  # inside that window, written as naive Seoul time (UTC+9)
            line["sent_at"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sent + 9 * 3600))
            lines.append(json.dumps(line, ensure_ascii=False))
        frames = [as_frames(lines[i:i + 10])[0] for i in range(0, len(lines), 10)]
        told = asyncio.run(ingest(service.ws, frames))
        assert told["acked"] == len(frames)
        assert time.time() < window_end, "the window must still be open when the service dies"
        service.kill()
        service.start()
        got = window_frames(asyncio.run(windows(service.ws, lambda fs: sum(len(f["verdicts"]) for f in window_frames(fs))
                                                + sum(len(f["quarantined"]) for f in window_frames(fs)) >= len(lines),
                                                after="x/y", timeout=40)))
        judged = [r["msg_id"] for f in got for r in f["verdicts"]]
        quarantined = [q["msg_id"] for f in got for q in f["quarantined"]]
        assert Counter(judged + quarantined) == Counter(f"MSG-KILL-{i:04d}" for i in range(120))
        assert len(got) == 1 and got[0]["lines"] == 120 and all(c["passed"] for c in got[0]["checks"])
        assert "recovered 1 open windows from the landing table" in service.log.read_text()
    finally:
        service.stop()


def test_the_dagster_run_re_judges_every_streamed_window_and_names_a_difference(sample_run, tmp_path):
    """The sensor asks for the service's windows, the run re-judges them with the batch path; the
    check passes, and fails naming the window and msg_id once a stored verdict is altered."""
    import sqlite3

    import sqlalchemy as sa
    from dagster import DagsterInstance, RunRequest, build_sensor_context

    from live import store
    from orchestration.live_jobs import MATCHES_BATCH, live_matches_batch, live_pick_window_sensor, live_pick_windows
    from assets.resources.raw_files import RawFilesResource
    from assets.resources.warehouse import WarehouseResource

    service, _, _, _, frames = sample_run
    copy = tmp_path / "copy.sqlite"
    with sqlite3.connect(service.tmp / "warehouse.sqlite") as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    warehouse = WarehouseResource(url=f"sqlite:///{copy}")
    resources = {"warehouse": warehouse, "raw_files": RawFilesResource(root=str(SEEDS))}
    instance = DagsterInstance.ephemeral()

    def run_sensor_and_job():
        request = live_pick_window_sensor(build_sensor_context(instance=instance, resources={"warehouse": warehouse}))
        assert isinstance(request, RunRequest), request
        assert live_pick_windows.execute_in_process(run_config=request.run_config, resources=resources, instance=instance).success
        return request.run_config["ops"]["judge_closed_windows"]["config"]["verify"]

    verified = run_sensor_and_job()
    assert len(verified) == len(frames)
    with warehouse.engine.connect() as conn:
        outcomes = conn.execute(sa.select(store.rejudged.c.matches, store.rejudged.c.differing)).all()
    assert len(outcomes) == len(frames) and all(m for m, _ in outcomes), outcomes
    assert live_matches_batch(warehouse=warehouse).passed

    victim = next(r for f in frames for r in f["verdicts"] if r["rank_in_window"] == 1)
    with warehouse.engine.begin() as conn:
        conn.execute(sa.update(store.verdicts).where(store.verdicts.c.msg_id == victim["msg_id"])
                     .values(row={**victim, "rank_in_window": 2}))
        conn.execute(sa.delete(store.rejudged))
    run_sensor_and_job()
    result = live_matches_batch(warehouse=warehouse)
    assert not result.passed and victim["msg_id"] in result.description and victim["window_start"] in result.description
    evaluation = instance.event_log_storage.get_latest_asset_check_execution_by_key(
        [next(iter(live_matches_batch.check_keys))])
    assert evaluation, f"the run reported {MATCHES_BATCH} to the instance"


def test_a_resuming_console_gets_windows_and_late_frames_as_first_pushed_in_push_order(sample_run):
    """Late frames interleaved with windows: a console resuming gets each window and late frame
    pushed after the window it names, in the order they were pushed live, with the same content,
    once each; the same after a restart (rebuilt from the store) and by a resume message."""
    service, lines, _, _, frames = sample_run

    def line(of: dict, msg_id: str, **change) -> str:
        row = json.loads(next(t for t in lines if of["msg_id"] in t))
        return json.dumps({**row, "msg_id": msg_id, **change}, ensure_ascii=False)

    late_1 = line(frames[0]["verdicts"][0], "MSG-RESUME-LATE-1")
    fresh = line(frames[1]["verdicts"][0], "MSG-RESUME-FRESH", sent_at="2026-09-08T23:59:40")  # a new window, long over
    late_2 = line(frames[2]["verdicts"][0], "MSG-RESUME-LATE-2")

    async def watch_live():
        async with websockets.connect(service.ws + "/ws/windows?after=" + key(frames[-1]), max_size=None) as ws:
            before = pushed(await until_resumed(ws))  # late frames of earlier tests
            live = []
            for text, msg_id in ((late_1, "MSG-RESUME-LATE-1"), (fresh, "MSG-RESUME-FRESH"), (late_2, "MSG-RESUME-LATE-2")):
                told = await ingest(service.ws, [text])
                assert told["acked"] == 1 and not told["quarantined"], told
                while not any(msg_id in [r["msg_id"] for r in f.get("verdicts", [])] for f in live):
                    live += pushed([json.loads(await asyncio.wait_for(ws.recv(), 15))])
            return before, live

    before, live = asyncio.run(watch_live())
    assert [f["type"] for f in live] == ["late", "window", "late"], "each sent on its own, in that order"
    assert frames[-1]["seq"] < live[0]["seq"] < live[1]["seq"] < live[2]["seq"], "numbered in the order they went out"
    assert live[0]["after"] == frames[-1]["push"] and live[2]["after"] == live[1]["push"], "each judged after the window pushed before it"
    assert [(f["character_id"], f["window_start"]) for f in (live[0], live[2])] == [
        (frames[0]["character_id"], frames[0]["window_start"]), (frames[2]["character_id"], frames[2]["window_start"])]
    expected = before + live

    def history(after: str, send=()) -> list[list[dict]]:
        got = asyncio.run(windows(service.ws, lambda fs: sum(f["type"] == "resumed" for f in fs) > len(send),
                                  after=after, send=list(send)))
        parts, part = [], []
        for f in got:
            if f["type"] == "resumed":
                parts.append(pushed(part))
                part = []
            else:
                part.append(f)
        return parts

    assert history(key(frames[-1])) == [expected]
    cut = len(frames) - 3
    assert history(key(frames[cut - 1])) == [frames[cut:] + expected]
    service.stop()  # rebuilt from the store, not from what the service remembers
    service.start()
    assert history(key(frames[-1])) == [expected]
    assert history(key(live[1]), send=[{"type": "resume", "after": key(frames[-1])}]) == [[live[2]], expected]
