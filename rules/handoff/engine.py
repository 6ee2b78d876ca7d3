"""The §6 rules, vectorised per room over whole tables.

Messages are ordered per room by `sent_at` (exact integer nanoseconds), then `message_id`.
Every definition is a group-wise operation on that ordered table; the customer's next room is
one `merge_asof` per customer. Durations are rounded half up to 0.01 from exact integers, and
rules 3 and 4 compare those rounded values, as written in the output.

`assess` returns every room of the judged day, held ones included, with its status
(listed, in scope but unlisted, out of scope, held); `judge` keeps the listed rooms in
output-schema columns; `day_summary` gives the report's header counts.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
from pandas.api.extensions import take

from rules.common.days import iso_days
from rules.common.distinct import exact_duplicated, select_labels
from rules.common.evidence import plain_columns, rows_of
from rules.common.frames import taken
from rules.common.nullable import missing_int64
from rules.common.lookup import add_looked_up
from rules.common.cells import trim
from rules.common.ordering import runs_start, stable_order, stable_order_and_keys
from rules.handoff import verdicts as V
from rules.handoff.config import HandoffConfig
from rules.handoff.explain import explain
from rules.handoff.phrases import best_match
from rules.handoff.view import held_rooms

OUTPUT_COLUMNS = [
    "room_id", "customer_id", "verdict", "first_trigger_message_id", "matched_phrase", "ai_after_trigger",
    "counselor_message_count", "uncited_message_ids", "handoff_at", "first_counselor_at", "reply_wait_min",
    "first_reply_min", "closed_at", "next_room_id", "reentry_hours", "evidence", "summary", "hedge",
]
INT_COLUMNS = ("ai_after_trigger", "counselor_message_count")
NULLABLE_INT_COLUMNS = ("first_reply_min",)
NUMBER_COLUMNS = ("reply_wait_min", "reentry_hours")

EXPLAIN_COLUMNS = [
    "room_id", "customer_id", "verdict", "provisional", "first_trigger_message_id", "trigger_text", "matched_phrase",
    "ai_after_trigger", "counselor_message_count", "uncited_message_ids", "uncited_first_cited", "uncited_first_text",
    "article_count", "first_ai_cited", "last_text", "handoff_at", "first_counselor_at", "reply_wait_min", "first_reply_min",
    "closed_at", "next_room_id", "next_first_sent_at", "next_first_text", "next_on_time", "next_wait_us", "reentry_hours",
    "reentry_us", "literal_trigger_id", "literal_trigger_text", "literal_ai_after", "rule_2", "rule_3", "rule_4",
]
"""What the summaries and evidence read (the rest of the room facts stay out of the per-row loop)."""
EXPLAINED_OUTPUT = ("evidence", "summary", "hedge")
"""The output columns the explanation fills."""

PART_ROWS = 20_000
"""Listed rooms explained at once by `part_makers`."""

US_PER_MINUTE = 60_000_000
US_PER_HOUR = 3_600_000_000


def hundredths(us: pd.Series, unit_us: int) -> pd.Series:
    """Non-negative microseconds in `unit` rounded half up to 0.01, as an integer count of hundredths.

    Exact integer arithmetic: (2·100·us + unit) // (2·unit) is round-half-up of 100·us / unit.
    """
    return (us * 200 + unit_us) // (2 * unit_us)


def as_number(h: object) -> int | float | None:
    """Hundredths as the number written out: 36, 1.75, 25.08."""
    if h is None or h is pd.NA or (isinstance(h, float) and np.isnan(h)):
        return None
    h = int(h)
    return h // 100 if h % 100 == 0 else h / 100


def judge(tables: dict[str, pd.DataFrame], config: HandoffConfig) -> pd.DataFrame:
    """One verdict row per listed room of the judged day (output-schema columns), by room_id."""
    a = assess(tables, config)
    listed = a[a["status"] == V.LISTED]
    if listed.empty:
        return _no_rows()
    return listed[OUTPUT_COLUMNS].sort_values("room_id", kind="stable").reset_index(drop=True)


def part_makers(tables: dict[str, pd.DataFrame], config: HandoffConfig, rows: int | None = None) -> list:
    """`judge`'s rows, `rows` at a time, as calls: every room decided now, each part's rooms
    explained when its call is made (a room's explanation reads that room alone)."""
    rows = rows or PART_ROWS
    a = assess(tables, config, explained=False)
    listed = a[a["status"] == V.LISTED]
    if listed.empty:
        return [_no_rows]
    kept = list(dict.fromkeys([*(c for c in OUTPUT_COLUMNS if c not in EXPLAINED_OUTPUT), *EXPLAIN_COLUMNS]))
    listed = listed[[c for c in kept if c in listed.columns]]  # in room order, as `assess` returns the rooms
    return [partial(_explained_part, listed, start, start + rows, config) for start in range(0, len(listed), rows)]


def _explained_part(listed: pd.DataFrame, start: int, stop: int, config: HandoffConfig) -> pd.DataFrame:
    part = listed.iloc[start:stop].copy()
    cited, summaries, hedges = explain(part[[c for c in EXPLAIN_COLUMNS if c in part.columns]], config)
    for col, values in zip(EXPLAINED_OUTPUT, (cited, summaries, hedges)):
        part[col] = pd.Series(values, index=part.index, dtype=object)
    return part[OUTPUT_COLUMNS].reset_index(drop=True)


def _no_rows() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in OUTPUT_COLUMNS})


