"""What a console is sent before live frames, and the store's figures: read beside the worker.

History comes from the frames kept as sent (`delivery.DeliveryLog` in memory, the deliveries table in
the store), byte for byte, bounded in count and size; reads of the store run on a few reader threads,
never on the worker, so consoles opening at once delay no acknowledgement and no window.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

import sqlalchemy as sa

from web.live import records
from web.live.policy import TALLY_EVERY_S


class History:
    def __init__(self, engine: sa.Engine, publisher, readers: int, history_windows: int, history_bytes: int,
                 resume_frames: int, characters):
        """`publisher.delivery`: the frames kept as sent; `characters()`: the characters with a sheet now."""
        self.engine, self.publisher, self.characters = engine, publisher, characters
        self.history_windows, self.history_bytes, self.resume_frames = history_windows, history_bytes, resume_frames
        self.readers = ThreadPoolExecutor(readers, thread_name_prefix="live-read")
        self.reading = asyncio.Semaphore(readers)
        self.tally_cache: tuple[float, dict] | None = None

    def through(self) -> int:
        """The last frame number given: a console joining now is sent everything up to it as history."""
        return self.publisher.delivery.seq

    async def history(self, through: int, after_seq: int | None = None, epoch: int | None = None,
                      after: str | None = None) -> tuple[list[bytes], dict]:
        """What a console is sent before live frames: the frames after `after_seq` (of `epoch`: this
        service's, or an earlier one's still on record), or after the window named `after`
        (`character_id/window_start`), up to frame `through`, each exactly as first sent; with
        neither, the newest `history_windows` windows and what was pushed after them (within
        `history_bytes`). Frames past what is kept, a frame never on record, or a window never sent are
        too old: the console is told so (`too_old`) and sent the newest windows instead. Returns
        (frames, the `resumed` frame's fields)."""
        mine = self.publisher.delivery.epoch
        told: dict = {}
        start: tuple[int, int] | None = None
        if after_seq is not None:
            if epoch == mine and 0 <= after_seq <= through:
                start = (mine, after_seq)
            elif (epoch is not None and 0 <= after_seq and epoch < mine
                  and await self.read(records.holds_delivery, self.engine, epoch, after_seq)):
                start = (epoch, after_seq)  # numbered by an earlier run of the service: on record, so resumed across
            else:
                told = {"too_old": "no such frame on record" if epoch != mine else "no such frame"}
        elif after:
            character, _, window_start = after.rpartition("/")
            start = await self.read(records.window_delivery, self.engine, character, window_start) if character else None
            if start is None:
                told = {"too_old": f"no window {after!r} was sent"}
        if start is not None:
            frames = await self._range(start, through, self.resume_frames)
            if frames is not None:
                return frames, {"mode": "after_seq" if after_seq is not None else "after"}
            told = {"too_old": f"more than {self.resume_frames} frames were sent since, or they are no longer kept"}
        cutoff = await self.read(records.newest_windows_from, self.engine, self.history_windows)
        frames = (await self._range(max(cutoff, (0, 0)), through, None)) or []
        size, kept = 0, []
        for data in reversed(frames):  # the newest within the bytes allowed
            size += len(data)
            if size > self.history_bytes:
                break
            kept.append(data)
        return kept[::-1], {"mode": "newest", **told}

    async def _range(self, after: tuple[int, int], through: int, limit: int | None) -> list[bytes] | None:
        """The frames after `after` ((epoch, seq)) up to this epoch's frame `through`: those in memory
        from there, the rest from the store; None when more than `limit`, or some are no longer kept."""
        log_ = self.publisher.delivery
        mine = log_.epoch
        if after[0] == mine:
            held = log_.held(after[1])
            if held is not None:
                held = [d for d in held if d.seq <= through]
                return None if limit is not None and len(held) > limit else [d.data for d in held]
        recorded = min(log_.recorded_through, through)
        stored = [] if after >= (mine, recorded) else await self.read(
            records.delivered, self.engine, after, (mine, recorded), limit if limit is not None else 10**9)
        if stored is None:
            return None
        if stored and stored[0][0] == after[0] and stored[0][1] != after[1] + 1:
            return None  # pruned from the store
        tail = log_.held(max(recorded, after[1] if after[0] == mine else 0))
        if tail is None:
            return None
        out = [data for _, _, data in stored] + [d.data for d in tail if d.seq <= through]
        return None if limit is not None and len(out) > limit else out

    async def read(self, fn, *args):
        """A read of the store for consoles, on the readers (never the worker), a few at a time."""
        async with self.reading:
            return await asyncio.get_running_loop().run_in_executor(self.readers, fn, *args)

    async def tally(self) -> dict:
        """The store's figures (`records.counts`), read at most once every TALLY_EVERY_S, on the readers."""
        now = time.monotonic()
        if self.tally_cache is None or now - self.tally_cache[0] > TALLY_EVERY_S:
            self.tally_cache = (time.monotonic(), await self.read(records.counts, self.engine, set(self.characters())))
        return self.tally_cache[1]

    def stop(self) -> None:
        self.readers.shutdown(wait=True)
