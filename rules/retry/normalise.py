"""Gates of the retry datasets: raw lines → normalised tables + quarantine.

The catalog is screened first: an event is judged only on a surface with a valid catalog
row. Event gates, in order: JSON, schema, ids (empty, repeated), session, sent_at, surface,
empty input, no words. An event that fails one leaves with that reason and is not looked
at again, so its session is judged without it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from rules.common import jsonl, storage, timestamps
from rules.common.distinct import each_value
from rules.common.evidence import cells
from rules.common.cells import trim, trim_column
from rules.common.gates import Screen, screen
from rules.common.normalised import Normalised, gathered
from rules.retry import text
from rules.retry.config import RetryConfig
from schemas import columns, row_checker
from schemas.retry import DOMAIN, INPUT_DATASETS

MISSING_SESSION = "missing_session"
UNKNOWN_SURFACE = "unknown_surface"
EMPTY_INPUT = "empty_input"
NO_WORDS = "no_words"
KEY_NOT_LOWER = "key_not_lower"

ID_FIELDS = {"interaction_events": "event_id", "surface_catalog": "surface_key"}
TIME_FIELDS = {"interaction_events": "sent_at"}
DERIVED = ("sent_at_ns", "surface_key", "words", "squashed")
"""Columns the gates add to events; re-derived after storage rather than stored."""


def read_input_dir(input_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Raw lines of every dataset in a directory (DatasetError names a bad file)."""
    return jsonl.read_input_dir(input_dir, DOMAIN, INPUT_DATASETS)


def _screen(raw: dict[str, pd.DataFrame], name: str) -> Screen:
    return screen(raw[name], name, ID_FIELDS[name], row_checker(DOMAIN, name), columns(DOMAIN, name))


def normalise(raw: dict[str, pd.DataFrame], config: RetryConfig) -> Normalised:
    cat_s = screen_catalog(raw["surface_catalog"])
    ev_s = screen_events(raw["interaction_events"], catalog_keys(cat_s), config)
    norm = gathered({"interaction_events": ev_s, "surface_catalog": cat_s}, INPUT_DATASETS)
    norm.tables["interaction_events"] = derive(norm.tables["interaction_events"], config)
    return norm


def screen_catalog(raw: pd.DataFrame) -> Screen:
    cat_s = _screen({"surface_catalog": raw}, "surface_catalog")
    cat = cat_s.rows
    # Event keys are lower-cased; a catalog key that is not could never be matched.
    upper = cat["surface_key"].map(lambda k: k != k.lower())
    cat_s.reject(upper, KEY_NOT_LOWER, cat.loc[upper, "surface_key"].map(
        lambda k: f"surface_key '{k}' is not lower-case, so no event's surface_key_raw (trimmed, lower-cased) can match it"))
    return cat_s


def catalog_keys(cat_s: Screen) -> tuple[set, set]:
    """(the valid surface keys, the ids of catalog rows quarantined): what the events' gates read."""
    return set(cat_s.rows["surface_key"]), set(cat_s.quarantine()["id"].dropna())


def screen_events(raw: pd.DataFrame, keys: tuple[set, set], config: RetryConfig) -> Screen:
    """Events through their gates, against the catalog's keys (`catalog_keys`)."""
    known, rejected = keys
    ev_s = _screen({"interaction_events": raw}, "interaction_events")
    ev = ev_s.rows
    ev["session_id"] = trim_column(ev["session_id"])
    blank = ev["session_id"].eq("")
    ev_s.reject(blank, MISSING_SESSION, "session_id is empty")

    ev_s.rows["sent_at_ns"] = ev_s.stamps("sent_at", config.timezone)["ns"]

    ev = ev_s.rows
    key = each_value(surface_key, ev["surface_key_raw"])
    unknown = ~key.isin(known)
    ev_s.reject(unknown, UNKNOWN_SURFACE, key[unknown].map(lambda k: _unknown_reason(k, rejected)))

    ev = ev_s.rows
    empty = each_value(lambda t: trim(t) == "", ev["input_text"]).astype(bool)
    ev_s.reject(empty, EMPTY_INPUT, "input_text is empty")

    ev = ev_s.rows
    no_words = each_value(lambda t: not text.normalised(t).split(), ev["input_text"]).astype(bool)
    ev_s.reject(no_words, NO_WORDS, ev.loc[no_words, "input_text"].map(
        lambda t: f"input_text '{t}' has no words once punctuation and symbols are removed"))
    return ev_s


def surface_key(raw: object) -> str:
    """surface_key_raw trimmed of Unicode whitespace and lower-cased."""
    return trim(raw).lower() if isinstance(raw, str) else ""


def _unknown_reason(key: str, rejected: set) -> str:
    if key in rejected:
        return f"surface_key '{key}' has no valid surface_catalog row (its row was quarantined)"
    return f"surface_key '{key}' is not in surface_catalog"


def derive(events: pd.DataFrame, config: RetryConfig) -> pd.DataFrame:
    """The columns rules work on: the instant (when the gates have not read it already), the surface
    key, the words and the squashed text."""
    events = events.copy(deep=False)  # new columns only: the caller's frame keeps its own
    if "sent_at_ns" not in events:
        events["sent_at_ns"] = pd.array(timestamps.stored_column(cells(events["sent_at"]), config.timezone).ns, dtype="int64")
    # Keys and words recur: each is kept once (interned), not once per event, and worked out once
    # per distinct text (retries repeat their text).
    events["surface_key"] = each_value(lambda k: sys.intern(surface_key(k)), events["surface_key_raw"])
    events["words"] = each_value(_words, events["input_text"])
    events["squashed"] = each_value(text.squashed, events["input_text"])
    return events


def _words(raw: str) -> frozenset[str]:
    return frozenset(map(sys.intern, text.normalised(raw).split()))


def stored_columns(dataset: str) -> list[str]:
    """The columns kept when a normalised table is stored; derived ones are re-derived on load."""
    return storage.stored_columns(DOMAIN, dataset)


def restore(tables: dict[str, pd.DataFrame], config: RetryConfig) -> dict[str, pd.DataFrame]:
    """Strict types and derived columns again after a round-trip through storage.

    Booleans may come back as 0/1 and nullable numbers as NaN; the catalog's
    default_baseline is read as written (an integral value comes back as float).
    """
    kept = [c for c in tables["interaction_events"].columns if c not in DERIVED]
    events = storage.nulls_as_none(tables["interaction_events"][kept].copy(), floats=True)
    events["result_shown"] = events["result_shown"].map(lambda v: None if v is None else bool(v)).astype(object)
    catalog = storage.nulls_as_none(tables["surface_catalog"].copy(), floats=True)
    return {"interaction_events": derive(events, config), "surface_catalog": catalog}


def load_dir(input_dir: str | Path, config: RetryConfig) -> Normalised:
    return normalise(read_input_dir(input_dir), config)