def assess(tables: dict[str, pd.DataFrame], config: HandoffConfig, explained: bool = True) -> pd.DataFrame:
    """Every room opened on the judged day (or in the input), with derived fields, status and verdict;
    the listed rooms' evidence, summary and hedge unless `explained` is False."""
    scope = tables["scope"].iloc[0]
    day, horizon = scope["day"], scope["lookahead_end_ns"]
    held = held_rooms(tables["held"])
    f = room_features(tables, config)
    f["held"] = f["room_id"].isin(held) | f["customer_id"].isna()
    f["of_day"] = True if day is None else f["opened_day"].eq(day)
    f = apply_rules(f, config, horizon)
    f["status"] = select_labels(
        [f["held"].to_numpy(dtype=bool), f["verdict"].notna().to_numpy(dtype=bool), f["in_scope"].to_numpy(dtype=bool)],
        [V.HELD_STATUS, V.LISTED, V.UNLISTED], V.OUT_OF_SCOPE,
    )
    f.loc[f["held"], "verdict"] = None
    day_rooms = f.take(np.flatnonzero(f["of_day"].to_numpy(dtype=bool)))  # a frame of its own, copied once
    if explained:
        listed = day_rooms["status"] == V.LISTED
        wanted = [c for c in EXPLAIN_COLUMNS if c in day_rooms.columns]
        cited, summaries, hedges = explain(day_rooms.loc[listed, wanted], config) if listed.any() else ([], [], [])
        for col, values in zip(EXPLAINED_OUTPUT, (cited, summaries, hedges)):
            day_rooms[col] = pd.Series([None] * len(day_rooms), index=day_rooms.index, dtype=object)
            day_rooms.loc[listed, col] = pd.Series(values, index=day_rooms.index[listed], dtype=object)
    unseen = _held_without_messages(tables["held"], set(f["room_id"]), day)
    if len(unseen):
        day_rooms = pd.concat([day_rooms.astype(object), unseen], ignore_index=True)
    # Rooms come in room order already unless held ones were added: sorting them again copied every column.
    if len(unseen) or not day_rooms["room_id"].is_monotonic_increasing:
        day_rooms = day_rooms.sort_values("room_id", kind="stable")
    day_rooms.index = pd.RangeIndex(len(day_rooms))
    return day_rooms


# -- per-room facts ----------------------------------------------------------------------------


