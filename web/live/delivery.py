"""The order consoles are sent frames in: one gap-free sequence per service epoch.

Every frame a console must not miss (a window, a late follow-up, a pick-up, lines quarantined
outside any window) is numbered here, as it goes out, on the event loop: numbers are given in the
order frames are handed to the consoles, whatever order the worker and the judging helper finished
them in, so a console that holds frame N has every frame before it. The number and the service's
epoch are written into the frame's JSON, and the frame's bytes are kept: the newest in memory, all of
them in the store once recorded (`records.store_deliveries`). A console that resumes after N is sent
exactly the frames after N, byte for byte as first sent, or told plainly that they are too old.

A plain object: the service calls it, tests step through it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import orjson


@dataclass(frozen=True)
class Delivery:
    seq: int
    kind: str
    ref: str | None
    character_id: str | None
    window_ns: int | None
    data: bytes


class DeliveryLog:
    def __init__(self, epoch: int, keep_frames: int = 1000, keep_bytes: int = 128 * 2**20):
        self.epoch = epoch
        self.seq = 0
        """The last number given."""
        self.keep_frames = keep_frames
        self.keep_bytes = keep_bytes
        self.recent: OrderedDict[int, Delivery] = OrderedDict()
        self.recent_bytes = 0
        self.unrecorded: list[Delivery] = []
        """Sent, not yet in the store: kept in memory until they are, whatever the bounds."""
        self.recorded_through = 0

    def publish(self, frame: dict, kind: str, ref: str | None = None, character_id: str | None = None,
                window_ns: int | None = None) -> Delivery:
        """Number `frame` (its `seq` and `epoch` set) and keep its JSON; the caller sends `data`."""
        self.seq += 1
        # the number first, after the type: a reader finds it without parsing a 3 MB frame
        rest = {k: frame.pop(k) for k in list(frame) if k != "type"}
        rest.pop("seq", None)
        rest.pop("epoch", None)
        frame.update(seq=self.seq, epoch=self.epoch, **rest)
        d = Delivery(self.seq, kind, ref, character_id, window_ns, orjson.dumps(frame))
        self.recent[d.seq] = d
        self.recent_bytes += len(d.data)
        self.unrecorded.append(d)
        self._trim()
        return d

    def take_unrecorded(self) -> list[Delivery]:
        out, self.unrecorded = self.unrecorded, []
        return out

    def recorded(self, deliveries: list[Delivery]) -> None:
        if deliveries:
            self.recorded_through = max(self.recorded_through, deliveries[-1].seq)
        self._trim()

    def unrecord(self, deliveries: list[Delivery]) -> None:
        """Recording failed: they wait for the next try, first."""
        self.unrecorded = deliveries + self.unrecorded

    def _trim(self) -> None:
        """Past the bounds, the oldest recorded frames leave memory (the store has them)."""
        while self.recent and (len(self.recent) > self.keep_frames or self.recent_bytes > self.keep_bytes):
            seq = next(iter(self.recent))
            if seq > self.recorded_through:
                break
            self.recent_bytes -= len(self.recent.pop(seq).data)

    def held(self, after: int) -> list[Delivery] | None:
        """The frames after `after` up to now, from memory; None when memory no longer holds them all."""
        if after >= self.seq:
            return []
        first = next(iter(self.recent), None)
        if first is None or first > after + 1:
            return None
        return [self.recent[s] for s in range(after + 1, self.seq + 1)]
