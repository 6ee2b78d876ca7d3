"""The first stage: ingest frames landed in the store, and what each sender is told.

Frames arrive as `(origin, frame number, [frames.Line])`. `Intake.land` (on the worker) stores every
line of a batch of frames in one transaction; should that fail, it tries frame by frame, so one
frame's failure fails no other frame nor another connection's, and after a frame not stored nothing
more of its sender's is stored (what a sender has stored stays a run of frames from its first).
Frames a named sender sends again after a reconnect are recognised as stored. `Intake.answer` (on the
event loop) then tells each sender: quarantine notices, `ack` through the last frame before any
failure, and an error for the failed frame (the socket then closes).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

import sqlalchemy as sa

from live import landing
from web.live.frames import Line
from web.live.outbox import Outbox

log = logging.getLogger("verdicts.live")


@dataclass(eq=False)
class Origin:
    """An ingest connection: what it is told (acks, quarantined lines, an error) goes through its
    bounded outbox (`outbox.Outbox`).

    A chat connection sends its lines in time order, so once one of its lines of a later
    window has been absorbed, every line it sent of the earlier windows has been too: `passed`
    is that mark per character, and a window is only finished in its grace (`due.Due.complete`)
    once every connection that sent lines to it has passed it, or has closed with all its frames absorbed."""

    outbox: Outbox = field(default_factory=Outbox)
    sender: str | None = None
    """The client's own id (`?sender=`), under which its frame numbers are stored: a frame it sends
    again after a reconnect is recognised as stored and acknowledged without storing it twice."""
    failed: bool = False
    """A frame of it could not be stored: nothing after it is acknowledged, and the connection closes."""
    passed: dict[str, int] = field(default_factory=dict)
    """character_id → the latest window_ns of that character among this connection's absorbed lines."""
    received: int = 0
    """Frames put in the inbox."""
    absorbed: int = 0
    """Frames taken off the inbox and ingested (or refused)."""
    closed: bool = False


Landed = list[tuple[Origin, int, list[dict]]]
"""(origin, frame number, the frame's landing rows): frames stored (or stored before, then no rows)."""


class Intake:
    def __init__(self, engine: sa.Engine, window_seconds: int, timezone: str):
        self.engine, self.window_seconds, self.timezone = engine, window_seconds, timezone
        self.inbox: asyncio.Queue = asyncio.Queue()
        """Frames from every ingest socket, in arrival order."""
        self.stored_frames: dict[str, int] = {}
        """sender → its highest frame number whose lines are landed (worker state)."""

    # -- on the worker ---------------------------------------------------------------------------

    def land(self, items: list, now: int) -> tuple[Landed, list[tuple[Origin, int]]]:
        """Land the frames: ([(origin, frame number, landing rows)], [(origin, frame number) not stored])."""
        todo = []
        landed: Landed = []
        for origin, frame_no, lines in items:
            if origin.sender is not None:
                if origin.sender not in self.stored_frames:
                    self.stored_frames[origin.sender] = landing.stored_frames_of(self.engine, origin.sender)
                if frame_no <= self.stored_frames[origin.sender]:
                    landed.append((origin, frame_no, []))  # stored before a reconnect: acknowledged again, not stored twice
                    continue
            todo.append((origin, frame_no, lines))
        failed: list[tuple[Origin, int]] = []
        try:
            rows = self._land([e for t in todo for e in _entries(*t)], now)
            at = 0
            for origin, frame_no, lines in todo:
                landed.append((origin, frame_no, rows[at:at + len(lines)]))
                at += len(lines)
        except Exception:  # noqa: BLE001 - each frame on its own: one that cannot be stored fails alone
            log.exception("landing a batch of %d frames failed; landing them one by one", len(todo))
            for origin, frame_no, lines in todo:
                if any(o is origin for o, _ in failed):  # after a frame not stored, nothing of its sender is:
                    continue  # what is stored stays a run of frames from the first, and it sends them all again
                try:
                    landed.append((origin, frame_no, self._land(_entries(origin, frame_no, lines), now)))
                except Exception:  # noqa: BLE001 - told to the sender, who sends it again
                    log.exception("frame %d of a connection could not be stored", frame_no)
                    failed.append((origin, frame_no))
        for origin, frame_no, _ in landed:
            if origin.sender is not None:
                self.stored_frames[origin.sender] = max(self.stored_frames[origin.sender], frame_no)
        return landed, failed

    def _land(self, entries: list[dict], now: int) -> list[dict]:
        return landing.land(self.engine, entries, now, self.window_seconds, self.timezone)

    # -- on the event loop -----------------------------------------------------------------------

    @staticmethod
    def answer(items: list, landed: Landed, failed: list[tuple[Origin, int]], quarantined: list[dict]) -> None:
        """Tell each sender what became of its frames: quarantine notices, then `ack` through the last
        frame before any that failed (in arrival order: an ack never passes a frame not stored), and an
        error for the failed one."""
        origin_of = {r["seq"]: (o, n) for o, n, rs in landed for r in rs}
        for q in quarantined:
            origin, frame_no = origin_of.get(q["seq"], (None, None))
            if origin is not None:
                origin.outbox.quarantined_line({"type": "quarantined", "frame": frame_no, "msg_id": q["msg_id"],
                                                "reason_code": q["reason_code"], "reason": q["reason"]})
        refused = {(id(o), n) for o, n in failed}
        for origin, frame_no, _ in items:
            if origin.failed:
                continue
            if (id(origin), frame_no) in refused:
                origin.failed = True
                origin.outbox.fail(frame_no, "not stored; connect again and send this frame and every later one again")
            else:
                origin.outbox.acknowledge(frame_no)

    def drain(self, getter) -> list:
        """The frames waiting in the inbox (with the one `getter` holds, when it has one)."""
        items = []
        if getter is not None and getter.done():
            items.append(getter.result())
        while not self.inbox.empty():
            items.append(self.inbox.get_nowait())
        return items


def _entries(origin: Origin, frame_no: int, lines: list[Line]) -> list[dict]:
    return [{"text": line.text, "raw": line.raw, "reason": line.reason, "sender": origin.sender,
             "frame_no": frame_no if origin.sender is not None else None} for line in lines]