def ordered_messages(messages: pd.DataFrame) -> pd.DataFrame:
    """Messages in order of room, time and id, with `seq` (the place in its room, from 0) and
    `room_no` (the room's place among the rooms, from 0: each room's messages are contiguous, so
    per-room sums are `bincount`s by position rather than groupbys on the room id text)."""
    order, keys = stable_order_and_keys(messages, ["room_id", "sent_at_ns", "message_id"])
    m = taken(messages, order)
    opens = runs_start(m["room_id"].to_numpy(), keys[0].take(order) if keys else None)
    room_no = np.cumsum(opens) - 1
    m["room_no"] = room_no
    m["seq"] = np.arange(len(m)) - np.flatnonzero(opens)[room_no] if len(m) else np.zeros(0, dtype=np.int64)
    return m


def room_features(tables: dict[str, pd.DataFrame], config: HandoffConfig) -> pd.DataFrame:
    """One row per room with at least one valid message in view (the judged day's and look-up rooms)."""
    m = ordered_messages(tables["chat_messages"])
    if m.empty:
        return _empty_features()
    # Row i of `f` is room_no i, whose messages run from starts[i] to ends[i]; every step below
    # keeps that order (the merge with rooms is a left merge), so per-room facts go by position.
    starts = np.flatnonzero(m["seq"].to_numpy() == 0)
    ends = np.append(starts[1:], len(m)) - 1
    first, last = m.take(starts), m.take(ends)
    f = pd.DataFrame({
        "room_id": first["room_id"].to_numpy(),
        "first_ns": first["sent_at_ns"].to_numpy(dtype="int64"),
        "first_sent_at": first["sent_at"].to_numpy(),
        "first_text": first["text"].to_numpy(),
        "first_sender": first["sender"].to_numpy(),
        "last_ns": last["sent_at_ns"].to_numpy(dtype="int64"),
        "last_sent_at": last["sent_at"].to_numpy(),
        "last_text": last["text"].to_numpy(),
        "ai_count": _count(m, m["sender"].eq("ai").to_numpy(), len(starts)),
        "counselor_message_count": _count(m, m["sender"].eq("counselor").to_numpy(), len(starts)),
    })
    f["opened_day"] = iso_days(f["first_ns"].to_numpy(dtype="int64"), config.timezone)
    rooms = tables["rooms"][["room_id", "customer_id", "closed_by"]]
    add_looked_up(f, rooms, ["room_id"], ["customer_id", "closed_by"])  # not a merge: its check of the keys stops at a NUL
    f["customer_id"] = f["customer_id"].where(f["customer_id"].notna(), None)

    _triggers(f, m, tables["handoff_phrases"], config)
    _citations(f, m, tables["help_articles"])
    _handoff(f, m)
    _closing(f)
    _next_room(f)
    return f


def _empty_features() -> pd.DataFrame:
    cols = ["room_id", "customer_id", "opened_day", "first_ns", "ai_count", "counselor_message_count"]
    return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})


def _count(m: pd.DataFrame, where: np.ndarray, rooms: int) -> np.ndarray:
    """Per room (by `room_no`), how many of its messages `where` holds."""
    return np.bincount(m["room_no"].to_numpy()[where], minlength=rooms).astype(np.int64, copy=False)


def _by_room(f: pd.DataFrame, per_room: pd.DataFrame) -> None:
    """Attach room-indexed columns to `f` (aligned on room_id, as `reindex` aligns them: a room
    without a row gets the column's missing value); `*_ns` columns stay exact integers. The rooms
    are looked up once for all the columns."""
    at = per_room.index.get_indexer(f["room_id"])  # -1: no row for the room; raises as reindex does on repeats
    for col in per_room.columns:
        values = per_room[col]
        if pd.api.types.is_integer_dtype(values.dtype):
            values = values.astype("Int64")  # a plain reindex would turn missing rooms into floats
        cells = values.array if isinstance(values.dtype, pd.api.extensions.ExtensionDtype) else values.to_numpy()
        values = pd.Series(take(cells, at, allow_fill=True), index=f["room_id"], name=col)
        if col.endswith("_ns") or col.endswith("_seq"):
            f[col] = pd.array(values.to_numpy(dtype=object), dtype="Int64") if len(values) else pd.array([], dtype="Int64")
        else:
            values = values.astype(object)
            f[col] = values.where(values.notna(), None).to_numpy(dtype=object)


