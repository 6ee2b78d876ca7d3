"""The window buffer: every open (character, window) in memory, the windows finished, the ids of the
open windows' lines, the references new windows are judged against, and which lines may open a
window at all. Owned by the worker thread.

A window opens only for a line whose character has a valid sheet, whose id can name a window in a
console's resume key, and whose window lies within the horizon of the moment the line arrived
(`WebConfig.window_ahead_s`, `WebConfig.late_horizon_s`): any other line is quarantined
(`unknown_character`, `window_out_of_range`) and opens nothing, so cheap input cannot fill memory
with windows, and a window's lines cost the same however many are open.
"""

from __future__ import annotations

import re
from pathlib import Path

import sqlalchemy as sa

from live import sheets
from live.judge import references, versioned_sheet
from web.live.windows import Key, References, Window
from rules.common import timestamps
from rules.live_pick.config import LivePickConfig

WINDOW_OUT_OF_RANGE = "window_out_of_range"
"""A line whose window lies further from the wall clock than a window may: quarantined, never opened."""
KEY_UNSAFE = frozenset("/?#&%")
"""Characters a character id may not hold: a console names a window `CHARACTER/WINDOW_START` in a URL."""
_KEY_UNSAFE = re.compile("[" + re.escape("".join(sorted(KEY_UNSAFE))) + "\\x00-\\x1f\\x7f-\\x9f]")


def key_safe(character_id: str) -> bool:
    """Whether a character id can name its windows in a console's resume key (`CHARACTER/WINDOW_START`)."""
    return bool(character_id) and not _KEY_UNSAFE.search(character_id)


def window_of(row: dict) -> Key | None:
    """A landing row's (character, window), None when it has no character or time to place it."""
    return (row["character_id"], int(row["window_ns"])) if row["character_id"] and row["window_ns"] is not None else None


class WindowBuffer:
    def __init__(self, engine: sa.Engine, input_dir: Path, rules: LivePickConfig, clock, window_ahead_s: float,
                 late_horizon_s: float):
        self.engine, self.input_dir, self.rules, self.clock = engine, input_dir, rules, clock
        self.step = rules.window_seconds * timestamps.NS_PER_SEC
        self.ahead_ns = int(window_ahead_s * timestamps.NS_PER_SEC)
        self.late_horizon_ns = int(late_horizon_s * timestamps.NS_PER_SEC)
        self.open: dict[Key, Window] = {}
        self.finished: set[Key] = set()
        self.seen: dict[str, int] = {}
        """msg_id → landing seq of the lines absorbed whose window is still open: a later copy is a
        duplicate. Lines of finished windows and late lines are looked up in the store instead
        (`records.judged_seqs`), so this holds only the open windows' lines, however long the broadcast."""
        self.refs: References | None = None

    def refresh_references(self) -> None:
        """The sheets and viewer state in force now (whatever `references` reads them from); new
        windows are judged against them. Unchanged content keeps the same snapshot, so windows
        opened together are ranked in one engine call."""
        raw = references(self.input_dir, self.engine, self.rules, self.clock())
        version = (*(hash(tuple(raw[d]["text"])) for d in ("character_sheet", "viewer_relation")), sheets.newest_versions(self.engine))
        if self.refs is None or self.refs.version != version:
            refs = References.of(version, raw, self.rules)
            # Every stored sheet version: each window is judged with the one in force when it opened.
            refs.sheet = versioned_sheet(self.engine, refs.sheet, self.input_dir, self.clock())
            self.refs = refs

    def opens(self, key: Key | None, arrived_ns: int, known: frozenset[str]) -> bool:
        """Whether a line of `key` that arrived then may open its window (or be counted in it)."""
        return (key is not None and key[0] in known and key_safe(key[0]) and key not in self.finished
                and self.in_range(key[1], arrived_ns))

    def in_range(self, window_ns: int, arrived_ns: int) -> bool:
        """A window ending at most `window_ahead_s` after the line arrived, and no more than the late
        horizon before it."""
        end = window_ns + self.step
        return arrived_ns - self.late_horizon_ns <= end <= arrived_ns + self.ahead_ns

    def out_of_range(self, window_ns: int, arrived_ns: int) -> str:
        """Why a window is out of range (the quarantine's reason)."""
        end = window_ns + self.step
        if end > arrived_ns + self.ahead_ns:
            return f"its window ends {(end - arrived_ns) / 1e9:.0f} s after the line arrived, more than the {self.ahead_ns / 1e9:.0f} s a window may lie ahead"
        return f"its window ended {(arrived_ns - end) / 1e9:.0f} s before the line arrived, past the {self.late_horizon_ns / 1e9:.0f} s late horizon"

    def take(self, keys: list[Key]) -> list[Window]:
        """Windows leaving the buffer to be finished: from now on, finished."""
        done = [self.open.pop(key) for key in keys]
        self.finished.update(keys)
        return done

    def forget(self, windows: list[Window]) -> None:
        """Windows stored (or judged by a Dagster run): their ids are looked up in the store from now on."""
        for w in windows:
            for m in w.seq_of:
                self.seen.pop(m, None)
