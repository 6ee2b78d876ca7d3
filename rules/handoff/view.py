"""What a judgement sees: the judged day, its neighbours, and the rooms held back.

A room is judged on the day (Asia/Seoul) of its first message, but its messages may run past
midnight and a customer's next room may open the next day. So day D is judged over the
normalised partitions D−1, D and D+1: D−1 tells a room opened before midnight from one
opened on D, D+1 gives the rest of late rooms and the re-entry look-up. Days before the first
partition simply do not exist; a missing D+1 makes re-entry provisional (see `engine`).

Held rooms ("판정 보류"): a rejected message holds its room when the room is known (a readable
room_id, even in a broken line); a room with messages but no valid rooms row is held too; and
a message id repeated across days holds its room. Each held room keeps the rows that caused it,
with their reasons, for the report.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime, time, timedelta

import numpy as np
import pandas as pd

from rules.common import timestamps
from rules.common.days import line_days
from rules.common.distinct import exact_duplicated, exact_factorize
from rules.common.frames import taken
from rules.common.cells import trim
from rules.common.gates import DUPLICATE_ID
from rules.common.normalised import Normalised
from rules.common.bounded_json import encodable
from rules.handoff.config import HandoffConfig
from rules.handoff.normalise import EMPTY_ROOM_ID, TIME_FIELDS, normalise

BEFORE_DAYS = 1
AFTER_DAYS = 1
"""The window around a judged day: D−1 … D+1."""

UNKNOWN_ROOM = "unknown_room"
HELD_COLUMNS = ["room_id", "dataset", "file", "line", "id", "reason_code", "reason", "partition_day"]

_ROOM_IN_TEXT = re.compile(r'"room_id"\s*:\s*("(?:[^"\\]|\\.)*")')


def window_days(day: str) -> list[str]:
    d = date.fromisoformat(day)
    return [(d + timedelta(days=k)).isoformat() for k in range(-BEFORE_DAYS, AFTER_DAYS + 1)]


def whole_input(tables: dict[str, pd.DataFrame], quarantine: pd.DataFrame, config: HandoffConfig) -> dict[str, pd.DataFrame]:
    """The whole input as one view: every room is judged, look-ups reach every day."""
    return combine({None: {**tables, "quarantine": quarantine}}, None, config)


def from_raw(raw: dict[str, pd.DataFrame], day: str | None, config: HandoffConfig) -> tuple[Normalised, dict[str, pd.DataFrame]]:
    """Raw lines of a whole input → (the gated input, the view judged).

    With a day, messages are split into days as the raw partitions are, days D−1 … D+1 are
    gated one by one and combined, and the gated input returned is day D's.
    """
    if day is None:
        norm = normalise(raw, config)
        return norm, whole_input(norm.tables, norm.quarantine, config)
    date.fromisoformat(day)  # ValueError for anything but YYYY-MM-DD
    messages = raw["chat_messages"]
    days = line_days(messages, TIME_FIELDS["chat_messages"], config.timezone) if len(messages) else None
    per_day, judged = {}, None
    for d in window_days(day):
        part = taken(messages, days.to_numpy() == d) if days is not None else messages
        norm = normalise({**raw, "chat_messages": part}, config)
        per_day[d] = {**norm.tables, "quarantine": norm.quarantine}
        judged = norm if d == day else judged
    return judged, combine(per_day, day, config)


def combine(per_day: dict[str | None, dict[str, pd.DataFrame]], day: str | None, config: HandoffConfig) -> dict[str, pd.DataFrame]:
    """Normalised tables of the days present (each with its "quarantine") → the tables judged.

    `per_day` holds only the days that are available; the judged day must be one of them.
    Reference tables come from the judged day; rooms from every day, the judged day's row first.
    """
    if day is not None and day not in per_day:
        raise ValueError(f"the judged day {day} is not among the days read ({', '.join(map(str, per_day))})")
    order = [day] + sorted(d for d in per_day if d != day) if day is not None else list(per_day)
    chat_days = sorted(per_day, key=lambda d: "" if d is None else d)

    parts = [_with_day(per_day[d]["chat_messages"], d) for d in chat_days]
    messages = (parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)) if parts else pd.DataFrame()
    repeated = messages["message_id"].duplicated(keep="first")
    held = []
    if repeated.any():
        kept = messages[~repeated]
        held.append(_repeated_rows(messages[repeated], kept))
        messages = kept.reset_index(drop=True)

    rooms = pd.concat([per_day[d]["rooms"] for d in order], ignore_index=True).drop_duplicates("room_id", keep="first")
    quarantine = pd.concat(
        [per_day[d]["quarantine"].assign(partition_day=d) for d in chat_days if len(per_day[d]["quarantine"])],
        ignore_index=True,
    ) if any(len(per_day[d]["quarantine"]) for d in chat_days) else pd.DataFrame(columns=[*HELD_COLUMNS[1:-1], "raw", "partition_day"])
    held.append(_message_rows(quarantine))
    held.append(_roomless_rows(messages, rooms, quarantine))
    held_frame = pd.concat([h for h in held if len(h)], ignore_index=True) if any(len(h) for h in held) else _empty_held()
    held_frame = held_frame[~exact_duplicated(held_frame, ["room_id", "dataset", "file", "line", "reason_code"])].reset_index(drop=True)

    first = order[0]
    return {
        "chat_messages": messages,
        "rooms": rooms.reset_index(drop=True),
        "handoff_phrases": per_day[first]["handoff_phrases"].reset_index(drop=True),
        "help_articles": per_day[first]["help_articles"].reset_index(drop=True),
        "held": held_frame[HELD_COLUMNS],
        "scope": pd.DataFrame({"day": [day], "lookahead_end_ns": [_lookahead_end(per_day, day, config)]}, dtype=object),
    }


def _with_day(messages: pd.DataFrame, day: str | None) -> pd.DataFrame:
    """A day's messages with their `partition_day`, over the same column arrays (`assign` copied them all)."""
    columns = {c: messages[c]._values for c in messages.columns}
    columns["partition_day"] = np.full(len(messages), day, dtype=object)
    return pd.DataFrame(columns, index=pd.RangeIndex(len(messages)), copy=False)


