"""A row-by-row re-computation of the §6 rules, written independently of the engine.

Plain loops over plain dicts, Decimal arithmetic on the parsed instants instead of integer
hundredths, `str.find` instead of vectorised search: as the rules read in the spec.
It serves `verdicts validate` and the asset checks (re-computing every verdict from the input
rows) and the tests that hold the engine to it. Meant for checking, not speed.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pandas as pd

from rules.common import timestamps
from rules.common.evidence import record_columns, rows_of
from rules.common.cells import trim
from rules.handoff import verdicts as V
from rules.handoff.config import HandoffConfig

FIELDS = (
    "customer_id", "first_trigger_message_id", "matched_phrase", "ai_after_trigger", "counselor_message_count",
    "uncited_message_ids", "handoff_at", "first_counselor_at", "reply_wait_min", "first_reply_min", "closed_at",
    "next_room_id", "reentry_hours",
)
"""The derived output fields, compared one by one."""


@dataclass
class Expected:
    room_id: str
    status: str
    verdict: str | None
    opened_day: str | None
    fields: dict = field(default_factory=dict)
    ai_count: int = 0
    trigger_text: str | None = None
    on_time: bool = False


def instant(text: str, tz: str) -> int:
    """Epoch nanoseconds of a timestamp, read by the one parser the gates use (ValueError if it is none)."""
    stamp = timestamps.parse(text, tz)
    if stamp is None:
        raise ValueError(f"{text!r} is not a timestamp the gates let through")
    return stamp.ns


def round2(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def minutes(a: int, b: int) -> Decimal:
    """b − a in minutes, exact to the nanosecond, rounded half up to 0.01."""
    return round2(Decimal(b - a) / (60 * timestamps.NS_PER_SEC))


def hours(a: int, b: int) -> Decimal:
    return round2(Decimal(b - a) / (3600 * timestamps.NS_PER_SEC))


def folded(text: object, config: HandoffConfig) -> str:
    if not isinstance(text, str):
        return ""
    m = config.phrase_matching
    if m.unicode_form == "NFC":
        text = unicodedata.normalize("NFC", text)
    if m.remove_whitespace:
        text = "".join(text.split())
    return text.casefold() if m.ignore_case else text


def _records(frame: pd.DataFrame) -> list[dict]:
    """The rows as `frame.to_dict("records")` gives them, with None for every missing cell: missing
    as `pd.isna` reads a cell (a list or a map never is), asked of a whole column at once."""
    columns = record_columns(frame)
    for name, values in columns.items():
        for i in np.flatnonzero(frame[name].isna().to_numpy()):
            values[i] = None
    return rows_of(columns)


def messages_by_room(messages: pd.DataFrame, tz: str) -> dict[str, list[dict]]:
    """room_id → its messages as records, each with its instant (`at`), in (at, message_id) order.
    The instants are read by the gates' parser a column at a time (`timestamps.stored_column`,
    which reads each value as `instant` does)."""
    records = _records(messages)
    at = timestamps.stored_column([m["sent_at"] for m in records], tz).ns.tolist()
    by_room = defaultdict(list)
    for m, ns in zip(records, at):
        m["at"] = ns
        by_room[m["room_id"]].append(m)
    for msgs in by_room.values():
        msgs.sort(key=lambda m: (m["at"], m["message_id"]))
    return by_room


def expected_rooms(tables: dict[str, pd.DataFrame], config: HandoffConfig,
                   by_room: dict[str, list[dict]] | None = None) -> dict[str, Expected]:
    """room_id → what the rules say, for every room of the judged day (held and unlisted ones too).
    `by_room`: `messages_by_room` of the tables' messages, when the caller has it already."""
    tz = config.timezone
    day = tables["scope"]["day"].iloc[0]
    held = {r for r in tables["held"]["room_id"] if isinstance(r, str) and r}
    rooms = {r["room_id"]: r for r in _records(tables["rooms"])}
    articles = {trim(a["article_id"]) for a in _records(tables["help_articles"])}
    phrases = [(p["trigger_phrase"], p["first_reply_min"], folded(p["trigger_phrase"], config)) for p in _records(tables["handoff_phrases"])]
    if by_room is None:
        by_room = messages_by_room(tables["chat_messages"], tz)
    opened = {r: msgs[0]["at"] for r, msgs in by_room.items()}
    by_customer = defaultdict(list)  # a customer's rooms that have a message, in opening order
    for r in sorted(opened, key=lambda r: (opened[r], r)):
        if r in rooms:
            by_customer[rooms[r]["customer_id"]].append(r)

    out: dict[str, Expected] = {}
    for room_id, msgs in by_room.items():
        opened_day = timestamps.local_day(opened[room_id], tz).isoformat()
        if day is not None and opened_day != day:
            continue
        row = rooms.get(room_id)
        if room_id in held or row is None:
            out[room_id] = Expected(room_id, V.HELD_STATUS, None, opened_day)
            continue
        out[room_id] = _judge_room(room_id, msgs, row, by_customer, opened, phrases, articles, config, opened_day)
    for h in _records(tables["held"]):
        r = h["room_id"]
        if isinstance(r, str) and r and r not in by_room and (day is None or h["partition_day"] == day):
            out[r] = Expected(r, V.HELD_STATUS, None, day)
    return out


