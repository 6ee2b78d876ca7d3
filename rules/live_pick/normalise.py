"""Gates of the live_pick datasets: raw lines → normalised tables + quarantine.

Order matters: sheets and viewer relations are screened first, because a chat line is
judged against them (a line with no valid sheet, or whose viewer was replied to after the
line was sent, cannot be judged).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rules.common import jsonl, normalised, storage, timestamps
from rules.common.evidence import cells
from rules.common.cells import trim, trim_column
from rules.common.gates import Screen, screen
from rules.common.normalised import gathered
from rules.live_pick.config import LivePickConfig
from schemas import columns, row_checker
from schemas.live_pick import DOMAIN, INPUT_DATASETS

UNKNOWN_CHARACTER = "unknown_character"
REPLY_AFTER_LINE = "reply_after_line"

ID_FIELDS = {"live_chat": "msg_id", "character_sheet": "character_id", "viewer_relation": "viewer_id"}
"""The id column of each dataset: unique, trimmed."""


class Normalised(normalised.Normalised):
    """The three live_pick tables, by name."""

    @property
    def chat(self) -> pd.DataFrame:
        return self.tables["live_chat"]

    @property
    def sheet(self) -> pd.DataFrame:
        return self.tables["character_sheet"]

    @property
    def relation(self) -> pd.DataFrame:
        return self.tables["viewer_relation"]


def read_input_dir(input_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Raw lines of every dataset in a directory (DatasetError names a bad file)."""
    return jsonl.read_input_dir(input_dir, DOMAIN, INPUT_DATASETS)


def normalise(raw: dict[str, pd.DataFrame], config: LivePickConfig) -> Normalised:
    sheet_s, rel_s = screen_references(raw, config)
    chat_s = screen_chat(raw["live_chat"], sheet_s.rows, rel_s.rows, config)
    screens = {"live_chat": chat_s, "character_sheet": sheet_s, "viewer_relation": rel_s}
    return gathered(screens, INPUT_DATASETS, Normalised)


def screen_references(raw: dict[str, pd.DataFrame], config: LivePickConfig) -> tuple[Screen, Screen]:
    """The character sheets and viewer relations through their gates (chat lines are judged against them)."""
    return screen_sheets(raw["character_sheet"]), screen_relations(raw["viewer_relation"], config)


def screen_sheets(raw: pd.DataFrame) -> Screen:
    sheet_s = _screen({"character_sheet": raw}, "character_sheet")
    sheet = sheet_s.rows
    for col in ("world_topic_tags", "banned_tags"):
        sheet[col] = sheet[col].map(_trim_list)
    sheet["min_closeness_by_topic"] = sheet["min_closeness_by_topic"].map(
        lambda m: {trim(k): v for k, v in m.items()}
    )
    return sheet_s


def screen_relations(raw: pd.DataFrame, config: LivePickConfig) -> Screen:
    rel_s = _screen({"viewer_relation": raw}, "viewer_relation")
    rel = rel_s.rows
    rel["answered_topics"] = rel["answered_topics"].map(_trim_list)
    rel["last_replied_at"] = trim_column(rel["last_replied_at"])
    stamps = rel_s.stamps("last_replied_at", tz=config.timezone, nullable=True)
    rel = rel_s.rows
    rel["last_replied_ns"] = stamps["ns"]
    return rel_s


def last_replies(relation: pd.DataFrame) -> dict[str, int]:
    """viewer_id → last_replied_at in epoch ns, for the viewers that have one: what the chat gates read
    of the relations."""
    # Exact integer nanoseconds: a float round-trip would blur instants this large.
    return {v: ns for v, ns in zip(cells(relation["viewer_id"]), cells(relation["last_replied_ns"])) if ns is not pd.NA}


def screen_chat(raw: pd.DataFrame, sheet: pd.DataFrame, relation: pd.DataFrame, config: LivePickConfig) -> Screen:
    """Chat lines through their gates, against gated sheets and relations (`screen_references`):
    a live service gates each batch of lines against references gated once."""
    return screen_chat_against(raw, set(sheet["character_id"]), last_replies(relation), config)


