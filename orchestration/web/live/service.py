"""The live service: lines in, windows finished on the wall clock, frames out.

One worker thread does every piece of database and rule work, in arrival order, so a batch
of lines is fully absorbed (landed, gated, tagged, filtered) before a window it belongs to
can finish; the event loop only moves frames. Three in four of the windows that end together are
judged by a helper process on another core (`judge_helper`), to which the worker hands their
gated lines in the same order; the worker stores and pushes every window. A frame is acknowledged once
every line of it is in the landing table (and those refused before the gates in its quarantine, in
the same transaction): after that a crash loses nothing, because start-up absorbs again every
landing line that was neither judged, quarantined nor recorded late, and finishes every
window whose end has passed. Frames to consoles are numbered as they go out (`delivery`), and
start-up sends again whatever was stored to be pushed but not recorded as sent.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from assets.resources.warehouse import _engine, checkpoint
from orchestration.live import sheets, store
from orchestration.live.judge import references, versioned_sheet
from orchestration.web.config import WebConfig
from orchestration.web.live import records
from orchestration.web.live.clients import Client, Hub
from orchestration.web.live.delivery import DeliveryLog
from orchestration.web.live.frames import INTAKE_CODES, Line
from orchestration.web.live.judge_helper import JudgeHelper
from orchestration.web.live.outbox import Outbox
from orchestration.web.live.ready import Ready, finish_ready
from orchestration.web.live.windows import Key, References, Window, add_lines, judge_late, prepare
from rules.common import timestamps
from rules.common.collector import cycle_collection_paused
from rules.common.distinct import exact_factorize
from rules.common.gates import DUPLICATE_ID
from rules.common.jsonl import compact
from rules.live_pick.config import load_config
from rules.live_pick.normalise import UNKNOWN_CHARACTER
from rules.live_pick.summaries import writer
from rules.live_pick.tags import canonical, tag_source

log = logging.getLogger("verdicts.live")
CHAT_SHOWN = 40
"""Lines of each batch shown in the console's flowing chat (the counts cover them all)."""
BATCH_LINES = 5000
COALESCE_S = 0.25
"""Frames arriving within this long are absorbed together (acks wait at most this long more)."""
RECENT_FRAMES = 1000
RECENT_BYTES = 128 * 2**20
"""The frames last pushed are kept in memory as sent, for consoles that resume, up to RECENT_FRAMES and
RECENT_BYTES of UTF-8 JSON (at 400 lines/s a window's frame is 3 MB); older ones are read from the
store (`deliveries`). Kept as bytes, not as text: one character past the BMP (an emoji) makes a text 4 bytes
a character, and every page of new memory held costs a fault when first written (about 30 ms for
a 3 MB frame's text on a virtual machine, in the latency path); the text sent is made from the
bytes and dropped once sent, so the next frame's text reuses its memory."""
PANEL_SHOWN = 50
"""Lines of a batch shown in the console's panel of lines quarantined outside any window (the count covers them all)."""
PANEL_TEXT = 300
"""Characters of a quarantined line's text shown in that panel."""
KEY_UNSAFE = frozenset("/?#&%")
"""Characters a character id may not hold: a console names a window `CHARACTER/WINDOW_START` in a URL."""
SEND_WAIT_S = 0.5
"""After windows are pushed, the worker waits at most this long for the consoles to be sent them."""
TIDY_AFTER_S = 2.0
"""After windows are pushed, the tidy waits this long: its cycle collection holds every thread,
the event loop's sending of the frames included."""
QUIET_MARGIN_S = 3.0
"""Background work beside the service (`quiet`) waits from this long before a window's end until it is out."""
SETTLE_S = 0.03
"""After a window's end, its last lines are taken to have arrived (stragglers still count until end + grace)."""
HELPER_SHARE = 3
"""Of the windows ending together, the judging helper finishes this many for each one the worker
finishes: the worker also stores and pushes all of them (about 30 ms a 3,000-line window, against
about 80 ms to finish one), with the event loop sending frames beside it."""
SWITCH_INTERVAL_S = 0.001
"""How long a thread may hold the interpreter lock while another waits for it (Python's default is
5 ms). The worker hands the lock over on every database statement and some table operations, and
waits as long to get it back whenever the event loop is busy (sending a window's frame, taking
chat in): each of those waits is in the latency path."""
TICK_S = 5.0
"""Every this long each console is told the newest frame number and the store's figures (`_tick`)."""
TALLY_EVERY_S = 1.0
"""The store's figures are read again at most this often, however many consoles and status pages ask."""
REPUBLISH_S = 6 * 3600
"""At start, windows stored to be pushed but never sent are sent if they ended within this long."""
FINISH_NS_PER_LINE = 100_000
"""What finishing a window costs per line it holds, until windows finished here have been timed."""


dumps = compact
"""A frame's text (a window of 3,000 lines is about 3 MB, encoded in the latency path)."""


@dataclass(eq=False)
class Origin:
    """An ingest connection: what it is told (acks, quarantined lines, an error) goes through its
    bounded outbox (`outbox.Outbox`).

    A chat connection sends its lines in time order, so once one of its lines of a later
    window has been absorbed, every line it sent of the earlier windows has been too: `passed`
    is that mark per character, and a window is only finished in its grace (`LiveService._complete`)
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


WINDOW_OUT_OF_RANGE = "window_out_of_range"
"""A line whose window lies further from the wall clock than a window may (`WebConfig.window_ahead_s`,
`WebConfig.late_horizon_s`): quarantined, never opened."""
_KEY_UNSAFE = re.compile("[" + re.escape("".join(sorted(KEY_UNSAFE))) + "\x00-\x1f\x7f-\x9f]")


def key_safe(character_id: str) -> bool:
    """Whether a character id can name its windows in a console's resume key (`CHARACTER/WINDOW_START`)."""
    return bool(character_id) and not _KEY_UNSAFE.search(character_id)


def _panel_line(q: dict, text: str) -> dict:
    """A line quarantined outside any window as the console's panel shows it."""
    return {"seq": q["seq"], "msg_id": q["msg_id"], "character_id": q["character_id"], "reason_code": q["reason_code"],
            "reason": q["reason"], "text": text if len(text) <= PANEL_TEXT else text[:PANEL_TEXT] + "…", "chars": len(text)}


def _window_of(row: dict) -> Key | None:
    """A landing row's (character, window), None when it has no character or time to place it."""
    return (row["character_id"], int(row["window_ns"])) if row["character_id"] and row["window_ns"] is not None else None


