"""Delivery to consoles: every frame numbered as it goes out, each console sent each frame once,
whatever order the windows finish and are stored in; a console that drops resumes with exactly
what it missed, byte for byte."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import sqlalchemy as sa
import websockets

from live import store
from web.live.delivery import DeliveryLog
from tests.live.console import InProcess, retimed

pytestmark = pytest.mark.slow
CHARACTERS = ("CH-0007", "CH-0008", "CH-0011")
WINDOW_S = 2


def song(character: str, i: int, window: int) -> str:
    return json.dumps({"msg_id": f"M-{character}-{window}-{i}", "character_id": character, "viewer_id": f"VW-{i:04d}",
                       "sent_at": "2026-11-01T09:00:00", "body": "노래 불러 줘?", "topic_tags": ["노래"],
                       "donation_amount": 1000 * i, "is_question": True, "note": None}, ensure_ascii=False)


async def console(url: str, frames: list, stop: asyncio.Event, reconnect_after: int | None = None) -> None:
    """A console: frames as received (text); with `reconnect_after`, it drops after that many window
    frames and comes back with `after_seq` and `epoch` of the last frame it holds, once."""
    params, dropped = "", False
    while not stop.is_set():
        async with websockets.connect(url + "/ws/windows" + params, max_size=None) as ws:
            while not stop.is_set():
                try:
                    text = await asyncio.wait_for(ws.recv(), 0.3)
                except asyncio.TimeoutError:
                    continue
                frames.append(text)
                f = json.loads(text)
                windows = sum(1 for t in frames if json.loads(t)["type"] == "window")
                if reconnect_after is not None and not dropped and f["type"] == "window" and windows >= reconnect_after:
                    held = numbered(frames)
                    params = f"?after_seq={held[-1]['seq']}&epoch={held[-1]['epoch']}"
                    dropped = True
                    break


def numbered(texts: list[str]) -> list[dict]:
    return [f for f in map(json.loads, texts) if f.get("type") in ("window", "late", "pickup", "quarantine")]


@pytest.mark.parametrize("slow", ["held back", "first ranked"])
def test_every_window_reaches_every_console_once_whatever_order_the_windows_finish_in(tmp_path, monkeypatch, slow):
    """Of the windows that end together, some are ranked in their grace and stored before the others;
    a window ranked later is still being finished when all are due, and goes out the moment it is
    stored — before windows stored earlier. Numbered as they go out, none is skipped: a steady console
    and one that drops and resumes each get every window once, numbers 1, 2, 3, … with no gap."""
    from web.live.due import Due
    from web.live.finishing import Finishing

    real_ripe, real_rank = Due.ripe, Finishing.rank_early
    held_back: dict[int, list] = {}

    def ripe(self, now, pending=()):
        keys = real_ripe(self, now, pending)
        by_end: dict[int, list] = {}
        for k in keys:
            by_end.setdefault(k[1], []).append(k)
        out = []
        for end, ks in by_end.items():
            if end not in held_back and len(ks) >= 2:  # the first time: all but one
                held_back[end] = sorted(ks)[-1:]
                out += sorted(ks)[:-1]
            else:
                out += ks
        return out

    def rank_early(self, keys):
        late_group = any(k in held_back.get(k[1], ()) for k in keys)
        if (slow == "held back") == late_group:
            time.sleep(0.35)  # still finishing when the windows are due (200 ms of grace)
        return real_rank(self, keys)

    monkeypatch.setattr(Due, "ripe", ripe)
    monkeypatch.setattr(Finishing, "rank_early", rank_early)
    server = InProcess(tmp_path, window_seconds=WINDOW_S).start()
    try:
        async def broadcast():
            stop = asyncio.Event()
            steady, resuming = [], []
            tasks = [asyncio.create_task(console(server.ws, steady, stop)),
                     asyncio.create_task(console(server.ws, resuming, stop, reconnect_after=2))]
            async with websockets.connect(server.ws + "/ws/ingest") as ingest:
                for w in range(3):
                    await asyncio.sleep(WINDOW_S - time.time() % WINDOW_S + 0.2)  # just after a window starts
                    lines = [t for c in CHARACTERS for t in retimed([song(c, i, w) for i in range(1, 6)], time.time_ns())]
                    await ingest.send("[" + ",".join(lines) + "]")
                    assert json.loads(await ingest.recv()) == {"type": "ack", "through": w + 1}
            deadline = time.time() + 30
            while time.time() < deadline and len({json.loads(t)["window_start"] + json.loads(t)["character_id"]
                                                   for t in steady if json.loads(t)["type"] == "window"}) < 9:
                await asyncio.sleep(0.2)
            await asyncio.sleep(1.0)
            stop.set()
            await asyncio.gather(*tasks)
            return steady, resuming

        steady, resuming = asyncio.run(broadcast())
        engine = sa.create_engine(server.config.warehouse_url)
        with engine.connect() as conn:
            stored = {(c, w) for c, w in conn.execute(sa.select(store.windows.c.character_id, store.windows.c.window_ns))}
        engine.dispose()
        assert len(stored) == 9
        assert held_back, "windows were ranked in their grace, in two goes"
        for name, got in (("steady", steady), ("resuming", resuming)):
            frames = numbered(got)
            seqs = [f["seq"] for f in frames]
            assert seqs == list(range(1, len(seqs) + 1)), f"{name}: each number once, none skipped: {seqs}"
            windows = [(f["character_id"], f["window_end_ns"] - WINDOW_S * 10**9) for f in frames if f["type"] == "window"]
            assert sorted(windows) == sorted(stored), f"{name}: every window once"
        assert any(json.loads(t)["type"] == "resumed" and json.loads(t)["mode"] == "after_seq" for t in resuming)
        # the frames re-sent on resume are the bytes first sent
        kinds = ("window", "late", "pickup", "quarantine")
        first = {json.loads(t)["seq"]: t for t in steady if json.loads(t)["type"] in kinds}
        again = [t for t in resuming if json.loads(t)["type"] in kinds]
        assert again and all(first[json.loads(t)["seq"]] == t for t in again)
    finally:
        server.stop()


def test_numbers_and_bytes_kept_for_resuming_consoles():
    log = DeliveryLog(3, keep_frames=2, keep_bytes=10**6)
    a = log.publish({"type": "window", "x": 1}, "window", "1", "CH", 0)
    b = log.publish({"type": "late", "x": 2}, "late", "1")
    assert (a.seq, b.seq) == (1, 2) and json.loads(a.data) == {"type": "window", "x": 1, "seq": 1, "epoch": 3}
    assert log.held(0) == [a, b] and log.held(1) == [b] and log.held(2) == []
    c = log.publish({"type": "pickup"}, "pickup", "M-1")
    assert log.held(0) == [a, b, c], "not recorded yet: kept whatever the bounds"
    log.recorded(log.take_unrecorded())
    assert log.held(0) is None and log.held(1) == [b, c], "recorded: the oldest left memory (the store has them)"
    log.unrecord([c])
    assert log.take_unrecorded() == [c]


def test_consoles_are_bounded_and_history_never_waits_for_the_worker(tmp_path, monkeypatch):
    """Past `max_consoles` a console is refused (503), and reading history does not queue behind the
    worker: with the worker held busy for 8 s, a console still gets its history at once."""
    server = InProcess(tmp_path, max_consoles=2).start()
    try:
        async def go():
            held = [await websockets.connect(server.ws + "/ws/windows") for _ in range(2)]
            with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
                await websockets.connect(server.ws + "/ws/windows")
            assert refused.value.response.status_code == 503
            for ws in held:
                await ws.close()
            await asyncio.sleep(0.2)
            busy = asyncio.get_running_loop().run_in_executor(None, lambda: server.service.pool.submit(time.sleep, 8).result())
            await asyncio.sleep(0.1)
            started = time.monotonic()
            async with websockets.connect(server.ws + "/ws/windows?after=CH-0007/nowhere") as ws:
                kinds = [json.loads(await ws.recv())["type"], json.loads(await ws.recv())["type"]]
            answered = time.monotonic() - started
            await busy
            return kinds, answered

        kinds, answered = asyncio.run(go())
        assert kinds == ["too_old", "resumed"]
        assert answered < 6, f"history waited for the busy worker ({answered:.2f} s of its 8)"
    finally:
        server.stop()
