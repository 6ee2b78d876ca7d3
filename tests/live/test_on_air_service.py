"""Starting a broadcast on the running service while a window of the character's is still in its
grace: that window belongs to the broadcast before the start, so the start waits for it to be
stored and says it is open, rather than leaving it judged later outside both broadcasts."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.error
import urllib.request

import pytest
import websockets

from tests.live.console import InProcess, retimed, sample_lines

pytestmark = pytest.mark.slow
WINDOW_S = 4


def post(service, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(service.http + "/live/start", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Origin": service.http})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_a_start_in_a_windows_grace_waits_for_it(tmp_path):
    service = InProcess(tmp_path, window_seconds=WINDOW_S, grace_ms=3000).start()
    try:
        asyncio.run(_start_in_grace(service))
    finally:
        service.stop()


@contextlib.asynccontextmanager
async def lines_in_a_window(service, character: str, n: int):
    """A feed that sends `n` of the character's lines early in a window, is acknowledged, and then
    stays connected saying nothing more (so the window is not known complete before its grace is
    out); yields the window's start (ns)."""
    step = WINDOW_S * 10**9
    while time.time_ns() % step > step // 4:  # early in a window: its lines are in before it ends
        await asyncio.sleep(0.05)
    window = time.time_ns() // step * step
    mine = [json.loads(t) for t in retimed([t for t in sample_lines() if f'"{character}"' in t][:n], time.time_ns())]
    async with websockets.connect(service.ws + "/ws/ingest") as feed:
        await feed.send(json.dumps(mine, ensure_ascii=False))
        while json.loads(await asyncio.wait_for(feed.recv(), 30))["type"] != "ack":
            pass
        yield window


async def _start_in_grace(service) -> None:
    step = WINDOW_S * 10**9
    async with lines_in_a_window(service, "CH-0007", 5) as window:
        while time.time_ns() < window + step + 300_000_000:  # the window has ended and is in its grace
            await asyncio.sleep(0.02)
        code, said = await asyncio.to_thread(post, service, {"character_id": "CH-0007"})
    assert code == 409, said
    assert said["previous"]["windows"] == 1 and said["previous"]["first_window_ns"] == window
    code, said = await asyncio.to_thread(post, service, {"character_id": "CH-0007", "close_previous": True, "by": "operator-kim"})
    assert code == 200 and said["started"] and said["closed"]["closed"] and said["first_window_ns"] == window + step
    code, again = await asyncio.to_thread(post, service, {"character_id": "CH-0007"})
    assert code == 200 and again["already"], again
    deadline = time.time() + 10  # the store's figures are cached for up to a second
    while "CH-0007" in (st := service.status())["broadcasts"] and time.time() < deadline:
        await asyncio.sleep(0.2)
    assert "CH-0007" not in st["broadcasts"] and st["on_air"]["CH-0007"]["started_ms"] == said["started_ns"] // 10**6


def test_a_close_takes_in_the_window_it_falls_in(tmp_path):
    """Closing in the middle of a window the character's lines are in: that window is the
    broadcast's last; the close waits for it, so nothing of it is left as a broadcast of its own."""
    service = InProcess(tmp_path, window_seconds=WINDOW_S).start()
    try:
        asyncio.run(_close_mid_window(service))
    finally:
        service.stop()


def close(service, body: dict) -> dict:
    req = urllib.request.Request(service.http + "/live/close", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Origin": service.http})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


async def _close_mid_window(service) -> None:
    step = WINDOW_S * 10**9
    code, said = await asyncio.to_thread(post, service, {"character_id": "CH-0015"})
    assert code == 200 and said["started"]
    async with lines_in_a_window(service, "CH-0015", 4) as window:
        done = await asyncio.to_thread(close, service, {"character_id": "CH-0015"})
    assert time.time_ns() >= window + step, "the close answered once the window it fell in had ended"
    assert done["closed"] and done["ended"] and done["broadcast_id"].startswith("CH-0015-"), done
    code, again = await asyncio.to_thread(post, service, {"character_id": "CH-0015"})
    assert code == 200 and again["started"] and not again.get("already") and again["previous"] is None, again