def _trigger(msgs: list[dict], phrases: list, config: HandoffConfig):
    for i, m in enumerate(msgs):
        if m["sender"] != "customer":
            continue
        text = folded(m["text"], config)
        found = []
        for order, (phrase, reply_min, f) in enumerate(phrases):
            pos = text.find(f) if f else -1
            if pos >= 0:
                found.append((reply_min, pos, -len(f), order, phrase))
        if found:
            best = min(found)
            return i, best[4], best[0]
    return None, None, None


def _judge_room(room_id, msgs, row, by_customer, opened, phrases, articles, config, opened_day) -> Expected:
    t, phrase, reply_min = _trigger(msgs, phrases, config)
    ai_after = sum(1 for j, m in enumerate(msgs) if t is not None and j > t and m["sender"] == "ai")
    counselors = sum(1 for m in msgs if m["sender"] == "counselor")
    uncited = [m["message_id"] for m in msgs if m["sender"] == "ai"
               and not (isinstance(m["cited_article_id"], str) and trim(m["cited_article_id"]) in articles)]
    handoff_at = first_counselor_at = wait = first_reply_min = None
    if t is not None:
        follow = next((m for j, m in enumerate(msgs) if j > t and m["sender"] == "counselor"), None)
        if follow is not None:
            handoff_at, first_counselor_at = msgs[t]["sent_at"], follow["sent_at"]
            wait, first_reply_min = minutes(msgs[t]["at"], follow["at"]), reply_min
    closed_at = next_room = reentry = None
    if row["closed_by"] == "ai":
        closed_at = msgs[-1]["sent_at"]
        next_room = next((r for r in by_customer[row["customer_id"]] if opened[r] > msgs[-1]["at"]), None)
        if next_room is not None:
            reentry = hours(msgs[-1]["at"], opened[next_room])
    late = wait is not None and wait > first_reply_min
    window = Decimal(config.reentry_window_hours)
    if t is not None and counselors == 0 and ai_after >= 2:
        verdict = V.KEPT_ANSWERING
    elif uncited:
        verdict = V.UNCITED
    elif reentry is not None and reentry <= window:
        verdict = V.REENTRY
    elif late:
        verdict = V.LATE_REPLY
    elif row["closed_by"] == "ai":
        verdict = V.AI_ENDED
    else:
        verdict = None
    ai_count = sum(1 for m in msgs if m["sender"] == "ai")
    in_scope = ai_count > 0 or late
    status = (V.LISTED if verdict else V.UNLISTED) if in_scope else V.OUT_OF_SCOPE
    fields = {
        "customer_id": row["customer_id"],
        "first_trigger_message_id": msgs[t]["message_id"] if t is not None else None,
        "matched_phrase": phrase,
        "ai_after_trigger": ai_after,
        "counselor_message_count": counselors,
        "uncited_message_ids": uncited,
        "handoff_at": handoff_at,
        "first_counselor_at": first_counselor_at,
        "reply_wait_min": wait,
        "first_reply_min": first_reply_min,
        "closed_at": closed_at,
        "next_room_id": next_room,
        "reentry_hours": reentry,
    }
    return Expected(room_id, status, verdict if in_scope else None, opened_day, fields, ai_count,
                    msgs[t]["text"] if t is not None else None, handoff_at is not None and not late)


def same_value(written, expected) -> bool:
    """An output field as written equals the re-computed one (numbers compared as decimals)."""
    if isinstance(expected, Decimal):
        if isinstance(written, bool) or not isinstance(written, (int, float)):
            return False
        return Decimal(str(written)) == expected
    if isinstance(expected, bool) or isinstance(written, bool):
        return written is expected
    if isinstance(expected, int):
        return isinstance(written, int) and written == expected
    return written == expected
