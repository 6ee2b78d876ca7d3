"""Gates of the handoff datasets: raw lines → normalised tables + quarantine.

Per message, in this order: not JSON → `invalid_json`; empty room_id → `empty_room_id` (the
message belongs to no room); no sent_at → `missing_sent_at`; then the schema, ids and the
timestamp. Codes (`sender`, `closed_by`) and ids are compared after trimming. Which rooms a
rejected message holds back from judgement is decided when days are combined (`view`), since
a room's messages may lie in neighbouring days.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rules.common import gates, jsonl, normalised, storage, timestamps
from rules.common.distinct import each_value
from rules.common.evidence import cells
from rules.common.cells import int_or_none, trim, trim_column
from rules.common.gates import Screen
from rules.common.normalised import gathered
from rules.handoff.config import HandoffConfig
from rules.handoff.phrases import fold
from schemas import columns, row_checker
from schemas.handoff import DOMAIN, INPUT_DATASETS

EMPTY_ROOM_ID = "empty_room_id"
MISSING_SENT_AT = "missing_sent_at"
MISSING_CUSTOMER = "missing_customer"
EMPTY_PHRASE = "empty_phrase"

ID_FIELDS = {"chat_messages": "message_id", "rooms": "room_id", "handoff_phrases": "trigger_phrase", "help_articles": "article_id"}
"""The id column of each dataset: unique, trimmed."""
TIME_FIELDS = {"chat_messages": "sent_at"}
"""Event datasets split by day; the others are reference snapshots."""
INTEGER_COLUMNS = {"handoff_phrases": ("first_reply_min",)}
CODE_COLUMNS = {"chat_messages": ("sender",), "rooms": ("closed_by",)}


class Normalised(normalised.Normalised):
    """The four handoff tables, by name."""

    @property
    def messages(self) -> pd.DataFrame:
        return self.tables["chat_messages"]

    @property
    def rooms(self) -> pd.DataFrame:
        return self.tables["rooms"]


def read_input_dir(input_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Raw lines of every dataset in a directory (DatasetError names a bad file)."""
    return jsonl.read_input_dir(input_dir, DOMAIN, INPUT_DATASETS)


def _blank(v: object) -> bool:
    return v is None or (isinstance(v, str) and not trim(v))


def _screen(raw: dict[str, pd.DataFrame], name: str, before_schema=None) -> Screen:
    def per_row(s: Screen) -> None:
        s.trim_fields(CODE_COLUMNS.get(name, ()))
        if before_schema:
            before_schema(s)
        s.schema(row_checker(DOMAIN, name))
        _expand(s, columns(DOMAIN, name))
        for col in INTEGER_COLUMNS.get(name, ()):  # JSON Schema's integers accept 15.0; rules see 15
            s.rows[col] = int_or_none(s.rows[col])

    s = Screen.in_chunks(raw[name], name, ID_FIELDS[name], per_row, gates.column_reader(row_checker(DOMAIN, name)))
    s.ids()
    return s


_SCREEN_COLUMNS = ("file", "line", "_at", "text")
"""The screen's own columns (`file`, `line`, `_at`), and `text`, which stays the table's last column:
a dataset column of one of these names is carried aside and put back at the end."""


def _expand(s: Screen, cols: tuple[str, ...]) -> None:
    clashing = [c for c in cols if c in _SCREEN_COLUMNS]
    aside = {c: s.field(c) for c in clashing}
    s.expand(tuple(c for c in cols if c not in clashing))
    for c, values in aside.items():
        s.rows[f"_col_{c}"] = values


def _accepted(s: Screen) -> pd.DataFrame:
    frame = s.accepted()  # a frame of its own: renamed in place, where `rename` would copy every column
    frame.columns = [c[len("_col_"):] if c.startswith("_col_") else c for c in frame.columns]
    return frame


def _message_presence(s: Screen) -> None:
    """The two faults the seed names: no room, and no time."""
    room = s.field("room_id")
    s.reject(each_value(_blank, room).astype(bool), EMPTY_ROOM_ID, "room_id is empty: the message belongs to no room and is left out")
    missing = each_value(_blank, s.field("sent_at")).astype(bool)
    at = missing.index[missing.to_numpy()]  # worded for the messages left out alone, not every message
    reasons = pd.Series([f"sent_at is missing: the message is left out and room '{trim(r)}' is held" for r in room.loc[at].tolist()],
                        index=at, dtype=object)
    s.reject(missing, MISSING_SENT_AT, reasons)


def normalise(raw: dict[str, pd.DataFrame], config: HandoffConfig) -> Normalised:
    rooms_s = screen_rooms(raw["rooms"])
    phrase_s = screen_phrases(raw["handoff_phrases"], config)
    article_s = _screen(raw, "help_articles")
    msg_s = screen_messages(raw["chat_messages"], config)
    screens = {"chat_messages": msg_s, "rooms": rooms_s, "handoff_phrases": phrase_s, "help_articles": article_s}
    return gathered(screens, INPUT_DATASETS, Normalised, _accepted)


def screen_rooms(raw: pd.DataFrame) -> Screen:
    rooms_s = _screen({"rooms": raw}, "rooms")
    r = rooms_s.rows
    r["customer_id"] = trim_column(r["customer_id"])
    rooms_s.reject(r["customer_id"].eq(""), MISSING_CUSTOMER, "customer_id is empty: re-entry cannot be looked up")
    return rooms_s


def screen_phrases(raw: pd.DataFrame, config: HandoffConfig) -> Screen:
    phrase_s = _screen({"handoff_phrases": raw}, "handoff_phrases")
    p = phrase_s.rows
    empty = p["trigger_phrase"].map(lambda v: not fold(v, config.phrase_matching))
    phrase_s.reject(empty, EMPTY_PHRASE, "trigger_phrase has nothing left to match once whitespace is removed")
    return phrase_s


def screen_messages(raw: pd.DataFrame, config: HandoffConfig) -> Screen:
    """Messages through their gates (none reads another dataset)."""
    msg_s = _screen({"chat_messages": raw}, "chat_messages", before_schema=_message_presence)
    m = msg_s.rows
    m["room_id"] = trim_column(m["room_id"])
    m["sent_at"] = trim_column(m["sent_at"])
    stamps = msg_s.stamps("sent_at", config.timezone, note=lambda at: m["room_id"].loc[at].map(lambda r: f": room '{r}' is held"))
    m = msg_s.rows
    m["sent_at_ns"] = stamps["ns"]
    return msg_s


def accepted(s: Screen) -> pd.DataFrame:
    """A screen's normalised rows (a dataset column named like one of the screen's own put back)."""
    return _accepted(s)


def stored_columns(dataset: str) -> list[str]:
    """The columns kept when a normalised table is stored; instants are re-derived on load."""
    return storage.stored_columns(DOMAIN, dataset)


def restore(tables: dict[str, pd.DataFrame], config: HandoffConfig) -> dict[str, pd.DataFrame]:
    """Re-derive exact instants and integer types after a round-trip through storage."""
    out = {name: storage.nulls_as_none(tables[name].copy()) for name in INPUT_DATASETS}
    m = out["chat_messages"]
    m["sent_at_ns"] = pd.array(timestamps.stored_column(cells(m["sent_at"]), config.timezone).ns, dtype="int64")
    out["handoff_phrases"]["first_reply_min"] = int_or_none(out["handoff_phrases"]["first_reply_min"])
    return out


def load_dir(input_dir: str | Path, config: HandoffConfig) -> Normalised:
    return normalise(read_input_dir(input_dir), config)
