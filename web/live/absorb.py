"""The second stage: landed lines absorbed into the window buffer. Owned by the worker thread.

Each batch of landing rows is gated (against the references of the window a line falls in, or those
in force now), and each line then goes one way: quarantined (by the gates, before them as it landed,
because no window may take it, or as a copy of an id already seen), into its open window (opened
now if it may open), or late (its window was pushed: judged in a follow-up, never in the window).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import sqlalchemy as sa

from web.live import records, texts
from web.live.banners import ClockSkew
from web.live.buffer import KEY_UNSAFE, WINDOW_OUT_OF_RANGE, WindowBuffer, key_safe, window_of
from web.live.judging import Judging
from web.live.windows import Key, References, Window, judge_late, prepare
from rules.common.distinct import exact_factorize
from rules.common.gates import DUPLICATE_ID
from rules.live_pick.config import LivePickConfig
from rules.live_pick.normalise import UNKNOWN_CHARACTER

CHAT_SHOWN = 40
"""Lines of each batch shown in the console's flowing chat (the counts cover them all)."""
PANEL_TEXT = 300
"""Characters of a quarantined line's text shown in the console's panel of lines outside any window."""


@dataclass
class Absorbed:
    quarantined: list[dict] = field(default_factory=list)
    late: list[dict] = field(default_factory=list)
    """The `late` frames judged from this batch."""
    chat: list[dict] = field(default_factory=list)
    panel: list[dict] = field(default_factory=list)
    """Lines quarantined outside any open window (the console's panel), each with its text."""
    opened: dict[Key, int] = field(default_factory=dict)
    """Windows opened by this batch → the wall-clock instant (ns) they are due."""
    counts: dict[Key, int] = field(default_factory=dict)
    windows: list[Key | None] = field(default_factory=list)
    """The window of each landed line, in landing order (None: none can take it)."""


def panel_line(q: dict, text: str) -> dict:
    """A line quarantined outside any window as the console's panel shows it."""
    return {"seq": q["seq"], "msg_id": q["msg_id"], "character_id": q["character_id"], "reason_code": q["reason_code"],
            "reason": q["reason"], "text": text if len(text) <= PANEL_TEXT else text[:PANEL_TEXT] + "…", "chars": len(text)}


