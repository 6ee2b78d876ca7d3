"""Hostile ingest frames against the live service, on SQLite and on PostgreSQL: each ends in a
quarantine row with its own reason and an answer to the sender, no neighbour and no other
connection is failed, an acknowledgement always means stored, and the counts reconcile."""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest
import sqlalchemy as sa
import websockets
from websockets.exceptions import ConnectionClosed

from live import landing, store
from live.ingest_client import IngestClient
from web.live.outbox import Outbox
from tests.live.console import InProcess, retimed

pytestmark = pytest.mark.slow
WINDOW_S = 2


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"hostile_{request.param}")
    url = request.getfixturevalue("module_postgres_url") if request.param == "postgresql" else None
    server = InProcess(tmp, warehouse_url=url, window_seconds=WINDOW_S).start()
    yield server
    server.stop()


def chat(msg_id: str, character: str = "CH-0007", body: str = "노래 불러 줘?", **more) -> str:
    row = {"msg_id": msg_id, "character_id": character, "viewer_id": "VW-1043", "sent_at": "2026-11-01T09:00:00",
           "body": body, "topic_tags": ["노래"], "donation_amount": 0, "is_question": True, "note": None}
    row.update(more)
    return retimed([json.dumps(row, ensure_ascii=False)], time.time_ns())[0]


async def send(url: str, frames: list, read: bool = True) -> dict:
    """Frames (text, or bytes for a binary frame) on one ingest socket; what it was told until every
    frame is acknowledged, an error came, or the socket closed."""
    told = {"ack": 0, "quarantined": [], "error": None, "closed": None}
    async with websockets.connect(url + "/ws/ingest", max_size=None) as ws:
        for f in frames:
            await ws.send(f)
        if not read:
            return told
        try:
            while told["ack"] < len(frames) and told["error"] is None:
                m = json.loads(await asyncio.wait_for(ws.recv(), 30))
                if m["type"] == "ack":
                    told["ack"] = m["through"]
                elif m["type"] == "quarantined":
                    told["quarantined"].append(m)
                elif m["type"] == "error":
                    told["error"] = m
        except ConnectionClosed as exc:
            told["closed"] = exc.rcvd
    return told


def landed(server, msg_id_like: str | None = None) -> list:
    engine = sa.create_engine(server.config.warehouse_url)
    q = sa.select(store.landing.c.seq, store.landing.c.text, store.landing.c.raw, store.landing.c.msg_id,
                  store.quarantine.c.reason_code).join(store.quarantine, store.quarantine.c.seq == store.landing.c.seq, isouter=True)
    if msg_id_like:
        q = q.where(store.landing.c.text.like(f"%{msg_id_like}%"))
    with engine.connect() as conn:
        rows = conn.execute(q.order_by(store.landing.c.seq)).all()
    engine.dispose()
    return rows


def reconciled(server) -> dict:
    """The store's figures once every window is finished (received = judged + quarantined + duplicates + late)."""
    deadline = time.time() + 30
    while True:
        s = server.status()
        if s["pending"] == 0 or time.time() > deadline:
            break
        time.sleep(0.3)
    assert s["received"] == s["judged"] + s["quarantined"] + s["duplicates"] + s["late"] + s["pending"], s
    for name, c in s["characters"].items():
        assert c["received"] == c["judged"] + c["quarantined"] + c["duplicates"] + c["late"] + c["pending"], (name, c)
    return s


def test_a_lone_surrogate_in_one_element_fails_no_neighbour_and_is_stored_as_sent(served):
    good = [chat(f"SUR-{i:03d}") for i in range(200)]
    bad = good[96].replace("노래 불러 줘?", "노래\\ud800")  # a lone surrogate, escaped as JSON writes it
    lines = good[:96] + [bad] + good[97:]
    client = IngestClient(served.ws + "/ws/ingest", progress=lambda s: None)
    try:
        client.send(lines)
        assert client.wait_acked(60)
    finally:
        client.close()
    c = client.summary()
    assert (c["sent"], c["acknowledged"], c["errors"]) == (200, 200, 0)
    assert [n["reason_code"] for n in client.quarantined if n.get("msg_id") == "SUR-096"] == ["lone_surrogate"]
    rows = landed(served, "SUR-")
    assert [r.text for r in rows] == lines, "every line stored once, as sent (not written again)"
    assert [r.reason_code for r in rows if r.reason_code] == ["lone_surrogate"]
    reconciled(served)


