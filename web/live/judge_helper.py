"""A helper process that judges part of the live service's windows, on another core.

The service's worker judges one window at a time (the interpreter lock lets one thread compute),
and at 400 lines/s four characters' windows of 3,000 lines end at the same instant. The service
hands three in four of the windows that end together (`policy.HELPER_SHARE`) to this helper: it
holds them as the service would (`windows.Window`), runs the same `add_lines` on their lines as
they arrive and the same `finish` when the service finishes them, one window at a time, and sends
back each window's `ready.Ready` (only what storing needs) as soon as it is made, written by a
thread of its own (`Replies`): the service stores it while the helper finishes the next. The service stores and pushes every window itself,
so the store and the push order keep one writer; and should the helper fail, the service rebuilds
the helper's windows from the landing table and judges them itself (`judging.Judging.lose_helper`).

Messages (pickled, in order; only `finish` is answered, once per window):
  ("refs", version, References)    the sheets and viewer state windows of `version` are judged on
  ("lines", version, {key: chat})  a batch's gated lines of the helper's windows (`add_lines`)
  ("finish", [(key, version)])     finish these windows, in this order → ("ok", Ready) for each,
                                   or ("error", traceback) in place of the first that fails
  ("close", [key], [version])      windows pushed (dropped here), reference versions no longer used
"""

from __future__ import annotations

import gc
import logging
import sys
import time
import traceback

import pandas as pd

from assets.common.helper_process import HelperProcess, Replies, serve_socket
from web.live.policy import HELPER_ANSWER_WAIT_S, HELPER_SEND_BUFFER, HELPER_TIDY_AFTER_S, SWITCH_INTERVAL_S
from web.live.ready import Ready, finish_ready
from web.live.windows import Key, References, Window, add_lines
from rules.common.collector import cycle_collection_paused
from rules.live_pick.config import load_config
from rules.live_pick.summaries import writer
from rules.live_pick.names import canonical
from rules.live_pick.tags import tag_source

log = logging.getLogger("verdicts.live")
READY = "ready"


class JudgeHelperError(RuntimeError):
    """The helper failed to judge its windows (the message holds its traceback), or did not answer."""


class JudgeHelper(HelperProcess):
    def __init__(self, rules_path: str | None, tags: str, summaries: str) -> None:
        super().__init__(__name__, rules_path or "", tags, summaries, send_buffer=HELPER_SEND_BUFFER)
        self.warm = False
        self.versions: set = set()
        """Reference versions the helper holds."""

    def ready(self) -> bool:
        """Whether the helper has loaded its tagger and takes windows (without waiting); raises
        `JudgeHelperError` when it has exited."""
        if not self.alive():
            raise JudgeHelperError(f"the judging helper exited with {self.proc.returncode}")
        if not self.warm and self.conn.poll(0):
            self.warm = self.conn.recv() == READY
        return self.warm

    def _refs(self, refs: References) -> None:
        if refs.version not in self.versions:
            self.conn.send(("refs", refs.version, refs))
            self.versions.add(refs.version)

    def add(self, batch: dict[Key, pd.DataFrame], refs: References) -> None:
        """A batch's gated lines of the helper's windows, all judged on `refs`."""
        self._refs(refs)
        self.conn.send(("lines", refs.version, batch))

    def ask(self, windows: list[Window]) -> None:
        """Start finishing these windows, in this order (each one's answer is read by `answer`)."""
        for w in windows:
            self._refs(w.refs)
        self.conn.send(("finish", [(w.key, w.refs.version) for w in windows]))

    def answered(self) -> bool:
        """Whether the next window's answer has come (without waiting)."""
        return self.conn.poll(0)

    def answer(self) -> Ready:
        """The next window asked for, finished."""
        if not self.conn.poll(HELPER_ANSWER_WAIT_S):
            raise JudgeHelperError(f"no answer in {HELPER_ANSWER_WAIT_S:.0f} s")
        status, value = self.conn.recv()
        if status != "ok":
            raise JudgeHelperError(value)
        return value

    def close(self, keys: list[Key], versions_in_use: set) -> None:
        """Windows pushed; reference versions other than `versions_in_use` are dropped too."""
        gone = self.versions - versions_in_use
        self.versions -= gone
        self.conn.send(("close", keys, list(gone)))


def _serve(conn, rules_path: str, tags: str, summaries: str) -> None:
    config = load_config(rules_path or None)
    tagger = tag_source(tags)  # the analyser loaded now, before the helper takes windows
    write = writer(summaries)
    tagger_name = canonical(tags)
    gc.freeze()  # what start-up made lives as long as the helper: out of every later collection
    # Answers are written by a thread of their own (`Replies`): while the service reads one between
    # windows of its own, the helper finishes the next. That thread waits for the interpreter lock
    # at every part of an answer the socket takes: no longer than the service's own threads wait.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    replies = Replies(conn)
    replies.send(READY)
    refs: dict = {}
    windows: dict[Key, Window] = {}
    failed: str | None = None
    tidy_at: float | None = None
    while True:
        try:
            if tidy_at is not None and not conn.poll(max(0.0, tidy_at - time.monotonic())):
                gc.collect()
                tidy_at = None
            message = conn.recv()
        except (EOFError, OSError):
            return
        kind = message[0]
        if kind == "refs":
            refs[message[1]] = message[2]
        elif kind == "lines":
            _, version, batch = message
            try:
                for key in batch:
                    windows.setdefault(key, Window(key, refs[version]))
                add_lines(batch, windows, refs[version], config, tagger)
            except Exception:  # noqa: BLE001 - reported at the next finish; the service takes the windows back
                failed = traceback.format_exc()
        elif kind == "finish":
            if failed is not None:
                replies.send(("error", failed))
                continue
            with cycle_collection_paused():  # as in the service: its walks would slow the finish
                for key, version in message[1]:
                    try:
                        window = windows.setdefault(key, Window(key, refs[version]))
                        answer = ("ok", finish_ready([window], config, write, tagger_name, summaries)[0])
                    except Exception:  # noqa: BLE001 - handed back to the service, which judges the windows itself
                        replies.send(("error", traceback.format_exc()))
                        break
                    replies.send(answer)
            tidy_at = time.monotonic() + HELPER_TIDY_AFTER_S
        elif kind == "close":
            _, keys, versions = message
            for key in keys:
                windows.pop(key, None)
            for version in versions:
                refs.pop(version, None)


if __name__ == "__main__":
    conn, args = serve_socket(sys.argv)
    _serve(conn, *args)