def _triggers(f: pd.DataFrame, m: pd.DataFrame, phrases: pd.DataFrame, config: HandoffConfig) -> None:
    """The first customer message holding a phrase, the phrase chosen, and ai answers after it."""
    # Rows and columns taken at once: a boolean index copies every column of a million messages.
    customer = m.loc[m["sender"].eq("customer").to_numpy(), ["room_id", "seq", "message_id", "text", "sent_at", "sent_at_ns"]]
    best = best_match(customer["text"], phrases, config.phrase_matching)
    hits = customer.loc[best.index, ["room_id", "seq", "message_id", "text", "sent_at", "sent_at_ns"]].join(best)
    first = hits.sort_values(["room_id", "seq"]).drop_duplicates("room_id").set_index("room_id")
    trig = pd.DataFrame({
        "trigger_seq": first["seq"], "first_trigger_message_id": first["message_id"], "trigger_text": first["text"],
        "trigger_sent_at": first["sent_at"], "trigger_ns": first["sent_at_ns"], "matched_phrase": first["trigger_phrase"],
        "phrase_reply_min": first["first_reply_min"],
    })
    _by_room(f, trig)
    f["ai_after_trigger"] = _ai_after(m, trig["trigger_seq"], f["room_id"])
    if config.phrase_matching.remove_whitespace:
        _literal_triggers(f, m, customer, phrases, config)


def _ai_after(m: pd.DataFrame, trigger_seq: pd.Series, rooms: pd.Series) -> np.ndarray:
    """Per room of `rooms` (row i is room_no i), its ai messages after the room's `trigger_seq`
    (rooms missing from `trigger_seq` count none)."""
    tseq = _per_message(m, trigger_seq.reindex(rooms))
    after = m["sender"].eq("ai").to_numpy() & (m["seq"].to_numpy() > tseq)
    return _count(m, after, len(rooms))


def _per_message(m: pd.DataFrame, per_room: pd.Series) -> np.ndarray:
    """A per-room place (row i is room_no i; missing: none) on each message, as a float (NaN
    for none, which no `seq` exceeds)."""
    return per_room.to_numpy(dtype="float64", na_value=np.nan)[m["room_no"].to_numpy()]


def _literal_triggers(f: pd.DataFrame, m: pd.DataFrame, customer: pd.DataFrame, phrases: pd.DataFrame,
                      config: HandoffConfig) -> None:
    """Where the first request would be if whitespace were not removed (for the hedge only)."""
    literal = config.phrase_matching.model_copy(update={"remove_whitespace": False})
    best = best_match(customer["text"], phrases, literal)
    hits = customer.loc[best.index, ["room_id", "seq", "message_id", "text"]]
    first = hits.sort_values(["room_id", "seq"]).drop_duplicates("room_id").set_index("room_id")
    _by_room(f, pd.DataFrame({"literal_trigger_id": first["message_id"], "literal_trigger_text": first["text"]}))
    f["literal_ai_after"] = _ai_after(m, first["seq"], f["room_id"])


def _citations(f: pd.DataFrame, m: pd.DataFrame, articles: pd.DataFrame) -> None:
    """AI answers whose citation is missing or not a listed article, in message order."""
    known = set(articles["article_id"].map(trim))
    ai = m.loc[m["sender"].eq("ai").to_numpy(), ["room_id", "message_id", "cited_article_id", "text"]]
    cited = ai["cited_article_id"].map(lambda v: trim(v) if isinstance(v, str) else None)
    bad = ai[~cited.isin(known) | cited.isna()]
    lists: dict[str, list] = {}
    for room, message in zip(bad["room_id"], bad["message_id"]):  # already in message order
        lists.setdefault(room, []).append(message)
    f["uncited_message_ids"] = [lists.get(r, []) for r in f["room_id"]]
    first_bad = bad.drop_duplicates("room_id").set_index("room_id")
    _by_room(f, pd.DataFrame({"uncited_first_cited": first_bad["cited_article_id"], "uncited_first_text": first_bad["text"]}))
    first_ai = ai.drop_duplicates("room_id").set_index("room_id")
    _by_room(f, pd.DataFrame({"first_ai_cited": first_ai["cited_article_id"]}))
    f["article_count"] = len(known)