def test_a_nul_anywhere_is_quarantined_on_its_own(served):
    nul = "\\u0000"  # the JSON escape of U+0000, as a sender writes it
    frames = [chat("NUL-1").replace('"NUL-1"', f'"NUL-1{nul}"'), chat("NUL-2").replace('"CH-0007"', f'"CH-0007{nul}"'),
              chat("NUL-3").replace("노래 불러", f"노래{nul} 불러"), chat("NUL-4").replace("노래 불러", "노래\x00불러"),
              chat("NUL-5", body="노래 \\u0000 불러 줘?"),
              "[" + chat("NUL-6") + "," + chat("NUL-7").replace("노래 불러", f"노래{nul}불러") + "]"]
    told = asyncio.run(send(served.ws, frames))
    assert told["ack"] == len(frames) and told["error"] is None
    codes = {re.search(r"NUL-\d", r.text).group(): r.reason_code for r in landed(served, "NUL-")}
    assert codes == {"NUL-1": "nul_character", "NUL-2": "nul_character", "NUL-3": "nul_character", "NUL-4": "nul_character",
                     "NUL-5": None, "NUL-6": None, "NUL-7": "nul_character"}, "a backslash and u0000 is text, not a NUL"
    raw = [r for r in landed(served, "NUL-4")][0]
    assert raw.raw == frames[3].encode("utf-8") and "\\x00" in raw.text, "the bytes as sent, beside a text the store can hold"
    s = reconciled(served)
    assert s["characters"]["CH-0007"]["judged"] >= 2


def test_a_frame_nested_thirty_thousand_deep_is_one_too_deep_line_and_the_socket_lives(served):
    deep = "[" * 30000 + "]" * 30000
    told = asyncio.run(send(served.ws, [deep, '{"msg_id": "DEEP-2", "x": ' + "[" * 3000 + "]" * 3000 + "}", chat("DEEP-OK")]))
    assert told["ack"] == 3 and told["closed"] is None
    assert [q["reason_code"] for q in told["quarantined"]] == ["too_deep", "too_deep"]
    reconciled(served)


def test_binary_frames_are_read_as_utf8_or_quarantined_with_their_bytes(served):
    broken = b'{"msg_id": "BIN-1", "body": "\xff\xfe"}'
    told = asyncio.run(send(served.ws, [broken, chat("BIN-2").encode("utf-8")]))
    assert told["ack"] == 2
    assert [q["reason_code"] for q in told["quarantined"]] == ["not_utf8"]
    rows = landed(served, "BIN-")
    assert rows[0].raw == broken and rows[0].reason_code == "not_utf8" and "\\xff" in rows[0].text
    assert rows[1].reason_code is None, "a binary frame of UTF-8 text is judged as a text frame"


def test_an_array_element_is_judged_as_the_same_line_in_an_object_frame(served):
    odd = '{"msg_id":"ARR-1","character_id":"CH-0007","viewer_id":"VW-1","sent_at":"2026-11-01T09:00:00","body":"x",' \
          '"topic_tags":null,"donation_amount":1e400,"is_question":true}'
    spaced = chat("ARR-2").replace(",", " ,  ")
    told_array = asyncio.run(send(served.ws, [f"[ {odd} ,\n{spaced} ]"]))
    told_object = asyncio.run(send(served.ws, [odd.replace("ARR-1", "ARR-3")]))
    assert [q["reason_code"] for q in told_array["quarantined"]] == [q["reason_code"] for q in told_object["quarantined"]] \
        == ["non_finite_number"]
    assert [r.text for r in landed(served, "ARR-")[:2]] == [odd, spaced], "each element as it stood in the frame"


def test_a_frame_over_the_limit_is_refused_by_the_protocol_layer(served):
    told = asyncio.run(send(served.ws, ["x" * (served.config.max_frame_bytes + 1)]))
    assert told["closed"] is not None and told["closed"].code == 1009 and told["ack"] == 0


def test_windows_far_from_the_clock_and_characters_without_a_sheet_open_nothing(served):
    """A year-2100 line, a year-2000 line and lines of characters with no sheet (markup, a slash, a
    NUL escape) are quarantined, open no window and reach consoles only in the panel, with their text."""
    far = [chat(f"FAR-{i}", viewer_id="VW-NEW").replace(time.strftime("%Y"), year, 1) for i, year in ((1, "2100"), (2, "2000"))]
    strangers = [chat("WHO-1", character="<b>CH</b>"), chat("WHO-2", character="CH-0007/x"), chat("WHO-3", character="CH-9999")]
    opened = served.status()["open_windows"]

    async def watch():
        async with websockets.connect(served.ws + "/ws/windows", max_size=None) as ws:
            while json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] != "resumed":
                pass
            told = await send(served.ws, ["[" + ",".join(far + strangers) + "]"])
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
                if frame["type"] == "quarantine":
                    return told, frame
                # windows of the lines earlier tests sent may still come; none of these lines is in one
                assert not {r["msg_id"] for r in frame.get("verdicts", [])} & {"FAR-1", "FAR-2", "WHO-1", "WHO-2", "WHO-3"}

    told, panel = asyncio.run(watch())
    assert told["ack"] == 1
    codes = {q["msg_id"]: q["reason_code"] for q in told["quarantined"]}
    assert codes == {"FAR-1": "window_out_of_range", "FAR-2": "window_out_of_range", "WHO-1": "unknown_character",
                     "WHO-2": "unknown_character", "WHO-3": "unknown_character"}
    # windows of earlier tests' lines may close meanwhile: none of these lines' windows is among the open ones
    now_ms = time.time() * 1000
    open_now = served.status()["open"]
    assert len(open_now) <= opened and all(w["character_id"] == "CH-0007" and abs(w["window_ms"] - now_ms) < 3600_000
                                           for w in open_now), "no window opened"
    assert sorted(q["msg_id"] for q in panel["lines"]) == sorted(codes) and all(q["text"] for q in panel["lines"])


