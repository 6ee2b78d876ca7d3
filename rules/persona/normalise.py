"""Gates of the persona datasets: raw lines → normalised tables + quarantine.

Profiles are screened first: a profile that fails its checks is absent, so its character's
turns are judged `profile_unmapped` rather than against a broken profile.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rules.common import jsonl, storage, timestamps
from rules.common.evidence import cells
from rules.common.cells import int_or_none, trim_column
from rules.common.gates import DUPLICATE_ID, MISSING_ID, screen
from rules.common.normalised import Normalised, gathered
from rules.persona.config import PersonaConfig
from schemas import columns, row_checker
from schemas.persona import DOMAIN, INPUT_DATASETS

ID_FIELDS = {"profiles": "profile_no", "turns": "turn_no"}
INTEGER_COLUMNS = {"profiles": ("age",), "turns": ("stated_age",)}
TIME_FIELDS = {"turns": "created_at"}


def read_input_dir(input_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Raw lines of every dataset in a directory (DatasetError names a bad file)."""
    return jsonl.read_input_dir(input_dir, DOMAIN, INPUT_DATASETS)


def _screen(raw: dict[str, pd.DataFrame], name: str):
    return screen(raw[name], name, ID_FIELDS[name], row_checker(DOMAIN, name), columns(DOMAIN, name), INTEGER_COLUMNS[name])


def normalise(raw: dict[str, pd.DataFrame], config: PersonaConfig) -> Normalised:
    return gathered({"profiles": screen_profiles(raw["profiles"]), "turns": screen_turns(raw["turns"], config)}, INPUT_DATASETS)


def screen_profiles(raw: pd.DataFrame):
    """Profiles through their gates: ids, then a character_code kept by its first profile only."""
    prof_s = _screen({"profiles": raw}, "profiles")
    p = prof_s.rows
    p["character_code"] = trim_column(p["character_code"])
    prof_s.reject(p["character_code"].eq(""), MISSING_ID, "character_code is empty")
    p = prof_s.rows
    dup = p["character_code"].duplicated(keep="first")
    first = p.drop_duplicates("character_code").set_index("character_code")["line"]
    prof_s.reject(dup, DUPLICATE_ID, p.loc[dup, "character_code"].map(lambda c: f"character_code '{c}' repeats the profile on line {first[c]}"))
    return prof_s


def screen_turns(raw: pd.DataFrame, config: PersonaConfig):
    """Turns through their gates (none reads another dataset): ids, the time."""
    turn_s = _screen({"turns": raw}, "turns")
    stamps = turn_s.stamps("created_at", config.timezone)
    t = turn_s.rows
    t["created_at_ns"] = stamps["ns"]
    return turn_s


def stored_columns(dataset: str) -> list[str]:
    """The columns kept when a normalised table is stored; instants are re-derived on load."""
    return storage.stored_columns(DOMAIN, dataset)


def restore_turns(turns: pd.DataFrame, config: PersonaConfig) -> pd.DataFrame:
    """Re-derive instants and integer types after storage (nullable ints come back as float)."""
    turns = turns.copy()
    turns["stated_age"] = int_or_none(turns["stated_age"])
    turns["created_at_ns"] = pd.array(timestamps.stored_column(cells(turns["created_at"]), config.timezone).ns, dtype="int64")
    return storage.nulls_as_none(turns)


def restore(tables: dict[str, pd.DataFrame], config: PersonaConfig) -> dict[str, pd.DataFrame]:
    profiles = tables["profiles"].copy()
    profiles["age"] = int_or_none(profiles["age"])
    return {"profiles": storage.nulls_as_none(profiles), "turns": restore_turns(tables["turns"], config)}


def load_dir(input_dir: str | Path, config: PersonaConfig) -> Normalised:
    return normalise(read_input_dir(input_dir), config)