def _handoff(f: pd.DataFrame, m: pd.DataFrame) -> None:
    """Decision: the handoff is the trigger, when a counselor message follows it; wait to the first such message."""
    follows = m["sender"].eq("counselor").to_numpy() & (m["seq"].to_numpy() > _per_message(m, f["trigger_seq"]))
    first = m.loc[follows, ["room_id", "sent_at", "sent_at_ns"]].drop_duplicates("room_id").set_index("room_id")
    _by_room(f, pd.DataFrame({"first_counselor_at": first["sent_at"], "counselor_ns": first["sent_at_ns"]}))
    handed = f["counselor_ns"].notna()
    f["handoff_at"] = f["trigger_sent_at"].where(handed, None)
    f["first_reply_min"] = f["phrase_reply_min"].where(handed, None)
    wait_us = (f["counselor_ns"] - f["trigger_ns"]) // 1000
    f["wait_us"] = wait_us
    f["wait_h"] = hundredths(wait_us, US_PER_MINUTE)
    f["reply_wait_min"] = [as_number(h) for h in f["wait_h"]]
    limit = pd.array([None if v is None else int(v) * 100 for v in f["first_reply_min"]], dtype="Int64")
    f["late"] = (f["wait_h"] > limit).fillna(False).astype(bool)
    f["on_time"] = handed & ~f["late"]


def _closing(f: pd.DataFrame) -> None:
    by_ai = f["closed_by"].eq("ai")
    f["closed_at"] = f["last_sent_at"].where(by_ai, None)
    f["closed_ns"] = pd.array([int(n) if a else None for n, a in zip(f["last_ns"], by_ai)], dtype="Int64")


def _next_room(f: pd.DataFrame) -> None:
    """The same customer's first room whose first message comes strictly after closed_at."""
    f["next_room_id"] = None
    f["next_first_ns"] = missing_int64(len(f))
    known = f["customer_id"].notna()
    closed = f.loc[f["closed_ns"].notna() & known, ["room_id", "customer_id", "closed_ns"]]
    candidates = f.loc[known, ["customer_id", "first_ns", "room_id"]]
    if closed.empty or candidates.empty:
        _next_facts(f)
        return
    # Two rooms opening in the same instant: the smaller room_id is "first".
    candidates = candidates.take(stable_order(candidates, ["first_ns", "room_id"]))
    candidates = candidates[~exact_duplicated(candidates, ["customer_id", "first_ns"])]
    candidates = candidates.rename(columns={"room_id": "next_id", "first_ns": "next_ns"}).astype({"next_ns": "int64"})
    left = closed.astype({"closed_ns": "int64"}).sort_values("closed_ns")
    found = pd.merge_asof(left, candidates.sort_values("next_ns"), left_on="closed_ns", right_on="next_ns",
                          by="customer_id", direction="forward", allow_exact_matches=False).set_index("room_id")
    _by_room(f, pd.DataFrame({"next_room_id": found["next_id"], "next_first_ns": found["next_ns"]}))
    _next_facts(f)


