"""The fourth stage: frames out to every console. Owned by the event loop.

Every frame a console must not miss is numbered here as it goes out (`delivery.DeliveryLog`), put in
every console's bounded queue (`clients.Hub`) and, once out, recorded in the store with the window
pushes' latencies (one transaction, on the worker, after the frames are sent). Every few seconds a
`tick` tells each console the newest number and the store's figures.
"""

from __future__ import annotations

import asyncio
import logging

import sqlalchemy as sa

from web.live import records
from web.live.clients import Hub
from web.live.delivery import DeliveryLog
from web.live.policy import TICK_S
from web.live.windows import Key
from rules.common.jsonl import compact

log = logging.getLogger("verdicts.live")
dumps = compact
"""A frame's text (a window of 3,000 lines is about 3 MB, encoded in the latency path)."""
RECENT_FRAMES = 1000
RECENT_BYTES = 128 * 2**20
"""The frames last pushed are kept in memory as sent, for consoles that resume, up to RECENT_FRAMES and
RECENT_BYTES of UTF-8 JSON (at 400 lines/s a window's frame is 3 MB); older ones are read from the
store (`deliveries`). Kept as bytes, not as text: one character past the BMP (an emoji) makes a text 4 bytes
a character, and every page of new memory held costs a fault when first written (about 30 ms for
a 3 MB frame's text on a virtual machine, in the latency path); the text sent is made from the
bytes and dropped once sent, so the next frame's text reuses its memory."""


class Publisher:
    def __init__(self, engine: sa.Engine, clock, step_ns: int, client_queue: int, run):
        """`run(fn, *args)`: an awaitable of `fn` on the worker (the store's one writer)."""
        self.engine, self.clock, self.step, self.run = engine, clock, step_ns, run
        self.hub = Hub(client_queue)
        self.delivery: DeliveryLog | None = None
        """Every frame pushed to consoles, numbered without gaps in this service's epoch (made at start)."""
        self.latencies: list[tuple[int, float]] = []
        """Window pushes (push sequence, end → sent latency) whose latency is not stored yet: stored
        together once the frames are out (`record`), not one transaction per frame beside the sending."""
        self.windows = 0
        self.judged = 0

    def begin(self, epoch: int) -> None:
        self.delivery = DeliveryLog(epoch, RECENT_FRAMES, RECENT_BYTES)

    def publish_window(self, frame: dict) -> None:
        """A window's frame out, with its end → sent latency."""
        frame["latency_ms"] = round((self.clock() - frame["window_end_ns"]) / 1e6, 1)
        self.windows += 1
        self.judged += len(frame["verdicts"])
        self.deliver(frame, "window", str(frame["push"]), (frame["character_id"], frame["window_end_ns"] - self.step))
        self.latencies.append((frame["push"], frame["latency_ms"]))

    def deliver(self, frame: dict, kind: str, ref: str | None, key: Key | None = None) -> None:
        """Number a frame, keep it, and send it to every console (on the event loop: the one place
        numbers are given, in the order frames go out)."""
        d = self.delivery.publish(frame, kind, ref, *(key or (None, None)))
        self.hub.publish(d.data.decode(), d.seq)

    def chat(self, frame: dict) -> None:
        """A frame a console may miss (the chat flowing in, a tick): not numbered, not kept."""
        self.hub.publish(dumps(frame))

    async def record(self) -> None:
        """The frames sent since the last time (their bytes, for consoles that resume) and the window
        pushes' end → sent latencies, into the store in one transaction, once the frames are out."""
        sent = self.delivery.take_unrecorded() if self.delivery is not None else []
        pushed, self.latencies = self.latencies, []
        if not sent and not pushed:
            return
        try:
            await self.run(records.store_deliveries, self.engine, self.delivery.epoch, sent, pushed)
            self.delivery.recorded(sent)
        except Exception:  # noqa: BLE001 - kept in memory and tried again; the stored latency stands in for these pushes'
            log.exception("recording %d frames sent failed", len(sent))
            self.delivery.unrecord(sent)

    async def tick(self, tally) -> None:
        """Every TICK_S, the newest frame number and the store's figures (`tally()`) to every console:
        a console that holds less than that number has missed a frame and resumes from the last it holds."""
        while True:
            await asyncio.sleep(TICK_S)
            if not self.hub.clients:
                continue
            try:
                counts = await tally()
            except Exception:  # noqa: BLE001 - the next tick tries again
                log.exception("reading the store's figures failed")
                counts = None
            self.chat({"type": "tick", "epoch": self.delivery.epoch, "seq": self.delivery.seq, "counts": counts})
