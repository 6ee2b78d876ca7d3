"""What an ingest connection is told, bounded whatever the sender does.

Acknowledgements are cumulative (`{"type": "ack", "through": N}`: frame N and every one before it
are stored), so only the latest is kept. Quarantine notices are kept one by one up to a limit;
past it they are counted by reason and frame range and sent as one `quarantined` notice with a
`count` (a sender that never reads, or one that sends thousands of bad lines, holds a bounded
outbox). Notices always go out before the acknowledgement that covers their frames. An error (a
frame not stored) is sent last, and the connection is closed after it.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque


class Outbox:
    def __init__(self, limit: int = 100):
        self.limit = limit
        self.notices: deque[dict] = deque()
        self.overflow: Counter = Counter()
        """reason_code → lines past the limit, not yet told."""
        self.overflow_frames: tuple[int, int] | None = None
        self.ack: int | None = None
        self.error: dict | None = None
        self.quarantined = 0
        """Quarantine notices of this connection, each line counted once (coalesced ones by their count)."""
        self._ready = asyncio.Event()

    def quarantined_line(self, notice: dict) -> None:
        self.quarantined += 1
        if len(self.notices) < self.limit:
            self.notices.append(notice)
        else:
            self.overflow[notice["reason_code"]] += 1
            frame = notice["frame"]
            low, high = self.overflow_frames or (frame, frame)
            self.overflow_frames = (min(low, frame), max(high, frame))
        self._ready.set()

    def acknowledge(self, through: int) -> None:
        self.ack = through if self.ack is None else max(self.ack, through)
        self._ready.set()

    def fail(self, frame: int, reason: str) -> None:
        """Frame `frame` was not stored: the sender is told, and the connection closes after it."""
        if self.error is None:
            self.error = {"type": "error", "frame": frame, "reason": reason}
        self._ready.set()

    def pending(self) -> bool:
        return bool(self.notices or self.overflow or self.ack is not None or self.error is not None)

    def take(self) -> list[dict]:
        """Everything waiting, in the order it goes out (notices, coalesced counts, the ack, an error)."""
        out = list(self.notices)
        self.notices.clear()
        if self.overflow:
            low, high = self.overflow_frames
            out.append({"type": "quarantined", "count": sum(self.overflow.values()), "reason_codes": dict(self.overflow),
                        "frames": [low, high], "reason": "more lines quarantined than notices are sent one by one"})
            self.overflow.clear()
            self.overflow_frames = None
        if self.ack is not None:
            out.append({"type": "ack", "through": self.ack})
            self.ack = None
        if self.error is not None:
            out.append(self.error)
        self._ready.clear()
        return out

    async def wait(self) -> None:
        if not self.pending():
            self._ready.clear()
            await self._ready.wait()