def _next_facts(f: pd.DataFrame) -> None:
    """Re-entry hours, and what the next room looked like (for the summary and hedge)."""
    f["reentry_us"] = (f["next_first_ns"] - f["closed_ns"]) // 1000
    f["reentry_h"] = hundredths(f["reentry_us"], US_PER_HOUR)
    f["reentry_hours"] = [as_number(h) for h in f["reentry_h"]]
    nxt = f[["room_id", "first_sent_at", "first_text", "first_sender", "on_time", "wait_us"]].set_index("room_id")
    nxt = pd.DataFrame({
        "next_first_sent_at": nxt["first_sent_at"],
        "next_first_text": nxt["first_text"].where(nxt["first_sender"] == "customer"),
        "next_on_time": nxt["on_time"],
        "next_wait_us": nxt["wait_us"].astype(object),
    })
    found = nxt.reindex(f["next_room_id"].where(f["next_room_id"].notna(), "")).reset_index(drop=True)
    for col in ("next_first_sent_at", "next_first_text", "next_wait_us"):
        f[col] = found[col].where(found[col].notna(), None).to_numpy(dtype=object)
    f["next_on_time"] = found["next_on_time"].eq(True).to_numpy()


# -- the rules, in order -------------------------------------------------------------------------


def kept_answering(f: pd.DataFrame) -> pd.Series:
    """A request for a counsellor, no counsellor at all, and the AI answered twice or more after it."""
    return f["first_trigger_message_id"].notna() & f["counselor_message_count"].eq(0) & f["ai_after_trigger"].ge(2)


def uncited(f: pd.DataFrame) -> pd.Series:
    return f["uncited_message_ids"].map(len).gt(0)


def reentry(f: pd.DataFrame, config: HandoffConfig) -> pd.Series:
    """The next room opened within the window, as rounded (24.00 counts, 24.01 does not)."""
    return (f["reentry_h"] <= config.reentry_window_hundredths).fillna(False).astype(bool)


def late_reply(f: pd.DataFrame) -> pd.Series:
    return f["late"]


def ai_ended(f: pd.DataFrame) -> pd.Series:
    return f["closed_by"].eq("ai")


def apply_rules(f: pd.DataFrame, config: HandoffConfig, horizon: int | None) -> pd.DataFrame:
    f = f.copy()
    if f.empty:
        for col in ("in_scope", "verdict", "provisional"):
            f[col] = pd.Series(dtype=object)
        return f
    masks = {
        V.KEPT_ANSWERING: kept_answering(f),
        V.UNCITED: uncited(f),
        V.REENTRY: reentry(f, config),
        V.LATE_REPLY: late_reply(f),
        V.AI_ENDED: ai_ended(f),
    }
    for verdict, mask in masks.items():
        f[f"rule_{V.RULE_ORDER.index(verdict) + 1}"] = mask.to_numpy(dtype=bool)
    f["in_scope"] = f["ai_count"].gt(0) | f["late"]
    chosen = select_labels([masks[v].to_numpy(dtype=bool) for v in V.RULE_ORDER], V.RULE_ORDER, None)
    chosen[~f["in_scope"].to_numpy(dtype=bool)] = None
    f["verdict"] = chosen
    f["provisional"] = _provisional(f, config, horizon)
    return f


def _provisional(f: pd.DataFrame, config: HandoffConfig, horizon: int | None) -> pd.Series:
    """Closed by the AI, no next room yet, and a re-entry could still open after the data ends."""
    if horizon is None:
        return pd.Series(False, index=f.index)
    # Anything under window + 0.005 h still rounds to within the window.
    reach = (config.reentry_window_hundredths * 2 + 1) * US_PER_HOUR * 1000 // 200
    open_end = f["closed_ns"].notna() & f["next_room_id"].isna()
    could = [bool(o) and int(c) + reach > int(horizon) for o, c in zip(open_end, f["closed_ns"].fillna(0))]
    return pd.Series(could, index=f.index) & f["verdict"].isin([V.LATE_REPLY, V.AI_ENDED])


