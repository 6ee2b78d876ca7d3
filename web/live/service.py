"""The live service: a short pipeline of stages, lines in, windows finished on the wall clock, frames out.

1. `intake`: ingest frames landed in the store (one transaction a batch), senders told what became
   of each frame (`Intake`);
2. `absorb`: landed lines gated, tagged and filtered into the window buffer (`buffer.WindowBuffer`),
   quarantined, or late (`Absorber`);
3. `due`: when each window is due, and whether one may be finished early in its grace (`Due`);
4. `finishing` with `judging`: windows ranked, checked and stored, on the worker and the judging
   helper process (`Finishing`, `Judging`);
5. `publishing`: frames numbered as they go out to every console, recorded once out (`Publisher`);
6. `history`: what a console is sent before live frames, and the store's figures (`History`).

One worker thread does every piece of database and rule work, in arrival order, so a batch of lines
is fully absorbed (landed, gated, tagged, filtered) before a window it belongs to can finish; the
event loop only moves frames and decides, in `_drive`, what the worker does next. The timing policy
(how long to gather frames, when a window may finish early, how windows are shared with the helper)
is in `policy`. A frame is acknowledged once every line of it is stored: after that a crash loses
nothing, because start-up absorbs again every landing line that was neither judged, quarantined nor
recorded late, finishes every window whose end has passed, and sends whatever was stored to be
pushed but not recorded as sent.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from assets.resources.warehouse import _engine, checkpoint
from live import store
from web.config import WebConfig
from live.judge import close_broadcast
from live.on_air import start_broadcast
from web.live import broadcasts, records
from web.live.absorb import CHAT_SHOWN, Absorbed, Absorber
from web.live.banners import Banners, relations_differ, vocabulary_gaps
from web.live.buffer import WindowBuffer
from web.live.clients import Client
from web.live.due import Due
from web.live.finishing import Finishing
from web.live.history import History
from web.live.intake import Intake
from web.live.judging import Judging
from web.live.policy import (BATCH_LINES, COALESCE_S, QUIET_MARGIN_S, REPUBLISH_S, SEND_WAIT_S,
                                           SWITCH_INTERVAL_S, TIDY_AFTER_S)
from web.live.publishing import Publisher
from web.live.event_clock import EventClock
from web.live.windows import Key
from rules.common import timestamps
from rules.live_pick.config import load_config
from rules.live_pick.summaries import writer
from rules.live_pick.tags import tag_source

log = logging.getLogger("verdicts.live")
SETTLE_MARGIN_S = 5.0
"""How long past its grace a start waits for the windows before it to be stored (`_settle`)."""
PANEL_SHOWN = 50
"""Lines of a batch shown in the console's panel of lines quarantined outside any window (the count covers them all)."""


