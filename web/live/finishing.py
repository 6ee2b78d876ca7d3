"""The third stage: windows finished (ranked, checked), stored, and handed out to be published.

A window due (end + grace) is finished then. One whose end has passed may be finished early, in its
grace (`rank_early`: ranked, checked and stored, not yet pushed); when it is due, that result goes out
as it is unless a line of it arrived meanwhile (a straggler), which makes it finish again with every
line it holds, the new result replacing the stored one. One found due while still being finished, with
nothing of its own among the frames arrived (`clear`), goes out the moment it is stored; a line of it
absorbed after that is late. Frames are handed out in the order they are ready to go: the publisher
numbers them as they go out, so whatever order the worker and the helper finish in, no console misses
one. `early`, `cleared` and `out_early` are shared with the event loop under `lock`; the rest is the
worker's.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

import sqlalchemy as sa

from web.live import records, texts
from web.live.buffer import WindowBuffer
from web.live.judging import Judging
from web.live.policy import FINISH_NS_PER_LINE
from web.live.ready import Ready
from web.live.windows import Key, Window
from rules.common.collector import cycle_collection_paused
from rules.live_pick.config import LivePickConfig

log = logging.getLogger("verdicts.live")


class Finishing:
    def __init__(self, engine: sa.Engine, buffer: WindowBuffer, judging: Judging, rules: LivePickConfig, clock,
                 push: Callable[[dict], None]):
        """`push(frame)`: hand a stored window's frame out to be published (on the event loop)."""
        self.engine, self.buffer, self.judging, self.rules, self.clock, self.push_out = engine, buffer, judging, rules, clock, push
        self.lock = threading.Lock()
        """Guards `early`, `cleared` and `out_early`, shared by the worker and the event loop."""
        self.early: dict[Key, tuple[int, dict | None]] = {}
        """Windows finished and stored in their grace: (lines held then, the frame to push, None when
        a Dagster run judged it first), pushed when due if no line came since."""
        self.cleared: set[Key] = set()
        """Windows due while being finished in their grace, with no line of theirs among the frames
        arrived then (the event loop looks at their due time): each goes out as soon as it is stored."""
        self.out_early: set[Key] = set()
        """Windows finished in their grace and pushed as soon as stored (`cleared`), not yet closed."""
        self.stored_push = 0
        """The last window push handed out: a late frame judged now is pushed after it."""
        self.ns_per_line = float(FINISH_NS_PER_LINE)
        """What finishing windows early cost per line, as last measured (a moving average)."""
        self.parked: list[Window] = []
        """Windows finished and handed out, freed by `free_parked` once the frames are out: freeing a
        1,700-line window's records takes about 10 ms, which would otherwise delay the next window."""

    def pushed(self, key: Key) -> bool:
        """Whether a window went out already in its grace (a line of it absorbed now is late)."""
        return key in self.out_early

    # -- on the worker ------------------------------------------------------------------------------

    def rank_early(self, keys: list[Key]) -> None:
        """Finish windows whose end has passed but whose grace has not, while the worker would
        otherwise wait: ranked, checked and stored, not yet pushed (see the module)."""
        windows = [self.buffer.open[k] for k in keys if k in self.buffer.open]
        judged_ns = self.clock()

        def keep(window: Window, ready: Ready) -> None:
            frame = self._store(window, ready, judged_ns)
            with self.lock:
                self.early[window.key] = (window.lines, frame)
                if frame and window.key in self.cleared:
                    self._push_early(window.key)

        with cycle_collection_paused():
            self.judging.finish_each(windows, keep)
        lines = sum(w.lines for w in windows)
        if lines:
            took = (self.clock() - judged_ns) / lines
            self.ns_per_line = 0.7 * self.ns_per_line + 0.3 * took

    def finish(self, keys: list[Key]) -> list[dict]:
        """Finish the due windows and hand out their frames: those stored in their grace at once (in
        the order they were stored), then the others as each is stored. Returns the frames handed out."""
        # The operator waits for this: the cycle collector, which would walk every window's
        # records again, is held until the windows are out (the service's tidy).
        with cycle_collection_paused():
            return self._finish(keys)

    def _finish(self, keys: list[Key]) -> list[dict]:
        now = self.clock()
        self.judging.closing(keys)
        done = self.buffer.take(keys)
        with self.lock:
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

        self.judging.finish_each(again, push)
        self.buffer.forget(done)
        self.judging.close_remote([w.key for w in done])
        self.parked += done
        return frames

    def free_parked(self) -> None:
        """Free the windows finished since the last call (`parked`), on the worker, out of the latency path."""
        self.parked = []

    def _store(self, window: Window, ready: Ready, judged_ns: int, replacing: int | None = None) -> dict | None:
        """Store a finished window (one transaction); its frame, or None when a Dagster run judged it first."""
        key = window.key
        end = key[1] + self.buffer.step
        stored = records.store_window(self.engine, key, ready.window_start, end, window.lines, ready.msg_order, ready.params,
                                      ready.checks, window.quarantined, judged_ns, self.clock, ready.audit, replacing)
        if stored is None:
            log.warning("window %s %s was already judged elsewhere; not pushed", *key)
            return None
        return records.window_frame(key[0], key[1], ready.window_start, end, window.lines, 0.0, ready.checks,
                                    records.stored_rows(ready.params), window.quarantined, stored[0], self.rules.timezone,
                                    texts.ordered(window.texts, ready.msg_order))

    def _push(self, frame: dict) -> None:
        """Out at once, not after its neighbours; late frames judged from now on come after it."""
        self.stored_push = max(self.stored_push, frame["push"])
        self.push_out(frame)

    # -- on the event loop --------------------------------------------------------------------------

    def clear(self, keys: set[Key]) -> None:
        """Windows being finished in their grace are due, and no frame that arrived holds a line of
        theirs: each goes out as soon as it is stored, those stored already now (in push order)."""
        with self.lock:
            self.cleared |= keys
            stored = sorted((self.early[k][1]["push"], k) for k in keys
                            if k in self.early and self.early[k][1] and k not in self.out_early)
            for _, key in stored:
                self._push_early(key)

    def _push_early(self, key: Key) -> None:
        """Push a window finished in its grace, due and cleared (`clear`); `lock` held."""
        self.out_early.add(key)
        self._push(self.early[key][1])