def _held_without_messages(held: pd.DataFrame, seen: set[str], day: str | None) -> pd.DataFrame:
    """Held rooms none of whose messages survived: placed on the day their rejected rows came in."""
    unseen = held["room_id"].map(lambda r: isinstance(r, str) and r not in seen).astype(bool)
    rows = held.loc[unseen & (True if day is None else held["partition_day"].eq(day))]
    rooms = sorted(set(rows["room_id"]))
    return pd.DataFrame({"room_id": rooms, "status": V.HELD_STATUS, "verdict": None, "held": True,
                         "opened_day": day, "customer_id": None}, dtype=object)


# -- the report's header counts ------------------------------------------------------------------


def day_summary(rooms: pd.DataFrame) -> dict:
    """Counts over the rooms of the judged day: listed per verdict, in scope, handoffs on time, held."""
    status = rooms["status"] if len(rooms) else pd.Series(dtype=object)
    judged = rooms[status != V.HELD_STATUS] if len(rooms) else rooms
    handed = judged["handoff_at"].notna() if len(judged) else pd.Series(dtype=bool)
    listed = judged[judged["status"] == V.LISTED] if len(judged) else judged
    return {
        "rooms": int(len(rooms)),
        "held": int((status == V.HELD_STATUS).sum()),
        "judged": int(len(judged)),
        "in_scope": int(status.isin([V.LISTED, V.UNLISTED]).sum()),
        "listed": int(len(listed)),
        "listed_per_verdict": {v: int((listed["verdict"] == v).sum()) if len(listed) else 0 for v in V.RULE_ORDER},
        "in_scope_unlisted": int((status == V.UNLISTED).sum()),
        "out_of_scope": int((status == V.OUT_OF_SCOPE).sum()),
        "handoffs": int(handed.sum()),
        "on_time_handoffs": int((handed & judged["on_time"].eq(True)).sum()) if len(judged) else 0,
        "late_handoffs": int((handed & judged["late"].eq(True)).sum()) if len(judged) else 0,
        "provisional": int(judged["provisional"].eq(True).sum()) if len(judged) and "provisional" in judged else 0,
    }


ROOM_COLUMNS = ["room_id", "customer_id", "opened_day", "status", "verdict", "handoff_at", "reply_wait_min",
                "first_reply_min", "on_time", "late", "provisional", "next_room_id"]
"""What the report keeps of every room of the day (listed or not)."""


def day_tables(tables: dict[str, pd.DataFrame], config: HandoffConfig) -> dict[str, pd.DataFrame]:
    """The rooms of the judged day (with status) and the rows that hold some of them, for the report."""
    rooms = assess(tables, config)
    rooms = rooms.reindex(columns=ROOM_COLUMNS).astype(object)
    rooms = rooms.where(rooms.notna(), None)
    held = tables["held"]
    day = tables["scope"]["day"].iloc[0]
    of_day = set(rooms.loc[rooms["status"] == V.HELD_STATUS, "room_id"])
    no_room = held["room_id"].isna() & (True if day is None else held["partition_day"].eq(day))
    rows = held[held["room_id"].isin(of_day) | no_room].drop(columns="partition_day").reset_index(drop=True)
    return {"day_rooms": rooms, "held_rows": rows.astype(object).where(rows.notna(), None)}


def records(verdicts: pd.DataFrame) -> list[dict]:
    """Output rows as plain JSON-ready dicts (None, not NA; 36 rather than 36.0), made column by column."""
    return rows_of(verdict_columns(verdicts))


def verdict_columns(verdicts: pd.DataFrame) -> dict[str, list]:
    """`records`' values by output column."""
    columns = plain_columns(verdicts, OUTPUT_COLUMNS)  # None for NA and NaN
    for k in INT_COLUMNS:
        columns[k] = [int(v) for v in columns[k]]
    for k in NULLABLE_INT_COLUMNS:
        columns[k] = [None if v is None else int(v) for v in columns[k]]
    for k in NUMBER_COLUMNS:
        columns[k] = [None if v is None else _whole(float(v)) for v in columns[k]]
    columns["uncited_message_ids"] = [list(v or []) for v in columns["uncited_message_ids"]]
    return columns


def _whole(v: float) -> int | float:
    return int(v) if v.is_integer() else v