def test_ten_frames_of_zeros_are_ten_rows_and_an_honest_sender_is_answered(served):
    zeros = "[" + ",".join("0" * 1 for _ in range(30000)) + "]"
    before = len(landed(served))
    told = asyncio.run(send(served.ws, [zeros] * 10))
    assert told["ack"] == 10 and [q["reason_code"] for q in told["quarantined"]] == ["too_many_lines"] * 10
    assert len(landed(served)) == before + 10
    assert asyncio.run(send(served.ws, [chat("HONEST-1")]))["ack"] == 1


def test_a_frame_that_cannot_be_stored_is_an_error_never_an_acknowledgement(served, monkeypatch):
    """One frame's store fails (once): its sender is told, nothing after it on that socket is
    acknowledged, the socket closes; the client sends it and the later frames again, and every
    line ends stored exactly once. Other frames of the same batch are stored."""
    real = landing.land
    failed = []

    def land(engine, lines, *a, **k):
        if any("FAIL-050" in line["text"] for line in lines) and len(failed) < 2:  # the batch, then the frame alone
            failed.append(len(lines))
            raise RuntimeError("the store refused this frame")
        return real(engine, lines, *a, **k)

    monkeypatch.setattr(landing, "land", land)
    lines = [chat(f"FAIL-{i:03d}") for i in range(120)]
    client = IngestClient(served.ws + "/ws/ingest", progress=lambda s: None)
    try:
        for i in range(0, len(lines), 10):
            client.send(lines[i:i + 10])
        assert client.wait_acked(60)
    finally:
        client.close()
    c = client.summary()
    assert failed[-1] == 10, "alone, the frame failed again; its neighbours in the batch were stored"
    assert c["errors"] == 1 and c["resent"] >= 10 and c["acknowledged"] == c["sent"] == 120
    rows = landed(served, "FAIL-")
    assert sorted(r.text for r in rows) == sorted(lines), "each line stored once, the frames sent again recognised"
    assert not [r for r in rows if r.reason_code == "duplicate_id"]
    reconciled(served)


def test_frames_resent_from_the_store_are_the_bytes_first_sent(served):
    """After a restart (frames read back from the store, not memory), a console that resumes from the
    start of the previous run is sent every frame byte for byte as first sent."""
    async def first_run():
        async with websockets.connect(served.ws + "/ws/windows", max_size=None) as ws:
            got = []
            while True:
                t = await asyncio.wait_for(ws.recv(), 10)
                if json.loads(t)["type"] == "resumed":
                    return got, json.loads(t)
                got.append(t)

    asyncio.run(send(served.ws, [chat("BYTES-1"), chat("BYTES-2", body="😀 \"따옴표\" <b>")]))
    deadline = time.time() + 20
    while served.status()["pending"] and time.time() < deadline:
        time.sleep(0.3)
    time.sleep(0.5)
    history, resumed = asyncio.run(first_run())
    assert history, "windows were sent"
    epoch = resumed["epoch"]
    served.stop()
    served.start()

    async def resume():
        async with websockets.connect(served.ws + f"/ws/windows?after_seq=0&epoch={epoch}", max_size=None) as ws:
            got = []
            while True:
                t = await asyncio.wait_for(ws.recv(), 10)
                if json.loads(t)["type"] == "resumed":
                    return got, json.loads(t)
                got.append(t)

    again, told = asyncio.run(resume())
    assert told["epoch"] > epoch and told["mode"] == "after_seq"
    assert set(history) <= set(again) and len(again) == len(set(again)), "each frame once, byte for byte as first sent"


def test_an_outbox_is_bounded_whatever_the_sender_does():
    box = Outbox(limit=5)
    for i in range(10_000):
        box.quarantined_line({"type": "quarantined", "frame": 1 + i // 1000, "msg_id": f"M-{i}", "reason_code": "schema", "reason": "x"})
        box.acknowledge(1 + i // 1000)
    assert len(box.notices) == 5 and box.quarantined == 10_000
    out = box.take()
    assert [m["type"] for m in out] == ["quarantined"] * 6 + ["ack"]
    assert out[5]["count"] == 9_995 and out[5]["reason_codes"] == {"schema": 9_995} and out[5]["frames"] == [1, 10]
    assert out[-1] == {"type": "ack", "through": 10} and not box.pending()
    box.acknowledge(10)
    box.fail(11, "not stored")
    assert [m["type"] for m in box.take()] == ["ack", "error"]
