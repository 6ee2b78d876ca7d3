"""The live service's clock when it judges a recording in the recording's own time (`verdicts serve
--clock event`, fed by `verdicts replay FILE --to ws://… --pace original`).

The clock is a watermark: the latest `sent_at` among the lines landed so far, advanced by the
wall clock since that line came (so that, when the lines stop, the last windows still close a
window length plus the grace later). Windows close when it passes their end plus the grace, as
they do on the wall clock, so a recording replayed at any speed keeps its windows, and every
instant the rules compare (`sent_at`, the viewer relations' `last_replied_at`) stays as recorded:
the verdicts are the ones `verdicts judge live_pick` gives on the same files. A batch of lines
(a fast replay sends hours of a recording in one) is placed line by line: each line arrives at the
start of its window, never before the watermark the batch found (`LiveService._ingest`). It never goes back:
a line older than the watermark moves nothing. Before the first line it reads the wall clock (the
one step it may take back is to the first line's time).
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Iterable

from rules.common import timestamps
from rules.common.bounded_json import parse_object

CLOCKS = ("wall", "event")


class EventClock:
    def __init__(self, timezone: str, wall: Callable[[], int] = time.time_ns):
        self.timezone, self.wall = timezone, wall
        self._lock = threading.Lock()
        self._mark: tuple[int, int] | None = None
        """(event instant, wall instant when it was seen)."""
        self._last = 0

    def __call__(self) -> int:
        wall = self.wall()
        with self._lock:
            if self._mark is None:
                return wall
            self._last = max(self._last, self._mark[0] + (wall - self._mark[1]))
            return self._last

    def watermark(self) -> int | None:
        """The latest `sent_at` seen, None before the first line."""
        with self._lock:
            return None if self._mark is None else self._mark[0]

    def see(self, texts: Iterable[str]) -> None:
        """Advance the watermark to the latest readable `sent_at` of these raw chat lines."""
        latest = None
        for text in texts:
            obj = parse_object(text) if isinstance(text, str) else None
            stamp = timestamps.parse(obj.get("sent_at"), self.timezone) if obj else None
            if stamp is not None and (latest is None or stamp.ns > latest):
                latest = stamp.ns
        if latest is None:
            return
        wall = self.wall()
        with self._lock:
            if self._mark is None or latest > self._mark[0] + (wall - self._mark[1]):
                self._mark = (latest, wall)
