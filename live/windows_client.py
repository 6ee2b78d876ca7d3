"""A client of the live service's `/ws/windows`, as a console must be: it keeps the service's epoch
and the last frame number it holds, resumes with them after any drop (`after_seq`, `epoch`), takes
each window once by its key, and asks again for exactly what it misses when a number is skipped or
a `tick` names a number beyond the last it holds. For integrators (a screen of their own, a bot that
hands picks on) and for the project's own benchmark and tests.

    client = WindowsClient("ws://127.0.0.1:8765", on_frame=lambda text, frame: ...)
    await client.run(stop)          # until the `stop` event is set
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from typing import Callable

import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

NUMBERED = ("window", "late", "pickup", "quarantine")
"""The frames a console must not miss: numbered without gaps within an epoch."""

_HEAD = re.compile(r'"(type|seq|epoch|character_id|window_start|window_end_ns|lines|late_seq|latency_ms|through|mode)":'
                   r'("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|null)')


def head(text: str) -> dict:
    """A frame's top-level fields that come before its verdicts (the first of each key): reading them
    does not parse a 3 MB window frame whole, which would hold up the frames behind it."""
    out: dict = {}
    for key, value in _HEAD.findall(text[:1000]):
        out.setdefault(key, json.loads(value))
    return out


@dataclass
class Seen:
    """What a client was sent, for its owner to check."""

    windows: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    """(character_id, window_start) → when each copy arrived (ns): more than one only after `too_old`."""
    numbers: dict[int, list[int]] = field(default_factory=dict)
    """epoch → the numbers received, in order."""
    gaps: list[str] = field(default_factory=list)
    """Numbers skipped in what was sent live (each then asked for again)."""
    late: set[int] = field(default_factory=set)
    """The late frames taken (by their `late_seq`)."""
    too_old: int = 0
    connections: int = 0


class WindowsClient:
    def __init__(self, url: str, on_frame: Callable[[str, dict], None] | None = None, token: str | None = None,
                 drop_every: float | None = None):
        """`url`: the service's base (`ws://HOST:PORT`); `on_frame(text, head)` for every numbered frame
        taken (a window once, whatever was resent); `drop_every`: drop the socket that often (seconds)."""
        self.url, self.on_frame, self.drop_every = url, on_frame, drop_every
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.epoch: int | None = None
        self.last = 0
        self.seen = Seen()

    def _query(self) -> str:
        return f"?after_seq={self.last}&epoch={self.epoch}" if self.epoch is not None else ""

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                async with websockets.connect(self.url + "/ws/windows" + self._query(), max_size=None,
                                              additional_headers=self.headers) as ws:
                    self.seen.connections += 1
                    await self._read(ws, stop)
            except (OSError, ConnectionClosed, InvalidStatus):
                await asyncio.sleep(0.3)

    async def _read(self, ws, stop: asyncio.Event) -> None:
        live, opened = False, time.monotonic()
        while not stop.is_set() and not (self.drop_every and time.monotonic() - opened > self.drop_every):
            try:
                text = await asyncio.wait_for(ws.recv(), 0.3)
            except asyncio.TimeoutError:
                continue
            arrived = time.time_ns()
            frame = head(text)
            kind = frame.get("type")
            if kind == "resumed":
                self.epoch, self.last, live = frame["epoch"], frame["through"], True
            elif kind == "too_old":
                self.seen.too_old += 1
            elif kind == "tick" and live and (frame["epoch"] != self.epoch or frame["seq"] > self.last):
                live = False  # missed something, or the service restarted: ask again after the last held
                await ws.send(json.dumps({"type": "resume", "after_seq": self.last, "epoch": self.epoch}))
            elif kind in NUMBERED:
                self.seen.numbers.setdefault(frame["epoch"], []).append(frame["seq"])
                if live and frame["epoch"] == self.epoch:
                    if frame["seq"] <= self.last:
                        continue  # held already
                    if frame["seq"] != self.last + 1:
                        self.seen.gaps.append(f"{self.last} -> {frame['seq']}")
                        live = False
                        await ws.send(json.dumps({"type": "resume", "after_seq": self.last, "epoch": self.epoch}))
                        continue
                    self.last = frame["seq"]
                if kind == "window":
                    key = (frame["character_id"], frame["window_start"])
                    copies = self.seen.windows.setdefault(key, [])
                    copies.append(arrived)
                    if len(copies) > 1:
                        continue  # shown once
                elif kind == "late":
                    if frame["late_seq"] in self.seen.late:
                        continue
                    self.seen.late.add(frame["late_seq"])
                if self.on_frame is not None:
                    self.on_frame(text, frame)
