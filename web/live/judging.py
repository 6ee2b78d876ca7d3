"""Judging windows on two cores: the worker and the judging helper process (`judge_helper`).

The worker judges one window at a time (the interpreter lock lets one thread compute), and at
400 lines/s several characters' windows of thousands of lines end at the same instant. Of the
windows that end together, the helper takes `policy.HELPER_SHARE` for each one the worker keeps (a
window is handed over when it opens); the helper holds them as the service would, gets their gated
lines as they arrive and finishes them when asked, one by one, handing back only what storing needs
(`ready.Ready`). Should the helper die, fail or not answer, every window it held is rebuilt here from
its lines in the landing table and judged here from then on. Owned by the worker thread.
"""

from __future__ import annotations

import itertools
import logging
from typing import Callable

import pandas as pd
import sqlalchemy as sa

from web.live import records
from web.live.buffer import WindowBuffer
from web.live.judge_helper import JudgeHelper
from web.live.policy import HELPER_SHARE
from web.live.ready import Ready, finish_ready
from web.live.windows import Key, References, Window, add_lines, prepare
from rules.live_pick.config import LivePickConfig
from rules.live_pick.names import canonical

log = logging.getLogger("verdicts.live")


class Judging:
    def __init__(self, engine: sa.Engine, buffer: WindowBuffer, rules: LivePickConfig, tagger, writer, tags: str,
                 summaries: str, rules_path: str | None):
        self.engine, self.buffer, self.rules, self.tagger, self.writer = engine, buffer, rules, tagger, writer
        self.tags, self.summaries, self.rules_path = tags, summaries, rules_path
        self.helper: JudgeHelper | None = None
        """The judging helper process, once started and while it works."""
        self.remote: set[Key] = set()
        """Open windows the helper judges (their lines and ranking live there)."""
        self.lost = False
        """The helper could not start, or failed: every window is judged here."""
        self.by_end: dict[int, list[int]] = {}
        """Window start → [open windows the worker judges, open windows the helper judges] (`opened`)."""

    def start_helper(self) -> None:
        """Start the judging helper; windows go to it once it has loaded its tagger."""
        try:
            self.helper = JudgeHelper(self.rules_path, self.tags, self.summaries)
        except Exception:  # noqa: BLE001 - the helper only saves time: without it every window is judged here
            log.warning("could not start the judging helper; every window is judged here", exc_info=True)
            self.lost = True

    def state(self) -> str:
        """The judging helper: `ready`, `starting`, `off` or `failed` (asked on the worker thread)."""
        if self.helper is None:
            return "failed" if self.lost else "off"
        try:
            return "ready" if self.helper.ready() else "starting"
        except Exception:  # noqa: BLE001 - it died while loading
            self.lose_helper()
            return "failed"

    def stop(self) -> None:
        if self.helper is not None:
            self.helper.stop()

    # -- windows opening and closing ----------------------------------------------------------------

    def opened(self, key: Key) -> None:
        """A window opened: the helper takes it when its share of the windows ending with it is due."""
        remote = self._hands_over(key)
        if remote:
            self.remote.add(key)
        self.by_end.setdefault(key[1], [0, 0])[remote] += 1

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
            self.lose_helper()
            return False
        local, remote = self.by_end.get(key[1], (0, 0))  # counted as windows open: no walk over them all
        return remote < HELPER_SHARE * local

    def closing(self, keys: list[Key]) -> None:
        """Windows taken out of the buffer to be finished: no longer counted as open."""
        for key in keys:
            share = self.by_end.get(key[1])
            if share is not None:
                share[key in self.remote] -= 1
                if share == [0, 0]:
                    del self.by_end[key[1]]

    def add_lines(self, batch: dict[Key, pd.DataFrame], refs: References) -> None:
        """A batch's gated lines, by window: the helper's windows' lines are sent to it first (it
        judges them while the worker runs `add_lines` on its own windows' lines)."""
        remote = {k: p for k, p in batch.items() if k in self.remote}
        if remote:
            for key, part in remote.items():  # the lines to rebuild the window from, should the helper fail
                self.buffer.open[key].seq_of.update(zip(part["msg_id"], part["line"].astype("int64").tolist()))
            try:
                self.helper.add(remote, refs)
            except Exception:  # noqa: BLE001 - its windows (these lines included) are rebuilt here
                self.lose_helper()
                remote = {}
        add_lines({k: p for k, p in batch.items() if k not in remote}, self.buffer.open, refs, self.rules, self.tagger)

    # -- finishing ----------------------------------------------------------------------------------

    def finish_each(self, windows: list[Window], then: Callable[[Window, Ready], None]) -> None:
        """Finish windows (`finish_ready`), in window-end order, and call `then(window, ready)` on
        each as soon as it is ready. Of the windows ending together, the helper finishes its own
        one by one while the worker finishes its own one by one; between two of its own, the worker
        takes whatever the helper has answered (stored while the helper judges the next)."""
        tagger, summaries = canonical(self.tags), self.summaries
        rest = sorted(windows, key=lambda w: w.key[1])  # not finished yet: rebuilt here should the helper fail
        for _, group in itertools.groupby(list(rest), key=lambda w: w.key[1]):
            group = list(group)
            asked = [w for w in group if w.key in self.remote]
            if asked:
                try:
                    self.helper.ask(asked)
                except Exception:  # noqa: BLE001 - rebuilt here, and finished with the others
                    self.lose_helper(rest)
                    asked = []
            answered: list[Window] = []

            def take(wait: bool) -> None:
                """The helper's answers so far (`wait`: all of them); should it fail, the windows
                it has not answered for are rebuilt and finished here."""
                while len(answered) < len(asked):
                    window = asked[len(answered)]
                    if self.helper is None:  # lost: rebuilt (`lose_helper`) and finished here
                        ready = finish_ready([window], self.rules, self.writer, tagger, summaries)[0]
                    else:
                        try:
                            if not (wait or self.helper.answered()):
                                return
                            ready = self.helper.answer()
                        except Exception:  # noqa: BLE001 - it failed: its windows are taken back
                            self.lose_helper(rest)
                            continue
                    answered.append(window)
                    then(window, ready)  # a store that fails is not the helper's: it goes up as here

            for window in [w for w in group if w not in asked]:
                then(window, finish_ready([window], self.rules, self.writer, tagger, summaries)[0])
                take(wait=False)
            take(wait=True)
            rest = rest[len(group):]

    def close_remote(self, keys: list[Key]) -> None:
        """Windows pushed: the helper drops those it held, and reference versions no open window of its uses."""
        gone = [k for k in keys if k in self.remote]
        self.remote.difference_update(gone)
        if gone and self.helper is not None:
            try:
                in_use = {self.buffer.open[k].refs.version for k in self.remote} | {self.buffer.refs.version}
                self.helper.close(gone, in_use)
            except Exception:  # noqa: BLE001 - its remaining windows are rebuilt here
                self.lose_helper()

    def lose_helper(self, windows: list[Window] = ()) -> None:
        """The helper failed: stopped, and every window it held (the open ones, and `windows` being
        finished) rebuilt here from its lines in the landing table, as they were gated when they came."""
        log.error("the judging helper failed; its %d windows are judged here from now on", len(self.remote), exc_info=True)
        helper, self.helper = self.helper, None
        self.lost = True
        if helper is not None:
            helper.stop(kill=True)
        open_ = self.buffer.open
        held = [*(open_[k] for k in self.remote if k in open_), *(w for w in windows if w.key in self.remote)]
        for key in self.remote & set(open_):  # judged here from now on
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