def screen_chat_against(raw: pd.DataFrame, known: set, last: dict[str, int], config: LivePickConfig) -> Screen:
    """`screen_chat` given what it reads of the references: the characters with a valid sheet, and
    each viewer's last reply (`last_replies`)."""
    chat_s = _screen({"live_chat": raw}, "live_chat")
    chat = chat_s.rows
    for col in ("character_id", "viewer_id"):
        chat[col] = trim_column(chat[col])
    chat["topic_tags"] = chat["topic_tags"].map(lambda v: None if v is None else _trim_list(v))
    chat["sent_at"] = trim_column(chat["sent_at"])
    stamps = chat_s.stamps("sent_at", config.timezone)
    chat = chat_s.rows
    chat["sent_at_ns"] = stamps["ns"]
    chat["sent_at_form"] = stamps["form"]

    unknown = ~chat["character_id"].isin(known)
    chat_s.reject(
        unknown,
        UNKNOWN_CHARACTER,
        chat.loc[unknown, "character_id"].map(lambda v: f"character_id '{v}' has no valid character_sheet row"),
    )
    chat = chat_s.rows
    after = pd.Series(
        [v in last and s < last[v] for v, s in zip(cells(chat["viewer_id"]), cells(chat["sent_at_ns"]))], index=chat.index
    )
    chat_s.reject(
        after,
        REPLY_AFTER_LINE,
        chat.loc[after, "viewer_id"].map(
            lambda v: f"viewer_relation.last_replied_at of '{v}' is after this line's sent_at (negative cooldown)"
        ),
    )
    return chat_s


def stored_columns(dataset: str) -> list[str]:
    """The columns kept when a normalised table is stored; derived ones are re-derived on load."""
    return storage.stored_columns(DOMAIN, dataset)


JSON_COLUMNS = ("topic_tags", "world_topic_tags", "banned_tags", "min_closeness_by_topic", "answered_topics")
"""List and map columns: stored as JSON text."""


def restore(tables: dict[str, pd.DataFrame], config: LivePickConfig) -> dict[str, pd.DataFrame]:
    """Re-derive exact instants and strict types after a round-trip through storage.

    Nanosecond instants are not stored: a nullable integer column comes back as float from
    SQL, which would blur them; booleans may come back as 0/1.
    """
    tz = config.timezone
    chat = tables["live_chat"].copy()
    stamps = timestamps.stored_column(cells(chat["sent_at"]), tz)
    chat["sent_at_ns"] = pd.array(stamps.ns, dtype="int64")
    chat["sent_at_form"] = stamps.forms.tolist()
    chat["is_question"] = chat["is_question"].astype(bool)
    chat["donation_amount"] = chat["donation_amount"].astype("int64")
    rel = tables["viewer_relation"].copy()
    rel["last_replied_at"] = rel["last_replied_at"].astype(object).where(rel["last_replied_at"].notna(), None)
    rel["last_replied_ns"] = pd.array(
        [None if v is None else timestamps.parse(v, tz).ns for v in rel["last_replied_at"]], dtype="Int64"
    )
    rel["closeness_level"] = rel["closeness_level"].astype("int64")
    sheet = tables["character_sheet"].copy()
    sheet["reply_cooldown_sec"] = sheet["reply_cooldown_sec"].astype("int64")
    return {"live_chat": chat, "character_sheet": sheet, "viewer_relation": rel}


def load_dir(input_dir: str | Path, config: LivePickConfig) -> Normalised:
    return normalise(read_input_dir(input_dir), config)


INTEGER_COLUMNS = {
    "live_chat": ("donation_amount",),
    "character_sheet": ("reply_cooldown_sec",),
    "viewer_relation": ("closeness_level",),
}


def _screen(raw: dict[str, pd.DataFrame], name: str) -> Screen:
    return screen(raw[name], name, ID_FIELDS[name], row_checker(DOMAIN, name), columns(DOMAIN, name), INTEGER_COLUMNS[name])


def _trim_list(values: list) -> list:
    return [trim(v) for v in values]