def _lookahead_end(per_day: dict, day: str | None, config: HandoffConfig) -> int | None:
    """End (exclusive, epoch ns) of the data after the judged day, or None when the look-ahead is complete."""
    if day is None:
        return None
    last = date.fromisoformat(day)
    for _ in range(AFTER_DAYS):
        nxt = last + timedelta(days=1)
        if nxt.isoformat() not in per_day:
            end = datetime.combine(last + timedelta(days=1), time(), tzinfo=timestamps.zone(config.timezone))
            return timestamps.parse(end.isoformat(), config.timezone).ns
        last = nxt
    return None


def _empty_held() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in HELD_COLUMNS})


def room_in_raw(text: object) -> str | None:
    """The room a rejected line names, when it can be read — even from a line that is not valid JSON."""
    if not isinstance(text, str):
        return None
    try:
        obj = json.loads(text)
        value = obj.get("room_id") if isinstance(obj, dict) else None
    except (ValueError, RecursionError):
        match = _ROOM_IN_TEXT.search(text)
        try:
            value = json.loads(match.group(1)) if match else None
        except ValueError:
            value = None
    value = trim(value) if isinstance(value, str) and encodable(value) else None
    return value or None


def _message_rows(quarantine: pd.DataFrame) -> pd.DataFrame:
    q = quarantine[quarantine["dataset"] == "chat_messages"] if len(quarantine) else quarantine
    if not len(q):
        return _empty_held()
    rooms = [None if code == EMPTY_ROOM_ID else room_in_raw(raw) for code, raw in zip(q["reason_code"], q["raw"])]
    return q.assign(room_id=rooms)[HELD_COLUMNS].astype(object)


def _roomless_rows(messages: pd.DataFrame, rooms: pd.DataFrame, quarantine: pd.DataFrame) -> pd.DataFrame:
    """Rooms with messages but no valid rooms row: the rooms rows that failed, or a row saying none exists.

    Rows are gathered as records and made a frame once: a frame per room cost 0.3 ms each, and a
    million messages hold thousands of such rooms."""
    if not len(messages):
        return _empty_held()
    codes, seen = exact_factorize(messages["room_id"])  # a room per code, whatever NUL it holds
    seen = seen.tolist()
    missing = sorted(set(seen) - set(rooms["room_id"]))
    if not missing:
        return _empty_held()
    # Codes number the rooms in order of first appearance: the running maximum rises at each room's first message.
    first_row = np.flatnonzero(np.diff(np.maximum.accumulate(codes), prepend=-1) > 0)
    code_of = {room: k for k, room in enumerate(seen)}
    days = messages["partition_day"].to_numpy(dtype=object)
    bad_rooms = quarantine[quarantine["dataset"] == "rooms"] if len(quarantine) else quarantine
    failed: dict[object, list[dict]] = {}
    if len(bad_rooms):
        cited = bad_rooms.assign(room_id=[room_in_raw(t) for t in bad_rooms["raw"]],
                                 reason=[f"{r}: the room has no valid rooms row and is held" for r in bad_rooms["reason"]])
        for row in cited[HELD_COLUMNS].to_dict("records"):
            failed.setdefault(row["room_id"], []).append(row)
    records = []
    for room in missing:
        records += failed.get(room) or [{
            "room_id": room, "dataset": "rooms", "file": None, "line": None, "id": room,
            "reason_code": UNKNOWN_ROOM, "reason": f"rooms has no row for '{room}': the room is held",
            "partition_day": days[first_row[code_of[room]]],
        }]
    return pd.DataFrame({c: pd.Series([r[c] for r in records], dtype=object) for c in HELD_COLUMNS})


def _repeated_rows(repeated: pd.DataFrame, kept: pd.DataFrame) -> pd.DataFrame:
    """A message id already seen on another day: the later copy is left out and its room held."""
    if not len(repeated):
        return _empty_held()
    first = kept.set_index("message_id")["partition_day"]
    return pd.DataFrame({
        "room_id": repeated["room_id"], "dataset": "chat_messages", "file": repeated["file"], "line": repeated["line"],
        "id": repeated["message_id"], "reason_code": DUPLICATE_ID,
        "reason": [f"message_id '{m}' repeats a message of {first.get(m)}: room '{r}' is held"
                   for m, r in zip(repeated["message_id"], repeated["room_id"])],
        "partition_day": repeated["partition_day"],
    })[HELD_COLUMNS].astype(object)


def held_rooms(held: pd.DataFrame) -> set[str]:
    return {r for r in held["room_id"] if isinstance(r, str) and r}