@dataclass
class Absorbed:
    quarantined: list[dict] = field(default_factory=list)
    late: list[dict] = field(default_factory=list)
    chat: list[dict] = field(default_factory=list)
    panel: list[dict] = field(default_factory=list)
    """Lines quarantined outside any open window (the console's panel), each with its text."""
    opened: dict[Key, int] = field(default_factory=dict)
    """Windows opened by this batch → the wall-clock instant (ns) they finish."""
    counts: dict[Key, int] = field(default_factory=dict)
    windows: list[Key | None] = field(default_factory=list)
    """The window of each landed line, in landing order (None: no character or time to place it)."""


class LiveService:
    def __init__(self, config: WebConfig, clock=time.time_ns):
        self.config = config
        self.clock = clock
        # SQLite (the embedded default): commits are not flushed to disk one by one; each stays
        # durable across a crash of the process (kill -9 included), not across a power cut.
        # Its log is copied into the database right after windows are pushed, never by a commit
        # in the latency path (a window's store).
        self.engine = _engine(config.warehouse_url, sqlite_synchronous="NORMAL", sqlite_checkpoints=False)
        self.rules = load_config(str(config.rules_config) if config.rules_config else None)
        self.tagger = tag_source(config.tags)
        self.writer = writer(config.summaries)
        """The summary writer (None: the rules' template sentences), as `verdicts judge --summary`."""
        self.step = self.rules.window_seconds * timestamps.NS_PER_SEC
        self.grace = int(config.grace_ms * 1_000_000)
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="live-judge")
        self.hub = Hub(config.client_queue)
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.delivery: DeliveryLog | None = None
        """Every frame pushed to consoles, numbered without gaps in this service's epoch (made at start)."""
        self.stored_frames: dict[str, int] = {}
        """sender → its highest frame number whose lines are landed (worker state)."""
        self.ahead_ns = int(config.window_ahead_s * timestamps.NS_PER_SEC)
        self.late_horizon_ns = int(config.late_horizon_s * timestamps.NS_PER_SEC)
        self.by_end: dict[int, list[int]] = {}
        """Window end → [open windows the worker judges, open windows the helper judges] (`_hands_over`)."""
        # worker-thread state
        self.open: dict[Key, Window] = {}
        self.finished: set[Key] = set()
        self.early: dict[Key, tuple[int, dict | None]] = {}
        """Windows finished and stored in their grace: (lines held then, the frame to push, None when
        a Dagster run judged it first), pushed when due if no line came since."""
        self.seen: dict[str, int] = {}
        """msg_id → landing seq of the lines absorbed whose window is still open: a later copy is a
        duplicate. Lines of finished windows and late lines are looked up in the store instead
        (`records.judged_seqs`), so this holds only the open windows' lines, however long the broadcast."""
        self.helper: JudgeHelper | None = None
        """The judging helper process (`judge_helper`), once started and while it works."""
        self.remote: set[Key] = set()
        """Open windows the helper judges (their lines and ranking live there)."""
        self.helper_lost = False
        """The helper could not start, or failed: every window is judged here."""
        self.refs: References | None = None
        self.stored_push = 0
        """The last window push stored: a late frame judged now is pushed after it."""
        # event-loop state
        self.deadlines: dict[Key, int] = {}
        self.senders: dict[Key, set[Origin]] = {}
        """The connections that sent lines to each open window (`_complete`)."""
        self.ranked_early: set[Key] = set()
        """Windows already ranked in their grace (or asked to be)."""
        self.due_lock = threading.Lock()
        """Guards `early`, `cleared` and `out_early`, shared by the worker and the event loop."""
        self.cleared: set[Key] = set()
        """Windows due while being finished in their grace, with no line of theirs among the frames
        arrived then (the event loop looks at their due time): each goes out as soon as it is stored."""
        self.out_early: set[Key] = set()
        """Windows finished in their grace and pushed as soon as stored (`cleared`), not yet closed."""
        self.finish_ns_per_line = float(FINISH_NS_PER_LINE)
        """What finishing windows early cost per line, as last measured (a moving average)."""
        self.next_end: int | None = None
        """The end (ns) of the next window to finish, None when none is open: set as the drive loop
        turns, so it stays on a window until that one is out (read by `quiet` from other threads)."""
        self.unrecorded: list[tuple[int, float]] = []
        """Window pushes (push sequence, end → sent latency) whose latency is not stored yet: stored
        together once the frames are out (`_record_pushes`), not one transaction per frame beside the sending."""
        self.counts = {"received": 0, "judged": 0, "quarantined": 0, "late": 0, "windows": 0}
        """What this service did since it started (frames and lines), beside the store's figures (`tally`)."""
        self.readers = ThreadPoolExecutor(config.history_readers, thread_name_prefix="live-read")
        """Console history and the store's counts are read here, never on the worker: a thousand
        consoles opening at once delay no acknowledgement and no window."""
        self.reading = asyncio.Semaphore(config.history_readers)
        self.tally_cache: tuple[float, dict] | None = None
        self._tasks: list[asyncio.Task] = []

    # -- life cycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        if self.config.judge_helper:  # first: it loads its tagger while the landing table is recovered
            await self.run(self._start_helper)
        opened = await self.run(self._recover)
        self.deadlines.update(opened)
        self.next_end = min(opened.values()) - self.grace if opened else None
        epoch = await self.run(records.new_epoch, self.engine, self.clock())
        self.delivery = DeliveryLog(epoch, RECENT_FRAMES, RECENT_BYTES)
        # Stored to be pushed, but not on record as sent (stopped or killed in between): sent now.
        for frame, kind, ref, key in await self.run(self._undelivered):
            self._deliver(frame, kind, ref, key)
        await self._record_pushes()
        # What start-up made (modules, references, engines) lives as long as the service: left
        # out of every later cycle collection, which then walks only what came since.
        gc.freeze()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        self._tasks = [asyncio.create_task(self._drive()), asyncio.create_task(self._tick())]

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._record_pushes()
        self.pool.shutdown(wait=True)
        self.readers.shutdown(wait=True)
        if self.helper is not None:
            self.helper.stop()

    async def run(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    # -- ingest ---------------------------------------------------------------------------------

    async def _drive(self) -> None:
        """One loop decides what the worker does next: frames are gathered for up to COALESCE_S
        (the per-batch cost of the gates, tagger and engine is mostly per call, so fewer larger
        batches leave the worker free), and a batch that may hold an ending window's last lines
        is absorbed SETTLE_S after its end at the latest. Between then and the window's end +
        grace, once every connection that sent lines to it has passed it (`_complete`: a line
        still on its way would make it finish twice) or, if it is cheap to finish, halfway through
        the grace (`_ripe`), the worker finishes and stores it early; when it is due, what has arrived for it
        since is absorbed at once and it is pushed right after, never behind a later batch: the
        early result stands unless a line of it arrived meanwhile. Lines of later windows that arrived
        meanwhile wait until it is out."""
        pending: list = []
        started = 0
        getter = asyncio.ensure_future(self.inbox.get())
        settle = int(SETTLE_S * 1e9)
        try:
            while True:
                now = self.clock()
                nearest = min(self.deadlines.values(), default=None)
                self.next_end = None if nearest is None else nearest - self.grace
                if nearest is not None and nearest <= now:
                    pending += self._drain(getter)
                    if getter.done():
                        getter = asyncio.ensure_future(self.inbox.get())
                    if pending and self._holds_due(pending, now):
                        await self._ingest_items(pending)
                        pending = []
                    await self._finish_due()
                    # The frames go out before the worker takes the next batch: two threads
                    # busy at once would pass the interpreter lock back and forth on every
                    # system call the sending makes. Their push latencies are stored then too.
                    await self.hub.sent(SEND_WAIT_S)
                    await self._record_pushes()
                    continue
                lines = sum(len(ls) for _, _, ls in pending)
                flush_at = started + int(COALESCE_S * 1e9)
                end = nearest - self.grace if nearest is not None else None
                if pending and end is not None and started <= end + settle:  # it may hold the ending window's last lines
                    flush_at = min(flush_at, end + settle)
                if pending and (lines >= BATCH_LINES or now >= flush_at):
                    await self._ingest_items(pending)
                    pending = []
                    continue
                ripe = self._ripe(now, pending)
                if ripe:
                    if pending and self._holds(pending, set(ripe)):
                        await self._ingest_items(pending)
                        pending = []
                    self.ranked_early.update(ripe)
                    job = asyncio.ensure_future(self.run(self._rank_early, ripe))
                    # Still finishing when they are due: those with nothing of theirs among the
                    # frames arrived go out as soon as each is stored (`_clear`).
                    for due in sorted({self.deadlines[k] for k in ripe}):
                        if not job.done() and due > self.clock():
                            await asyncio.wait({job}, timeout=(due - self.clock()) / 1e9)
                        if job.done():
                            break
                        pending += self._drain(getter)
                        if getter.done():
                            getter = asyncio.ensure_future(self.inbox.get())
                        keys = {k for k in ripe if self.deadlines[k] == due}
                        if not self._holds(pending, keys):
                            self._clear(keys)
                    try:
                        await job
                    except Exception:  # noqa: BLE001 - they are ranked again when due
                        log.exception("ranking windows early failed")
                    continue
                # A window past its settle but waiting for a connection's mark (`_complete`) is
                # looked at again after the next batch, which goes in as soon as a frame comes.
                early = min((t for k, due in self.deadlines.items() if k not in self.ranked_early
                             for t in (due - self.grace + settle, self._midway(k)) if t > now), default=None)
                if pending and any(due - self.grace + settle <= now for k, due in self.deadlines.items() if k not in self.ranked_early):
                    await self._ingest_items(pending)
                    pending = []
                    continue
                until = [n for n in (nearest, flush_at if pending else None, early) if n is not None]
                timeout = max(0.0, (min(until) - now) / 1e9) if until else None
                done, _ = await asyncio.wait({getter}, timeout=timeout)
                if done:
                    if not pending:
                        started = self.clock()
                    pending.append(getter.result())
                    pending += self._drain(None)
                    getter = asyncio.ensure_future(self.inbox.get())
        finally:
            getter.cancel()

    def quiet(self, margin_s: float = QUIET_MARGIN_S) -> bool:
        """Whether work beside the service (the admin pages' warm-up) may take the interpreter now:
        no window ends within `margin_s` or has ended and is not out yet. Safe from any thread."""
        end = self.next_end
        return end is None or end - int(margin_s * 1e9) > self.clock()

    def _ripe(self, now: int, pending: list = ()) -> list[Key]:
        """The windows to finish early now: past their end and settle, not finished yet, and either
        complete (`_complete`, counting the frames `pending` that arrived but are not absorbed yet)
        or, when cheap to finish (`_cheap`), halfway through their grace."""
        settle = int(SETTLE_S * 1e9)
        waiting = [k for k, due in self.deadlines.items() if due - self.grace + settle <= now and k not in self.ranked_early]
        cheap = self._cheap(waiting)
        return [k for k in waiting if self._complete(k, pending) or (cheap and self._midway(k) <= now)]

    def _midway(self, key: Key) -> int:
        """Halfway through a window's grace: a window that is cheap to finish (`_cheap`) is finished
        then even if a connection that sent to it has not passed it yet."""
        return self.deadlines[key] - self.grace // 2

    def _cheap(self, keys: list[Key]) -> bool:
        """Whether finishing these windows, at the cost measured on earlier ones, takes less than half
        the grace. Finishing them before every sender has passed them costs at most a second finish
        at their due time should a line of theirs still come (what they would cost then anyway);
        for large windows, which take longer than the grace, waiting for the senders is cheaper."""
        lines = sum(self.open[k].lines for k in keys if k in self.open)
        return lines * self.finish_ns_per_line < self.grace // 2

    def _complete(self, key: Key, pending: list = ()) -> bool:
        """Whether every line its connections sent to a window has arrived, as far as their order
        tells: each has passed it (`Origin.passed`, or a line of a later window among its frames
        `pending`, which arrived after its lines of this one) or closed with nothing left to absorb.
        What arrived is absorbed before the window is finished (`_holds`). A line that still comes
        later (one sent out of order) is a straggler: the window finishes again."""
        return all(o.passed.get(key[0], key[1]) > key[1] or (o.closed and o.absorbed >= o.received)
                   or self._passes(o, key, pending) for o in self.senders.get(key, ()))

    def _passes(self, origin: Origin, key: Key, pending: list) -> bool:
        """Whether a frame of `origin` that arrived but is not absorbed yet holds a line of a later
        window of the same character (read as the landing reads it)."""
        now = self.clock()
        for o, _, lines in reversed(pending):  # its newest lines first: the likeliest to have passed
            if o is origin:
                for line in reversed(lines):
                    if line.reason is not None:
                        continue
                    row = store.landing_row(line.text, now, self.rules.window_seconds, self.rules.timezone)
                    if row["character_id"] == key[0] and row["window_ns"] is not None and row["window_ns"] > key[1]:
                        return True
        return False

    def _holds_due(self, items: list, now: int) -> bool:
        """Whether frames not yet absorbed hold a line of a window now due and not out yet (read as the
        landing reads it); a line of a window already out is late."""
        return self._holds(items, {k for k, end in self.deadlines.items() if end <= now and k not in self.out_early})

    def _clear(self, keys: set[Key]) -> None:
        """Windows being finished in their grace are due, and no frame that arrived holds a line of
        theirs: each goes out as soon as it is stored, those stored already now (in push order)."""
        with self.due_lock:
            self.cleared |= keys
            stored = sorted((self.early[k][1]["push"], k) for k in keys
                            if k in self.early and self.early[k][1] and k not in self.out_early)
            for _, key in stored:
                self._push_early(key)

    def _push_early(self, key: Key) -> None:
        """Push a window finished in its grace, due and cleared (`_clear`); `due_lock` held."""
        self.out_early.add(key)
        self._push(self.early[key][1])

    def _holds(self, items: list, due: set[Key]) -> bool:
        """Whether frames not yet absorbed hold a line of one of these windows (read as the landing reads it)."""
        now = self.clock()
        for _, _, lines in items:
            for line in lines:
                if line.reason is not None:
                    continue
                row = store.landing_row(line.text, now, self.rules.window_seconds, self.rules.timezone)
                if (row["character_id"], row["window_ns"]) in due:
                    return True
        return False

    def _drain(self, getter) -> list:
        items = []
        if getter is not None and getter.done():
            items.append(getter.result())
        while not self.inbox.empty():
            items.append(self.inbox.get_nowait())
        return items

    async def _ingest_items(self, items: list) -> None:
        """Land and absorb a batch of frames `(origin, frame number, [frames.Line])`; tell each sender
        what became of its frames. A frame is acknowledged only once every line of it is stored; a
        frame that could not be stored is answered with an error, nothing after it on that connection
        is acknowledged, and the connection closes (its client sends the unacknowledged frames again)."""
        for origin, _, _ in items:
            origin.absorbed += 1
        items = [it for it in items if not it[0].failed]
        try:
            landed, failed, absorbed = await self.run(self._ingest, items)
        except Exception:  # noqa: BLE001 - nothing was acknowledged; the senders keep their frames
            log.exception("ingest batch failed")
            landed, failed, absorbed = [], [(o, n) for o, n, _ in items], Absorbed()
        rows = [r for _, _, rs in landed for r in rs]
        self.counts["received"] += len(rows)
        origin_of = {r["seq"]: (o, n) for o, n, rs in landed for r in rs}
        for key, row in zip(absorbed.windows, rows):
            if key is None:
                continue
            origin = origin_of[row["seq"]][0]
            if key in self.deadlines or key in absorbed.opened:  # open: not a late line
                self.senders.setdefault(key, set()).add(origin)
            if key[1] > origin.passed.get(key[0], key[1] - 1):
                origin.passed[key[0]] = key[1]
        self.counts["quarantined"] += len(absorbed.quarantined)
        for q in absorbed.quarantined:
            origin, frame_no = origin_of.get(q["seq"], (None, None))
            if origin is not None:
                origin.outbox.quarantined_line({"type": "quarantined", "frame": frame_no, "msg_id": q["msg_id"],
                                                "reason_code": q["reason_code"], "reason": q["reason"]})
        refused = {(id(o), n) for o, n in failed}
        for origin, frame_no, _ in items:  # in arrival order: an ack never passes a frame not stored
            if origin.failed:
                continue
            if (id(origin), frame_no) in refused:
                origin.failed = True
                origin.outbox.fail(frame_no, "not stored; connect again and send this frame and every later one again")
            else:
                origin.outbox.acknowledge(frame_no)
        self.deadlines.update(absorbed.opened)
        for frame in absorbed.late:
            self.counts["late"] += frame["lines"]
            self._deliver(frame, "late", str(frame["late_seq"]), (frame["character_id"], frame["window_ns"]))
        if absorbed.panel:
            self._deliver({"type": "quarantine", "count": len(absorbed.panel), "lines": absorbed.panel[-PANEL_SHOWN:]}, "quarantine",
                          str(absorbed.panel[0]["seq"]))
        if absorbed.late or absorbed.panel:
            await self._record_pushes()
        if absorbed.chat or absorbed.counts:
            self.hub.publish(dumps({"type": "chat", "lines": absorbed.chat[-CHAT_SHOWN:],
                                    "open": [{"character_id": k[0], "window_ns": k[1], "lines": n}
                                             for k, n in absorbed.counts.items()]}))

    def _ingest(self, items: list) -> tuple[list, list, Absorbed]:
        """Land the frames (one transaction; should it fail, one per frame, so one frame's failure
        fails no other's), then absorb what landed. Returns ([(origin, frame number, landing rows)],
        [(origin, frame number) not stored], what the absorbing made)."""
        now = self.clock()
        todo = []
        landed: list[tuple[Origin, int, list[dict]]] = []
        for origin, frame_no, lines in items:
            if origin.sender is not None:
                if origin.sender not in self.stored_frames:
                    self.stored_frames[origin.sender] = store.stored_frames_of(self.engine, origin.sender)
                if frame_no <= self.stored_frames[origin.sender]:
                    landed.append((origin, frame_no, []))  # stored before a reconnect: acknowledged again, not stored twice
                    continue
            todo.append((origin, frame_no, lines))
        failed: list[tuple[Origin, int]] = []
        try:
            rows = self._land([e for t in todo for e in self._entries(*t)], now)
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
                    landed.append((origin, frame_no, self._land(self._entries(origin, frame_no, lines), now)))
                except Exception:  # noqa: BLE001 - told to the sender, who sends it again
                    log.exception("frame %d of a connection could not be stored", frame_no)
                    failed.append((origin, frame_no))
        for origin, frame_no, _ in landed:
            if origin.sender is not None:
                self.stored_frames[origin.sender] = max(self.stored_frames[origin.sender], frame_no)
        rows = [r for _, _, rs in landed for r in rs]
        try:
            absorbed = self._absorb(rows, now)
        except Exception:  # noqa: BLE001 - the lines are durable (acknowledged); a restart or the sensor judges them
            log.exception("absorbing landed lines %s..%s failed", rows[0]["seq"] if rows else None, rows[-1]["seq"] if rows else None)
            absorbed = Absorbed()
            absorbed.windows = [None] * len(rows)
        return landed, failed, absorbed

    @staticmethod
    def _entries(origin: Origin, frame_no: int, lines: list[Line]) -> list[dict]:
        return [{"text": line.text, "raw": line.raw, "reason": line.reason, "sender": origin.sender,
                 "frame_no": frame_no if origin.sender is not None else None} for line in lines]

    def _land(self, entries: list[dict], now: int) -> list[dict]:
        return store.land(self.engine, entries, now, self.rules.window_seconds, self.rules.timezone)

    def _opens(self, key: Key | None, arrived_ns: int, known: set[str]) -> bool:
        """Whether a line of `key` that arrived then may open its window (or be counted in it): its
        character has a sheet and can be named in a resume key, and its window is within the horizon."""
        return (key is not None and key[0] in known and key_safe(key[0]) and key not in self.finished
                and self._in_range(key[1], arrived_ns))

    def _in_range(self, window_ns: int, arrived_ns: int) -> bool:
        """A window ending at most `window_ahead_s` after the line arrived, and no more than the late
        horizon before it."""
        end = window_ns + self.step
        return arrived_ns - self.late_horizon_ns <= end <= arrived_ns + self.ahead_ns

    def _absorb(self, rows: list[dict], now: int) -> Absorbed:
        """Gate, tag and filter landed rows; open windows; record quarantine and late lines. A window
        opens only for a character with a sheet whose id can name it, and within the horizon: any
        other line is quarantined outside every window (the console's panel), whatever it holds."""
        out = Absorbed()
        out.windows = [None] * len(rows)
        if not rows:
            return out
        place = {r["seq"]: i for i, r in enumerate(rows)}
        for r in rows:
            if r.get("reason") is not None:  # quarantined as it landed (`frames.INTAKE_CODES`)
                q = {"seq": r["seq"], "msg_id": r["msg_id"], "character_id": None, "window_ns": None,
                     "reason_code": r["reason"][0], "reason": r["reason"][1]}
                out.quarantined.append(q)
                out.panel.append(_panel_line(q, r["text"]))
        rows = [r for r in rows if r.get("reason") is None]
        key_of = {r["seq"]: _window_of(r) for r in rows}
        arrived_of = {r["seq"]: r["arrived_ns"] for r in rows}
        text_of = {r["seq"]: r["text"] for r in rows}
        if self.refs is None or any(self._opens(key_of[r["seq"]], r["arrived_ns"], self.refs.characters)
                                    and key_of[r["seq"]] not in self.open for r in rows):
            self._refresh_references()
        known = self.refs.characters
        groups: dict[int, list[dict]] = {}
        refs_by_id: dict[int, References] = {}
        for r in rows:
            key = key_of[r["seq"]]
            refs = self.open[key].refs if key in self.open else self.refs
            refs_by_id[id(refs)] = refs
            groups.setdefault(id(refs), []).append(r)
        arrived = {r["msg_id"]: r["arrived_ns"] for r in rows if r["msg_id"]}
        for rid, group in groups.items():
            lines = pd.DataFrame({"dataset": "live_chat", "file": "live_pick_landing",
                                  "line": pd.array([g["seq"] for g in group], dtype="int64"), "text": [g["text"] for g in group]})
            prepared = prepare(lines, refs_by_id[rid], self.rules)
            quarantined = records.quarantine_rows(prepared.quarantine, key_of)
            chat = prepared.chat
            # A character with a sheet that no resume key can name, or a window out of range, opens nothing.
            msg_of = dict(zip(chat["line"].tolist(), chat["msg_id"].tolist()))
            refused = [(seq, UNKNOWN_CHARACTER, f"character_id '{c}' cannot name a window (it holds one of {''.join(sorted(KEY_UNSAFE))} or a control character)")
                       if not key_safe(c) else (seq, WINDOW_OUT_OF_RANGE, self._out_of_range(w, arrived_of[seq]))
                       for seq, c, w in zip(chat["line"].tolist(), chat["character_id"].tolist(), chat["window_ns"].tolist())
                       if not key_safe(c) or not self._in_range(int(w), arrived_of[seq])]
            if refused:
                for seq, code, why in refused:
                    key = key_of[seq]
                    quarantined.append({"seq": seq, "msg_id": msg_of[seq],
                                        "character_id": key[0] if key else None, "window_ns": key[1] if key else None,
                                        "reason_code": code, "reason": why})
                chat = chat[~chat["line"].isin([seq for seq, _, _ in refused])]
            ids = chat["msg_id"].tolist()
            earlier = {m: self.seen[m] for m in ids if m in self.seen}
            earlier.update(records.judged_seqs(self.engine, [m for m in ids if m not in earlier]))
            repeated = pd.Series([m in earlier for m in ids], index=chat.index, dtype=bool)
            if repeated.any():  # the first line with an id stands, as in the batch gates
                for m, seq in zip(chat.loc[repeated, "msg_id"], chat.loc[repeated, "line"]):
                    key = key_of[int(seq)]
                    quarantined.append({"seq": int(seq), "msg_id": m, "character_id": key[0], "window_ns": key[1],
                                        "reason_code": DUPLICATE_ID, "reason": f"msg_id '{m}' repeats the row on line {earlier[m]}"})
                chat = chat[~repeated]
            self.seen.update((m, int(s)) for m, s in zip(chat["msg_id"], chat["line"]))
            records.store_quarantine(self.engine, quarantined)
            for q in quarantined:  # in its window when it may be counted there, else in the panel
                key = key_of[q["seq"]]
                if key not in self.open and self._opens(key, arrived_of[q["seq"]], known):
                    self._open(key, out)
                if key in self.open:
                    window = self.open[key]
                    window.lines += 1
                    window.quarantined.append({k: q[k] for k in ("msg_id", "reason_code", "reason")})
                    out.counts[key] = window.lines
                    out.windows[place[q["seq"]]] = key
                else:
                    out.panel.append(_panel_line(q, text_of[q["seq"]]))
            out.quarantined += quarantined
            batch = {}
            # characters by exact codes: pandas' group-by reads text only up to a NUL
            characters = exact_factorize(chat["character_id"])[0]
            for (_, window), part in chat.groupby([characters, chat["window_ns"].to_numpy()], sort=False):
                key = (part["character_id"].iat[0], int(window))
                for seq in part["line"].tolist():
                    out.windows[place[int(seq)]] = key
                if key in self.finished or key in self.out_early:  # pushed: the line is late
                    out.late.append(self._late(key, part, arrived, now))
                    for m in part["msg_id"]:  # stored as late: looked up there from now on
                        del self.seen[m]
                else:
                    if key not in self.open:
                        self._open(key, out)
                    self.open[key].lines += len(part)
                    out.counts[key] = self.open[key].lines
                    batch[key] = part
            self._add_lines(batch, refs_by_id[rid])
            shown = chat.tail(CHAT_SHOWN)
            out.chat += [{"msg_id": m, "character_id": c, "viewer_id": v, "sent_at": s, "body": b, "donation_amount": int(d),
                          "window_ns": int(w)} for m, c, v, s, b, d, w in zip(
                shown["msg_id"], shown["character_id"], shown["viewer_id"], shown["sent_at"], shown["body"],
                shown["donation_amount"], shown["window_ns"])]
        return out

    def _open(self, key: Key, out: Absorbed) -> None:
        """Open a window, judged against the references in force now; the helper takes it when its share is due."""
        self.open[key] = Window(key, self.refs)
        out.opened[key] = key[1] + self.step + self.grace
        remote = self._hands_over(key)
        if remote:
            self.remote.add(key)
        self.by_end.setdefault(key[1], [0, 0])[remote] += 1

    def _out_of_range(self, window_ns: int, arrived_ns: int) -> str:
        end = window_ns + self.step
        if end > arrived_ns + self.ahead_ns:
            return f"its window ends {(end - arrived_ns) / 1e9:.0f} s after the line arrived, more than the {self.ahead_ns / 1e9:.0f} s a window may lie ahead"
        return f"its window ended {(arrived_ns - end) / 1e9:.0f} s before the line arrived, past the {self.late_horizon_ns / 1e9:.0f} s late horizon"

    def _late(self, key: Key, chat: pd.DataFrame, arrived: dict[str, int], now: int) -> dict:
        refs = self.refs
        rows = judge_late(chat, refs, self.rules, self.tagger, self.writer)
        seq_of = {m: int(s) for m, s in zip(chat["msg_id"], chat["line"])}
        return records.store_late(self.engine, key, rows, seq_of, arrived, now, self.stored_push)

    def _refresh_references(self) -> None:
        """The sheets and viewer state in force now (whatever `references` reads them from);
        new windows are judged against them. Unchanged content keeps the same snapshot, so
        windows opened together are ranked in one engine call."""
        raw = references(Path(self.config.input_dir), self.engine, self.rules, self.clock())
        version = (*(hash(tuple(raw[d]["text"])) for d in ("character_sheet", "viewer_relation")), sheets.newest_versions(self.engine))
        if self.refs is None or self.refs.version != version:
            refs = References.of(version, raw, self.rules)
            # Every stored sheet version: each window is judged with the one in force when it opened.
            refs.sheet = versioned_sheet(self.engine, refs.sheet, Path(self.config.input_dir), self.clock())
            self.refs = refs

    # -- finishing windows ------------------------------------------------------------------------

    async def _finish_due(self) -> None:
        now = self.clock()
        keys = [k for _, k in sorted((end, k) for k, end in self.deadlines.items() if end <= now)]
        for k in keys:
            del self.deadlines[k]
            self.ranked_early.discard(k)
            self.senders.pop(k, None)
        try:
            await self.run(self._finish, keys)  # each window is published as soon as it is stored
        except Exception:  # noqa: BLE001 - keep serving; the windows stay in the landing table for a restart or Dagster
            log.exception("finishing windows failed")
        # the next window ends 30 s from now: time to spare, once the frames are out
        self.loop.call_later(TIDY_AFTER_S, self._tidy_soon)

    async def _record_pushes(self) -> None:
        """The frames sent since the last time (their bytes, for consoles that resume) and the window
        pushes' end → sent latencies, into the store in one transaction, once the frames are out."""
        sent = self.delivery.take_unrecorded() if self.delivery is not None else []
        pushed, self.unrecorded = self.unrecorded, []
        if not sent and not pushed:
            return
        try:
            await self.run(records.store_deliveries, self.engine, self.delivery.epoch, sent, pushed)
            self.delivery.recorded(sent)
        except Exception:  # noqa: BLE001 - kept in memory and tried again; the stored latency stands in for these pushes'
            log.exception("recording %d frames sent failed", len(sent))
            self.delivery.unrecord(sent)

    def _tidy_soon(self) -> None:
        try:
            self.pool.submit(self._tidy)
        except RuntimeError:  # stopping: the pool takes no more work
            pass

    def _tidy(self) -> None:
        """After windows are pushed: SQLite's log into the database, and the cycle collection held
        while they were finished."""
        try:
            checkpoint(self.engine)
        except Exception:  # noqa: BLE001 - the log just grows until the next one
            log.exception("checkpoint failed")
        gc.collect()

    def _rank_early(self, keys: list[Key]) -> None:
        """Finish windows whose end has passed but whose grace has not, while the worker would
        otherwise wait: ranked, checked and stored, not yet pushed. When due, the stored frame
        goes out as it is if no line came since; a line arriving in the grace (a straggler)
        makes the window finish again, replacing what was stored, so the result is always that
        of every line the window holds then."""
        windows = [self.open[k] for k in keys if k in self.open]
        judged_ns = self.clock()

        def keep(window: Window, ready: Ready) -> None:
            frame = self._store(window, ready, judged_ns)
            with self.due_lock:
                self.early[window.key] = (window.lines, frame)
                if frame and window.key in self.cleared:
                    self._push_early(window.key)

        with cycle_collection_paused():
            self._finish_each(windows, keep)
        lines = sum(w.lines for w in windows)
        if lines:
            took = (self.clock() - judged_ns) / lines
            self.finish_ns_per_line = 0.7 * self.finish_ns_per_line + 0.3 * took

    def _finish(self, keys: list[Key]) -> list[dict]:
        # The operator waits for this: the cycle collector, which would walk every window's
        # records again, is held until the windows are out (`_tidy`).
        with cycle_collection_paused():
            return self._finish_windows(keys)

    def _finish_windows(self, keys: list[Key]) -> list[dict]:
        """Push the due windows: those stored in their grace at once (in push order), then the
        others as each is stored. A window pushed keeps its place: every later push comes after it."""
        now = self.clock()
        done = [self.open.pop(key) for key in keys]
        self.finished.update(keys)
        for key in keys:
            share = self.by_end.get(key[1])
            if share is not None:
                share[key in self.remote] -= 1
                if share == [0, 0]:
                    del self.by_end[key[1]]
        with self.due_lock:
            out = self.out_early & set(keys)  # pushed already: as they are, whatever came since (late)
            self.out_early -= out
            self.cleared.difference_update(keys)
            early = {w.key: self.early.pop(w.key) for w in done if w.key in self.early}
        again = [w for w in done if w.key not in out and (w.key not in early or early[w.key][0] != w.lines)]
        stands = [k for k in early if k not in out and k not in {w.key for w in again}]
        for w in again:
            if w.key in early:
                log.info("window %s %s: %d line(s) came in its grace after it was finished early; finished again",
                         *w.key, w.lines - early[w.key][0])
        # stored in the grace (None: a Dagster run judged it first, logged then)
        frames = sorted((early[k][1] for k in stands if early[k][1]), key=lambda f: f["push"])
        for frame in frames:
            self._push(frame)

        def push(window: Window, ready: Ready) -> None:
            stale = early.get(window.key, (0, None))[1]
            frame = self._store(window, ready, now, replacing=stale["push"] if stale else None)
            if frame:
                self._push(frame)
                frames.append(frame)

        self._finish_each(again, push)
        for w in done:  # stored (or judged by a Dagster run): their ids are looked up there from now on
            for m in w.seq_of:
                self.seen.pop(m, None)
        self._close_remote([w.key for w in done])
        return frames

    def _store(self, window: Window, ready: Ready, judged_ns: int, replacing: int | None = None) -> dict | None:
        """Store a finished window (one transaction); its frame, or None when a Dagster run judged it first."""
        key = window.key
        end = key[1] + self.step
        stored = records.store_window(self.engine, key, ready.window_start, end, window.lines, ready.msg_order, ready.params,
                                      ready.checks, window.quarantined, judged_ns, self.clock, ready.audit, replacing)
        if stored is None:
            log.warning("window %s %s was already judged elsewhere; not pushed", *key)
            return None
        return records.window_frame(key[0], key[1], ready.window_start, end, window.lines, 0.0, ready.checks,
                                    records.stored_rows(ready.params), window.quarantined, stored[0], self.rules.timezone)

    def _push(self, frame: dict) -> None:
        """Out at once, not after its neighbours; late frames judged from now on come after it."""
        self.stored_push = max(self.stored_push, frame["push"])
        self.loop.call_soon_threadsafe(self._publish_window, frame)

    def _publish_window(self, frame: dict) -> None:
        frame["latency_ms"] = round((self.clock() - frame["window_end_ns"]) / 1e6, 1)
        self.counts["windows"] += 1
        self.counts["judged"] += len(frame["verdicts"])
        self._deliver(frame, "window", str(frame["push"]), (frame["character_id"], frame["window_end_ns"] - self.step))
        self.unrecorded.append((frame["push"], frame["latency_ms"]))

    def _deliver(self, frame: dict, kind: str, ref: str | None, key: Key | None = None) -> None:
        """Number a frame, keep it, and send it to every console (on the event loop: the one place
        numbers are given, in the order frames go out)."""
        d = self.delivery.publish(frame, kind, ref, *(key or (None, None)))
        self.hub.publish(d.data.decode(), d.seq)

    # -- the judging helper -----------------------------------------------------------------------

    def _start_helper(self) -> None:
        """Start the judging helper (`judge_helper`); windows go to it once it has loaded its tagger."""
        try:
            rules = str(self.config.rules_config) if self.config.rules_config else None
            self.helper = JudgeHelper(rules, self.config.tags, self.config.summaries)
        except Exception:  # noqa: BLE001 - the helper only saves time: without it every window is judged here
            log.warning("could not start the judging helper; every window is judged here", exc_info=True)
            self.helper_lost = True

    def helper_state(self) -> str:
        """The judging helper: `ready`, `starting`, `off` or `failed` (asked on the worker thread)."""
        if self.helper is None:
            return "failed" if self.helper_lost else "off"
        try:
            return "ready" if self.helper.ready() else "starting"
        except Exception:  # noqa: BLE001 - it died while loading
            self._lose_helper()
            return "failed"

    def _hands_over(self, key: Key) -> bool:
        """Whether a window opening now goes to the helper: when it is ready and judges fewer than
        HELPER_SHARE times as many of the windows ending with this one as the worker does (the
        worker judges the first). Costs the same however many windows are open."""
        if self.helper is None:
            return False
        try:
            if not self.helper.ready():
                return False
        except Exception:  # noqa: BLE001 - it died while loading
            self._lose_helper()
            return False
        local, remote = self.by_end.get(key[1], (0, 0))  # counted as windows open: no walk over them all
        return remote < HELPER_SHARE * local

    def _add_lines(self, batch: dict[Key, pd.DataFrame], refs: References) -> None:
        """The helper's windows' lines are sent to it (first: it judges them while the worker runs
        `add_lines` on its own windows' lines)."""
        remote = {k: p for k, p in batch.items() if k in self.remote}
        if remote:
            for key, part in remote.items():  # the lines to rebuild the window from, should the helper fail
                self.open[key].seq_of.update(zip(part["msg_id"], part["line"].astype("int64").tolist()))
            try:
                self.helper.add(remote, refs)
            except Exception:  # noqa: BLE001 - its windows (these lines included) are rebuilt here
                self._lose_helper()
                remote = {}
        add_lines({k: p for k, p in batch.items() if k not in remote}, self.open, refs, self.rules, self.tagger)

    def _finish_each(self, windows: list[Window], then: Callable[[Window, Ready], None]) -> None:
        """Finish windows (`finish_ready`), in window-end order, and call `then(window, ready)` on
        each as soon as it is ready. Of the windows ending together, the helper finishes its own
        one by one while the worker finishes its own one by one; between two of its own, the worker
        takes whatever the helper has answered (stored while the helper judges the next)."""
        tagger, summaries = canonical(self.config.tags), self.config.summaries
        rest = sorted(windows, key=lambda w: w.key[1])  # not finished yet: rebuilt here should the helper fail
        for _, group in itertools.groupby(list(rest), key=lambda w: w.key[1]):
            group = list(group)
            asked = [w for w in group if w.key in self.remote]
            if asked:
                try:
                    self.helper.ask(asked)
                except Exception:  # noqa: BLE001 - rebuilt here, and finished with the others
                    self._lose_helper(rest)
                    asked = []
            answered: list[Window] = []

            def take(wait: bool) -> None:
                """The helper's answers so far (`wait`: all of them); should it fail, the windows
                it has not answered for are rebuilt and finished here."""
                while len(answered) < len(asked):
                    window = asked[len(answered)]
                    if self.helper is None:  # lost: rebuilt (`_lose_helper`) and finished here
                        ready = finish_ready([window], self.rules, self.writer, tagger, summaries)[0]
                    else:
                        try:
                            if not (wait or self.helper.answered()):
                                return
                            ready = self.helper.answer()
                        except Exception:  # noqa: BLE001 - it failed: its windows are taken back
                            self._lose_helper(rest)
                            continue
                    answered.append(window)
                    then(window, ready)  # a store that fails is not the helper's: it goes up as here

            for window in [w for w in group if w not in asked]:
                then(window, finish_ready([window], self.rules, self.writer, tagger, summaries)[0])
                take(wait=False)
            take(wait=True)
            rest = rest[len(group):]

    def _close_remote(self, keys: list[Key]) -> None:
        """Windows pushed: the helper drops those it held, and reference versions no open window of its uses."""
        gone = [k for k in keys if k in self.remote]
        self.remote.difference_update(gone)
        if gone and self.helper is not None:
            try:
                self.helper.close(gone, {self.open[k].refs.version for k in self.remote} | {self.refs.version})
            except Exception:  # noqa: BLE001 - its remaining windows are rebuilt here
                self._lose_helper()

    def _lose_helper(self, windows: list[Window] = ()) -> None:
        """The helper failed: stopped, and every window it held (the open ones, and `windows` being
        finished) rebuilt here from its lines in the landing table, as they were gated when they came."""
        log.error("the judging helper failed; its %d windows are judged here from now on", len(self.remote), exc_info=True)
        helper, self.helper = self.helper, None
        self.helper_lost = True
        if helper is not None:
            helper.stop(kill=True)
        held = [*(self.open[k] for k in self.remote if k in self.open), *(w for w in windows if w.key in self.remote)]
        for key in self.remote & set(self.open):  # judged here from now on
            share = self.by_end.get(key[1])
            if share is not None:
                share[1] -= 1
                share[0] += 1
        self.remote = set()
        for window in {id(w): w for w in held}.values():
            seqs = sorted(window.seq_of.values())
            if not seqs:
                continue
            lines = pd.DataFrame({"dataset": "live_chat", "file": "live_pick_landing", "line": pd.array(seqs, dtype="int64"),
                                  "text": records.landing_texts(self.engine, seqs)})
            chat = prepare(lines, window.refs, self.rules).chat
            add_lines({window.key: chat}, {window.key: window}, window.refs, self.rules, self.tagger)

    # -- consoles ---------------------------------------------------------------------------------

    def history_through(self) -> int:
        """The last frame number given: a console joining now is sent everything up to it as history."""
        return self.delivery.seq

    async def history(self, through: int, after_seq: int | None = None, epoch: int | None = None,
                      after: str | None = None) -> tuple[list[bytes], dict]:
        """What a console is sent before live frames: the frames after `after_seq` (of `epoch`, this
        service's), or after the window named `after` (`character_id/window_start`), up to frame
        `through`, each exactly as first sent; with neither, the newest `history_windows` windows and
        what was pushed after them (within `history_bytes`). Frames past what is kept, another
        epoch's numbers, or a window never sent are too old: the console is told so (`too_old`)
        and sent the newest windows instead. Returns (frames, the `resumed` frame's fields)."""
        mine = self.delivery.epoch
        told: dict = {}
        start: tuple[int, int] | None = None
        if after_seq is not None:
            if epoch == mine and 0 <= after_seq <= through:
                start = (mine, after_seq)
            elif epoch is not None and 0 <= after_seq and epoch < mine and await self._read(records.holds_delivery, self.engine, epoch, after_seq):
                start = (epoch, after_seq)  # numbered by an earlier run of the service: on record, so resumed across
            else:
                told = {"too_old": "no such frame on record" if epoch != mine else "no such frame"}
        elif after:
            character, _, window_start = after.rpartition("/")
            start = await self._read(records.window_delivery, self.engine, character, window_start) if character else None
            if start is None:
                told = {"too_old": f"no window {after!r} was sent"}
        if start is not None:
            frames = await self._range(start, through, self.config.resume_frames)
            if frames is not None:
                return frames, {"mode": "after_seq" if after_seq is not None else "after"}
            told = {"too_old": f"more than {self.config.resume_frames} frames were sent since, or they are no longer kept"}
        cutoff = await self._read(records.newest_windows_from, self.engine, self.config.history_windows)
        frames = (await self._range(max(cutoff, (0, 0)), through, None)) or []
        size, kept = 0, []
        for data in reversed(frames):  # the newest within the bytes allowed
            size += len(data)
            if size > self.config.history_bytes:
                break
            kept.append(data)
        return kept[::-1], {"mode": "newest", **told}

    async def _range(self, after: tuple[int, int], through: int, limit: int | None) -> list[bytes] | None:
        """The frames after `after` ((epoch, seq)) up to this epoch's frame `through`: those in memory
        from there, the rest from the store; None when more than `limit`, or some are no longer kept."""
        mine, log_ = self.delivery.epoch, self.delivery
        if after[0] == mine:
            held = log_.held(after[1])
            if held is not None:
                held = [d for d in held if d.seq <= through]
                return None if limit is not None and len(held) > limit else [d.data for d in held]
        recorded = min(log_.recorded_through, through)
        stored = [] if after >= (mine, recorded) else await self._read(
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

    async def _read(self, fn, *args):
        """A read of the store for consoles, on the readers (never the worker), a few at a time."""
        async with self.reading:
            return await asyncio.get_running_loop().run_in_executor(self.readers, fn, *args)

    async def tally(self) -> dict:
        """The store's figures (`records.counts`), read at most once a second, on the readers."""
        now = time.monotonic()
        if self.tally_cache is None or now - self.tally_cache[0] > TALLY_EVERY_S:
            known = set(self.refs.characters) if self.refs is not None else set()
            self.tally_cache = (time.monotonic(), await self._read(records.counts, self.engine, known))
        return self.tally_cache[1]

    async def pick_up(self, msg_id: str, by: str | None) -> dict | None:
        frame = await self.run(records.pick_up, self.engine, msg_id, self.clock(), by)
        if frame and "error" not in frame:
            self._deliver(frame, "pickup", msg_id)
            await self._record_pushes()
        return frame

    def join(self) -> Client | None:
        """A console's queue, None when `max_consoles` are connected already."""
        if len(self.hub.clients) >= self.config.max_consoles:
            return None
        return self.hub.join()

    async def _tick(self) -> None:
        """Every few seconds, the newest frame number and the store's figures to every console: a
        console that holds less than that number has missed a frame and resumes from the last it holds."""
        while True:
            await asyncio.sleep(TICK_S)
            if not self.hub.clients:
                continue
            try:
                counts = await self.tally()
            except Exception:  # noqa: BLE001 - the next tick tries again
                log.exception("reading the store's figures failed")
                counts = None
            self.hub.publish(dumps({"type": "tick", "epoch": self.delivery.epoch, "seq": self.delivery.seq, "counts": counts}))

    # -- start-up ---------------------------------------------------------------------------------

    def _undelivered(self) -> list[tuple[dict, str, str, Key]]:
        """Frames stored to be pushed but not on record as sent (`records.undelivered`), rebuilt, in
        the order they were to go out: (frame, kind, ref, window)."""
        todo = records.undelivered(self.engine, self.clock() - int(REPUBLISH_S * timestamps.NS_PER_SEC))
        out = []
        for frame, kind in records.stored_frames(self.engine, todo["window"], todo["late"], self.rules.timezone):
            if kind == "window":
                out.append((frame, kind, str(frame["push"]), (frame["character_id"], frame["window_end_ns"] - self.step)))
            else:
                out.append((frame, kind, str(frame["late_seq"]), (frame["character_id"], frame["window_ns"])))
        if out:
            log.warning("sending %d frames stored before a restart but never sent", len(out))
        return out

    def _recover(self) -> dict[Key, int]:
        """Absorb every landing line left unprocessed; windows already over finish at once."""
        store.ensure_tables(self.engine)
        self.finished = records.finished_windows(self.engine)
        self.stored_push = records.last_push_seq(self.engine)
        self._refresh_references()
        opened: dict[Key, int] = {}
        after = 0
        while True:
            rows = records.unprocessed(self.engine, after, BATCH_LINES)
            if not rows:
                break
            absorbed = self._absorb(rows, self.clock())
            opened.update(absorbed.opened)
            after = rows[-1]["seq"]
        for key in opened:  # count and list what was quarantined before the restart too
            self.open[key].lines, self.open[key].quarantined = records.window_lines(self.engine, key)
        if opened:
            log.warning("recovered %d open windows from the landing table", len(opened))
        return opened