class Absorber:
    def __init__(self, engine: sa.Engine, buffer: WindowBuffer, judging: Judging, rules: LivePickConfig, tagger, writer,
                 grace_ns: int, pushed, last_push):
        """`pushed(key)`: whether a window was pushed already (its lines are late); `last_push()`: the
        last window push stored, after which a late frame judged now goes."""
        self.engine, self.buffer, self.judging, self.rules = engine, buffer, judging, rules
        self.tagger, self.writer, self.grace_ns = tagger, writer, grace_ns
        self.pushed, self.last_push = pushed, last_push
        self.skew = ClockSkew()
        """How far the lines' sent_at is from the wall clock (a console banner when far)."""

    def absorb(self, rows: list[dict], now: int) -> Absorbed:
        """Gate, tag and filter landed rows; open windows; record quarantine and late lines."""
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
                out.panel.append(panel_line(q, r["text"]))
        rows = [r for r in rows if r.get("reason") is None]
        buffer = self.buffer
        key_of = {r["seq"]: window_of(r) for r in rows}
        if buffer.refs is None or any(key_of[r["seq"]] not in buffer.open
                                      and buffer.opens(key_of[r["seq"]], r["arrived_ns"], buffer.refs.characters) for r in rows):
            buffer.refresh_references()
        for refs, group in self._by_references(rows, key_of):
            self._absorb_group(group, refs, key_of, place, now, out)
        return out

    def _by_references(self, rows: list[dict], key_of: dict) -> list[tuple[References, list[dict]]]:
        """Rows by the references they are gated against: their open window's, or those in force now."""
        groups: dict[int, tuple[References, list[dict]]] = {}
        for r in rows:
            key = key_of[r["seq"]]
            refs = self.buffer.open[key].refs if key in self.buffer.open else self.buffer.refs
            groups.setdefault(id(refs), (refs, []))[1].append(r)
        return list(groups.values())

    def _absorb_group(self, group: list[dict], refs: References, key_of: dict, place: dict, now: int, out: Absorbed) -> None:
        arrived_of = {r["seq"]: r["arrived_ns"] for r in group}
        lines = pd.DataFrame({"dataset": "live_chat", "file": "live_pick_landing",
                              "line": pd.array([g["seq"] for g in group], dtype="int64"), "text": [g["text"] for g in group]})
        prepared = prepare(lines, refs, self.rules)
        quarantined = records.quarantine_rows(prepared.quarantine, key_of)
        self.skew.see(prepared.chat["sent_at_ns"].tolist(), [arrived_of[int(s)] for s in prepared.chat["line"].tolist()])
        chat = self._without_unwindowable(prepared.chat, key_of, arrived_of, quarantined)
        chat = self._without_copies(chat, key_of, quarantined)
        records.store_quarantine(self.engine, quarantined)
        text_of = {r["seq"]: r["text"] for r in group}
        for q in quarantined:  # in its window when it may be counted there, else in the panel
            key = key_of[q["seq"]]
            if key not in self.buffer.open and self.buffer.opens(key, arrived_of[q["seq"]], self.buffer.refs.characters):
                self._open(key, out)
            if key in self.buffer.open:
                window = self.buffer.open[key]
                window.lines += 1
                window.quarantined.append({**{k: q[k] for k in ("msg_id", "reason_code", "reason")},
                                           "text": texts.shown_text(text_of[q["seq"]])})
                out.counts[key] = window.lines
                out.windows[place[q["seq"]]] = key
            else:
                out.panel.append(panel_line(q, text_of[q["seq"]]))
        out.quarantined += quarantined
        self.judging.add_lines(self._into_windows(chat, place, {r["msg_id"]: r["arrived_ns"] for r in group if r["msg_id"]}, now, out,
                                                  text_of), refs)
        shown = chat.tail(CHAT_SHOWN)
        out.chat += [{"msg_id": m, "character_id": c, "viewer_id": v, "sent_at": s, "body": b, "donation_amount": int(d),
                      "window_ns": int(w)} for m, c, v, s, b, d, w in zip(
            shown["msg_id"], shown["character_id"], shown["viewer_id"], shown["sent_at"], shown["body"],
            shown["donation_amount"], shown["window_ns"])]

    def _without_unwindowable(self, chat: pd.DataFrame, key_of: dict, arrived_of: dict, quarantined: list[dict]) -> pd.DataFrame:
        """Accepted lines no window may take (a character id no resume key can name, a window out of
        range) move to quarantine."""
        msg_of = dict(zip(chat["line"].tolist(), chat["msg_id"].tolist()))
        refused = [(seq, UNKNOWN_CHARACTER,
                    f"character_id '{c}' cannot name a window (it holds one of {''.join(sorted(KEY_UNSAFE))} or a control character)")
                   if not key_safe(c) else (seq, WINDOW_OUT_OF_RANGE, self.buffer.out_of_range(w, arrived_of[seq]))
                   for seq, c, w in zip(chat["line"].tolist(), chat["character_id"].tolist(), chat["window_ns"].tolist())
                   if not key_safe(c) or not self.buffer.in_range(int(w), arrived_of[seq])]
        if not refused:
            return chat
        for seq, code, why in refused:
            key = key_of[seq]
            quarantined.append({"seq": seq, "msg_id": msg_of[seq], "character_id": key[0] if key else None,
                                "window_ns": key[1] if key else None, "reason_code": code, "reason": why})
        return chat[~chat["line"].isin([seq for seq, _, _ in refused])]

    def _without_copies(self, chat: pd.DataFrame, key_of: dict, quarantined: list[dict]) -> pd.DataFrame:
        """A line repeating an id already seen moves to quarantine: the first line with an id stands,
        as in the batch gates (open windows' ids are held here, earlier ones looked up in the store)."""
        seen = self.buffer.seen
        ids = chat["msg_id"].tolist()
        earlier = {m: seen[m] for m in ids if m in seen}
        earlier.update(records.judged_seqs(self.engine, [m for m in ids if m not in earlier]))
        repeated = pd.Series([m in earlier for m in ids], index=chat.index, dtype=bool)
        if repeated.any():
            for m, seq in zip(chat.loc[repeated, "msg_id"], chat.loc[repeated, "line"]):
                key = key_of[int(seq)]
                quarantined.append({"seq": int(seq), "msg_id": m, "character_id": key[0], "window_ns": key[1],
                                    "reason_code": DUPLICATE_ID, "reason": f"msg_id '{m}' repeats the row on line {earlier[m]}"})
            chat = chat[~repeated]
        seen.update((m, int(s)) for m, s in zip(chat["msg_id"], chat["line"]))
        return chat

    def _into_windows(self, chat: pd.DataFrame, place: dict, arrived: dict, now: int, out: Absorbed,
                      text_of: dict[int, str]) -> dict[Key, pd.DataFrame]:
        """Accepted lines by window: into their open window (opened now if need be), or late when it
        was pushed. Returns the lines to add to open windows. Each window keeps what its viewers wrote
        (`texts.body_of` the landed text) for its frame."""
        batch = {}
        # characters by exact codes: pandas' group-by reads text only up to a NUL
        characters = exact_factorize(chat["character_id"])[0]
        for (_, window), part in chat.groupby([characters, chat["window_ns"].to_numpy()], sort=False):
            key = (part["character_id"].iat[0], int(window))
            for seq in part["line"].tolist():
                out.windows[place[int(seq)]] = key
            bodies = {m: texts.body_of(text_of.get(int(seq))) for m, seq in zip(part["msg_id"], part["line"])}
            if key in self.buffer.finished or self.pushed(key):  # pushed: the line is late
                out.late.append(self._late(key, part, arrived, now, bodies))
                for m in part["msg_id"]:  # stored as late: looked up there from now on
                    del self.buffer.seen[m]
            else:
                if key not in self.buffer.open:
                    self._open(key, out)
                self.buffer.open[key].lines += len(part)
                self.buffer.open[key].texts.update(bodies)
                out.counts[key] = self.buffer.open[key].lines
                batch[key] = part
        return batch

    def _open(self, key: Key, out: Absorbed) -> None:
        """Open a window, judged against the references in force now."""
        self.buffer.open[key] = Window(key, self.buffer.refs)
        out.opened[key] = key[1] + self.buffer.step + self.grace_ns
        self.judging.opened(key)

    def _late(self, key: Key, chat: pd.DataFrame, arrived: dict[str, int], now: int, bodies: dict[str, str | None]) -> dict:
        rows = judge_late(chat, self.buffer.refs, self.rules, self.tagger, self.writer)
        seq_of = {m: int(s) for m, s in zip(chat["msg_id"], chat["line"])}
        return records.store_late(self.engine, key, rows, seq_of, arrived, now, self.last_push(), bodies)