class LiveService:
    def __init__(self, config: WebConfig, clock=None):
        self.config = config
        rules = load_config(str(config.rules_config) if config.rules_config else None)
        if clock is None:  # the wall clock, or the recording's own time (`event_clock`)
            clock = EventClock(rules.timezone) if config.clock == "event" else time.time_ns
        self.clock = clock
        # SQLite (the embedded default): commits are not flushed to disk one by one; each stays
        # durable across a crash of the process (kill -9 included), not across a power cut.
        # Its log is copied into the database right after windows are pushed, never by a commit
        # in the latency path (a window's store).
        self.engine = _engine(config.warehouse_url, sqlite_synchronous="NORMAL", sqlite_checkpoints=False)
        self.rules = rules
        self.tagger = tag_source(config.tags)
        self.writer = writer(config.summaries)
        """The summary writer (None: the rules' template sentences), as `verdicts judge --summary`."""
        self.grace = int(config.grace_ms * 1_000_000)
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="live-judge")
        self.intake = Intake(self.engine, self.rules.window_seconds, self.rules.timezone)
        self.buffer = WindowBuffer(self.engine, Path(config.input_dir), self.rules, clock, config.window_ahead_s,
                                   config.late_horizon_s)
        self.judging = Judging(self.engine, self.buffer, self.rules, self.tagger, self.writer, config.tags, config.summaries,
                               str(config.rules_config) if config.rules_config else None)
        self.publisher = Publisher(self.engine, clock, self.buffer.step, config.client_queue, self.run)
        self.finishing = Finishing(self.engine, self.buffer, self.judging, self.rules, clock, self._hand_out)
        self.absorber = Absorber(self.engine, self.buffer, self.judging, self.rules, self.tagger, self.writer, self.grace,
                                 self.finishing.pushed, lambda: self.finishing.stored_push)
        self.warnings = Banners()
        self.warnings.skew = self.absorber.skew
        self.due = Due(self.buffer, self.finishing, self.rules, self.grace, clock)
        self.backlog = History(self.engine, self.publisher, config.history_readers, config.history_windows,
                               config.history_bytes, config.resume_frames,
                               lambda: self.buffer.refs.characters if self.buffer.refs is not None else frozenset())
        self.since_start = {"received": 0, "quarantined": 0, "late": 0}
        """What this run of the service took in (the store's own figures: `tally`)."""
        self._tasks: list[asyncio.Task] = []

    # -- life cycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        if self.config.judge_helper:  # first: it loads its tagger while the landing table is recovered
            await self.run(self.judging.start_helper)
        opened = await self.run(self._recover)
        await self.run(self._settings)
        self.due.deadlines.update(opened)
        self.due.nearest()
        self.publisher.begin(await self.run(records.new_epoch, self.engine, self.clock()))
        # Stored to be pushed, but not on record as sent (stopped or killed in between): sent now.
        for frame, kind, ref, key in await self.run(self._undelivered):
            self.publisher.deliver(frame, kind, ref, key)
        await self.publisher.record()
        # What start-up made (modules, references, engines) lives as long as the service: left
        # out of every later cycle collection, which then walks only what came since.
        gc.freeze()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        self._tasks = [asyncio.create_task(self._drive()), asyncio.create_task(self.publisher.tick(self.backlog.tally))]

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.publisher.record()
        self.pool.shutdown(wait=True)
        self.backlog.stop()
        self.judging.stop()

    async def run(self, fn, *args):
        """`fn(*args)` on the worker thread."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    # -- what the web front asks ------------------------------------------------------------------

    @property
    def inbox(self) -> asyncio.Queue:
        return self.intake.inbox

    def join(self) -> Client | None:
        """A console's queue, None when `max_consoles` are connected already."""
        if len(self.publisher.hub.clients) >= self.config.max_consoles:
            return None
        return self.publisher.hub.join()

    def leave(self, client: Client) -> None:
        self.publisher.hub.leave(client)

    @property
    def epoch(self) -> int:
        return self.publisher.delivery.epoch

    def history_through(self) -> int:
        return self.backlog.through()

    async def history(self, through: int, after_seq: int | None = None, epoch: int | None = None,
                      after: str | None = None) -> tuple[list[bytes], dict]:
        return await self.backlog.history(through, after_seq, epoch, after)

    async def tally(self) -> dict:
        return await self.backlog.tally()

    async def status(self) -> dict:
        """The store's figures (received = judged + quarantined + duplicates + late + pending, in total,
        per character and per character's current broadcast), what this run did, its open windows,
        epoch and newest frame number, and its judging helper's state."""
        tally = await self.tally()
        since = {**self.since_start, "judged": self.publisher.judged, "windows": self.publisher.windows}
        return {**tally["total"], "windows": self.publisher.windows, "characters": tally["characters"],
                "broadcasts": tally["broadcasts"], "since_start": since, "open_windows": len(self.due.deadlines),
                "epoch": self.epoch, "seq": self.publisher.delivery.seq, "judge_helper": await self.run(self.judging.state),
                "clock": "event" if isinstance(self.clock, EventClock) else "wall", **await self.console_view()}

    async def console_view(self) -> dict:
        """What the console shows beside the figures: the service's clock, its open windows, the
        characters' names, where each character's current broadcast starts, and settings warnings."""
        return {"now_ms": self.clock() // 1_000_000,
                "open": [{"character_id": c, "window_ms": w // 1_000_000} for c, w in list(self.due.deadlines)],
                "names": broadcasts.names(self.buffer.refs),
                **await self.backlog.read(broadcasts.where_current, self.engine),
                "warnings": self.warnings.shown()}

    async def close_broadcast(self, character_id: str) -> dict | None:
        """Close a character's broadcast as `verdicts live-close` does, on the worker, once its windows
        up to the one holding now are stored (that one when it ends); None when no sheet names the character."""
        known = self.buffer.refs.characters if self.buffer.refs is not None else frozenset()
        if known and character_id not in known:
            return None
        # the broadcast's windows up to the one holding now (its last seconds) are stored first
        step = self.rules.window_seconds * timestamps.NS_PER_SEC
        await self._settle(character_id, timestamps.floor_ns(self.clock(), self.rules.window_seconds) + step)
        done = await self.run(close_broadcast, self.engine, character_id, self.rules, self.clock)
        log.info("broadcast of %s closed from the console: %s", character_id, done)
        return done

    async def start_broadcast(self, character_id: str, close_previous: bool, by: str | None = None) -> dict | None:
        """Put a character's broadcast on air as `verdicts live-start` does, on the worker; None when no
        sheet names the character."""
        known = await self.run(self._characters)
        if character_id not in known:
            return None
        # its windows that ended before now (in their grace) belong to the broadcast before: stored first
        await self._settle(character_id, timestamps.floor_ns(self.clock(), self.rules.window_seconds))
        done = await self.run(start_broadcast, self.engine, character_id, self.rules, self.clock, close_previous, by)
        log.info("broadcast of %s started from the console: %s", character_id, done)
        return done

    async def _settle(self, character_id: str, before_ns: int) -> None:
        """Wait until the character's open windows that start before `before_ns` are stored: until
        the last of them ends, its grace and a margin at most."""
        keys = set(await self.run(lambda: [k for k in self.buffer.open if k[0] == character_id and k[1] < before_ns]))
        ends_in = max(0, before_ns - self.clock()) / 1e9
        deadline = time.monotonic() + ends_in + self.config.grace_ms / 1000 + SETTLE_MARGIN_S
        while keys and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            keys -= await self.run(store.already_judged, self.engine, list(keys))
        if keys:
            log.warning("starting %s's broadcast: %d window(s) before it not stored yet", character_id, len(keys))

    def _characters(self) -> frozenset[str]:
        """The characters of the sheets in force now (read again: a sheet may have been added since)."""
        self.buffer.refresh_references()
        return self.buffer.refs.characters if self.buffer.refs is not None else frozenset()

    async def pick_up(self, msg_id: str, by: str | None) -> dict | None:
        """Record that the operator picked up a skipped line, and tell every console."""
        frame = await self.run(records.pick_up, self.engine, msg_id, self.clock(), by)
        if frame and "error" not in frame:
            self.publisher.deliver(frame, "pickup", msg_id)
            await self.publisher.record()
        return frame

    def quiet(self, margin_s: float = QUIET_MARGIN_S) -> bool:
        """Whether work beside the service may take the interpreter now (`due.Due.quiet`)."""
        return self.due.quiet(margin_s)

    # -- the drive loop ---------------------------------------------------------------------------

    async def _drive(self) -> None:
        """One loop decides what the worker does next: frames are gathered for up to COALESCE_S
        (the per-batch cost of the gates, tagger and engine is mostly per call, so fewer larger
        batches leave the worker free), and a batch that may hold an ending window's last lines
        is absorbed SETTLE_S after its end at the latest. Between then and the window's end +
        grace, once it is ripe (`due.Due.ripe`), the worker finishes and stores it early; when it is
        due, what has arrived for it since is absorbed at once and it is pushed right after, never
        behind a later batch: the early result stands unless a line of it arrived meanwhile. Lines
        of later windows that arrived meanwhile wait until it is out."""
        due, intake = self.due, self.intake
        pending: list = []
        started = 0
        getter = asyncio.ensure_future(intake.inbox.get())
        try:
            while True:
                now = self.clock()
                nearest = due.nearest()
                if nearest is not None and nearest <= now:
                    pending += intake.drain(getter)
                    if getter.done():
                        getter = asyncio.ensure_future(intake.inbox.get())
                    if pending and due.holds_due(pending, now):
                        await self._ingest_items(pending)
                        pending = []
                    await self._finish_due()
                    # The frames go out before the worker takes the next batch: two threads
                    # busy at once would pass the interpreter lock back and forth on every
                    # system call the sending makes. Their push latencies are stored then too.
                    await self.publisher.hub.sent(SEND_WAIT_S)
                    await self.publisher.record()
                    continue
                lines = sum(len(ls) for _, _, ls in pending)
                flush_at = started + int(COALESCE_S * 1e9)
                end = nearest - self.grace if nearest is not None else None
                if pending and end is not None and started <= end + due.settle:  # it may hold the ending window's last lines
                    flush_at = min(flush_at, end + due.settle)
                if pending and (lines >= BATCH_LINES or now >= flush_at):
                    await self._ingest_items(pending)
                    pending = []
                    continue
                ripe = due.ripe(now, pending)
                if ripe:
                    if pending and due.holds(pending, set(ripe)):
                        await self._ingest_items(pending)
                        pending = []
                    pending, getter = await self._rank_early(ripe, pending, getter)
                    continue
                # A window past its settle but waiting for a connection's mark (`complete`) is
                # looked at again after the next batch, which goes in as soon as a frame comes.
                if pending and due.settled(now):
                    await self._ingest_items(pending)
                    pending = []
                    continue
                until = [n for n in (nearest, flush_at if pending else None, due.next_look(now)) if n is not None]
                timeout = max(0.0, (min(until) - now) / 1e9) if until else None
                done, _ = await asyncio.wait({getter}, timeout=timeout)
                if done:
                    if not pending:
                        started = self.clock()
                    pending.append(getter.result())
                    pending += intake.drain(None)
                    getter = asyncio.ensure_future(intake.inbox.get())
        finally:
            getter.cancel()

    async def _rank_early(self, ripe: list[Key], pending: list, getter):
        """Ripe windows finished in their grace on the worker. Still finishing when they are due:
        those with nothing of theirs among the frames arrived go out as soon as each is stored
        (`finishing.Finishing.clear`). Returns the frames that arrived meanwhile, and the inbox's getter."""
        self.due.ranked_early.update(ripe)
        job = asyncio.ensure_future(self.run(self.finishing.rank_early, ripe))
        for when in sorted({self.due.deadlines[k] for k in ripe}):
            if not job.done() and when > self.clock():
                await asyncio.wait({job}, timeout=(when - self.clock()) / 1e9)
            if job.done():
                break
            pending += self.intake.drain(getter)
            if getter.done():
                getter = asyncio.ensure_future(self.intake.inbox.get())
            keys = {k for k in ripe if self.due.deadlines[k] == when}
            if not self.due.holds(pending, keys):
                self.finishing.clear(keys)
        try:
            await job
        except Exception:  # noqa: BLE001 - they are ranked again when due
            log.exception("ranking windows early failed")
        return pending, getter

    # -- taking chat in -----------------------------------------------------------------------------

    async def _ingest_items(self, items: list) -> None:
        """Land and absorb a batch of frames `(origin, frame number, [frames.Line])`; tell each sender
        what became of its frames; push late frames and the panel's lines; show the chat flowing in."""
        for origin, _, _ in items:
            origin.absorbed += 1
        items = [it for it in items if not it[0].failed]
        try:
            landed, failed, absorbed = await self.run(self._ingest, items)
        except Exception:  # noqa: BLE001 - nothing was acknowledged; the senders keep their frames
            log.exception("ingest batch failed")
            landed, failed, absorbed = [], [(o, n) for o, n, _ in items], Absorbed()
        rows = [(o, r) for o, _, rs in landed for r in rs]
        self.since_start["received"] += len(rows)
        for key, (origin, _) in zip(absorbed.windows, rows):
            if key is not None:
                self.due.sent_to(key, origin, key in absorbed.opened)
        self.since_start["quarantined"] += len(absorbed.quarantined)
        Intake.answer(items, landed, failed, absorbed.quarantined)
        self.due.deadlines.update(absorbed.opened)
        for frame in absorbed.late:
            self.since_start["late"] += frame["lines"]
            self.publisher.deliver(frame, "late", str(frame["late_seq"]), (frame["character_id"], frame["window_ns"]))
        if absorbed.panel:
            self.publisher.deliver({"type": "quarantine", "count": len(absorbed.panel), "lines": absorbed.panel[-PANEL_SHOWN:]},
                                   "quarantine", str(absorbed.panel[0]["seq"]))
        if absorbed.late or absorbed.panel:
            await self.publisher.record()
        if absorbed.chat or absorbed.counts:
            self.publisher.chat({"type": "chat", "lines": absorbed.chat[-CHAT_SHOWN:],
                                 "open": [{"character_id": k[0], "window_ns": k[1], "lines": n} for k, n in absorbed.counts.items()]})

    def _ingest(self, items: list) -> tuple[list, list, Absorbed]:
        """Land the frames, then absorb what landed (on the worker)."""
        event = isinstance(self.clock, EventClock)
        if event:  # the recording's time moves with its lines
            before = self.clock.watermark()
            self.clock.see(line.text for _, _, lines in items for line in lines)
        now = self.clock()
        landed, failed = self.intake.land(items, now)
        rows = [r for _, _, rs in landed for r in rs]
        if event:  # each line came at its own time (a batch may span hours of a fast replay), never before the watermark
            for r in rows:
                if r["window_ns"] is not None:
                    r["arrived_ns"] = min(now, max(before or 0, int(r["window_ns"])))
        try:
            absorbed = self.absorber.absorb(rows, now)
        except Exception:  # noqa: BLE001 - the lines are durable (acknowledged); a restart or the sensor judges them
            log.exception("absorbing landed lines %s..%s failed", rows[0]["seq"] if rows else None, rows[-1]["seq"] if rows else None)
            absorbed = Absorbed()
            absorbed.windows = [None] * len(rows)
        return landed, failed, absorbed

    # -- finishing windows --------------------------------------------------------------------------

    async def _finish_due(self) -> None:
        keys = self.due.take_due(self.clock())
        try:
            await self.run(self.finishing.finish, keys)  # each window is published as soon as it is stored
        except Exception:  # noqa: BLE001 - keep serving; the windows stay in the landing table for a restart or Dagster
            log.exception("finishing windows failed")
        # the next window ends 30 s from now: time to spare, once the frames are out
        self.loop.call_later(TIDY_AFTER_S, self._tidy_soon)

    def _hand_out(self, frame: dict) -> None:
        """A stored window's frame, from the worker, out on the event loop."""
        self.loop.call_soon_threadsafe(self.publisher.publish_window, frame)

    def _tidy_soon(self) -> None:
        try:
            self.pool.submit(self._tidy)
        except RuntimeError:  # stopping: the pool takes no more work
            pass

    def _tidy(self) -> None:
        """After windows are pushed: the finished windows freed, SQLite's log into the database, the
        frames on record kept within their bytes, and the cycle collection held while the windows were
        finished."""
        self.finishing.free_parked()
        try:
            checkpoint(self.engine)
            records.prune_deliveries(self.engine, self.config.retention_bytes)
        except Exception:  # noqa: BLE001 - the log just grows until the next one
            log.exception("tidying the store failed")
        gc.collect()

    # -- start-up ---------------------------------------------------------------------------------

    def _recover(self) -> dict[Key, int]:
        """Absorb every landing line left unprocessed; windows already over finish at once."""
        store.ensure_tables(self.engine)
        self.buffer.finished = records.finished_windows(self.engine)
        self.finishing.stored_push = records.last_push_seq(self.engine)
        self.buffer.refresh_references()
        opened: dict[Key, int] = {}
        after = 0
        while True:
            rows = records.unprocessed(self.engine, after, BATCH_LINES)
            if not rows:
                break
            opened.update(self.absorber.absorb(rows, self.clock()).opened)
            after = rows[-1]["seq"]
        for key in opened:  # count and list what was quarantined before the restart too
            self.buffer.open[key].lines, self.buffer.open[key].quarantined = records.window_lines(self.engine, key)
        if opened:
            log.warning("recovered %d open windows from the landing table", len(opened))
        return opened

    def _settings(self) -> None:
        """Settings that would change every verdict without a word: found once, at start (`banners`)."""
        self.buffer.refresh_references()
        self.warnings.set_fixed(relations_differ(Path(self.config.input_dir), self.engine, self.rules),
                                vocabulary_gaps(self.tagger, self.buffer.refs.sheet if self.buffer.refs is not None else None))

    def _undelivered(self) -> list[tuple[dict, str, str, Key]]:
        """Frames stored to be pushed but not on record as sent (`records.undelivered`), rebuilt, in
        the order they were to go out: (frame, kind, ref, window)."""
        todo = records.undelivered(self.engine, self.clock() - int(REPUBLISH_S * timestamps.NS_PER_SEC))
        out = []
        for frame, kind in records.stored_frames(self.engine, todo["window"], todo["late"], self.rules.timezone):
            if kind == "window":
                out.append((frame, kind, str(frame["push"]), (frame["character_id"], frame["window_end_ns"] - self.buffer.step)))
            else:
                out.append((frame, kind, str(frame["late_seq"]), (frame["character_id"], frame["window_ns"])))
        if out:
            log.warning("sending %d frames stored before a restart but never sent", len(out))
        return out
