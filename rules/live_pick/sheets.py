"""Character-sheet versions: which version of a sheet judges a line, and the next version.

A versioned sheet table holds every version of every character: the sheet columns plus
`sheet_version` (1, 2, …) and `effective_ns` (epoch nanoseconds from which it is in force;
null for version 1, the sheet file as loaded, which is in force from the beginning).
A line is judged with the version in force when its window opened: the highest version whose
`effective_ns` is at or before the window's start. So re-judging a past day gives the
verdicts of that day, whatever was changed since.

A sheet without these columns (a plain `character_sheet.jsonl`) is unversioned: one row per
character, and verdicts record no version.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from rules.common.nullable import missing_int64

VERSION = "sheet_version"
EFFECTIVE = "effective_ns"
SHEET_FIELDS = ("character_id", "character_name", "world_topic_tags", "banned_tags", "min_closeness_by_topic",
                "reply_cooldown_sec", "note")
TUNABLE = ("reply_cooldown_sec", "min_closeness_by_topic")
"""The fields a tuning suggestion may change."""
_ALWAYS = np.iinfo("int64").min
VERSIONS_TABLE = "live_pick_sheet_versions"
"""The warehouse table of every version (column `version`; list and map columns as JSON)."""
JSON_FIELDS = ("world_topic_tags", "banned_tags", "min_closeness_by_topic")


def from_stored(stored: pd.DataFrame) -> pd.DataFrame:
    """Rows of the versions table as a versioned sheet (JSON decoded, exact integer types)."""
    out = pd.DataFrame({k: stored[k] if k in stored else None for k in SHEET_FIELDS})
    for k in JSON_FIELDS:
        out[k] = [json.loads(v) if isinstance(v, str) else v for v in out[k]]
    out["note"] = out["note"].astype(object).where(out["note"].notna(), None)
    out["reply_cooldown_sec"] = out["reply_cooldown_sec"].astype("int64")
    out[VERSION] = stored["version"].astype("int64").to_numpy()
    out[EFFECTIVE] = pd.array([None if pd.isna(v) else int(v) for v in stored[EFFECTIVE]], dtype="Int64")
    return out.sort_values(["character_id", VERSION], kind="stable").reset_index(drop=True)


def with_history(file_sheet: pd.DataFrame, stored: pd.DataFrame | None) -> pd.DataFrame:
    """The versioned sheet of the characters in a normalised sheet file: their stored versions, or
    the file row as version 1 (in force from the start) for a character with none stored yet."""
    stored = from_stored(stored) if stored is not None and len(stored) else None
    have = set() if stored is None else set(stored["character_id"])
    fresh = file_sheet[~file_sheet["character_id"].isin(have)]
    first = pd.DataFrame({**{k: fresh[k].to_numpy() for k in SHEET_FIELDS},
                          VERSION: np.ones(len(fresh), dtype="int64"), EFFECTIVE: pd.array([None] * len(fresh), dtype="Int64")})
    parts = [first] if stored is None else [stored[stored["character_id"].isin(set(file_sheet["character_id"]))], first]
    out = pd.concat([p for p in parts if len(p)] or [first], ignore_index=True)
    out["reply_cooldown_sec"] = out["reply_cooldown_sec"].astype("int64")
    out[VERSION] = out[VERSION].astype("int64")
    out[EFFECTIVE] = pd.array(out[EFFECTIVE], dtype="Int64")
    return out.sort_values(["character_id", VERSION], kind="stable").reset_index(drop=True)


def is_versioned(sheet: pd.DataFrame) -> bool:
    return VERSION in sheet.columns


def version_in_force(lines: pd.DataFrame, sheet: pd.DataFrame) -> pd.Series:
    """Per line (`character_id`, `window_ns`), the sheet version in force when its window opened.

    Vectorised as an as-of join per character. A window older than every version of its
    character (cannot happen once version 1 exists, which is in force from the start) takes the
    character's first version.
    """
    if not is_versioned(sheet) or lines.empty:
        return pd.Series(missing_int64(len(lines)), index=lines.index)
    v = pd.DataFrame({
        "character_id": sheet["character_id"].astype(object),
        "from_ns": pd.array(sheet[EFFECTIVE], dtype="Int64").fillna(_ALWAYS).astype("int64"),
        VERSION: sheet[VERSION].astype("int64"),
    }).sort_values(["from_ns", VERSION], kind="stable")
    left = pd.DataFrame({"character_id": lines["character_id"].astype(object).to_numpy(),
                         "window_ns": lines["window_ns"].astype("int64").to_numpy(), "_row": np.arange(len(lines))})
    m = pd.merge_asof(left.sort_values("window_ns", kind="stable"), v, left_on="window_ns", right_on="from_ns",
                      by="character_id", direction="backward")
    first = v.sort_values(VERSION).drop_duplicates("character_id").set_index("character_id")[VERSION]
    m[VERSION] = m[VERSION].fillna(m["character_id"].map(first))
    out = m.sort_values("_row")[VERSION].to_numpy()
    return pd.Series(pd.array(out, dtype="Int64"), index=lines.index)


def in_force_at(versions: list[dict], at_ns: int) -> dict:
    """Row by row: the version (a dict with sheet_version, effective_ns) in force at `at_ns`."""
    ordered = sorted(versions, key=lambda r: r[VERSION])
    best = None
    for r in ordered:
        start = r.get(EFFECTIVE)
        if start is None or pd.isna(start) or int(start) <= at_ns:
            best = r
    return best if best is not None else ordered[0]


def latest(sheet: pd.DataFrame) -> pd.DataFrame:
    """One row per character: its newest version (what a change is applied on top of)."""
    if not is_versioned(sheet):
        return sheet
    return sheet.sort_values(VERSION, kind="stable").drop_duplicates("character_id", keep="last").reset_index(drop=True)


def changed(row: dict, field: str, topic: str | None, value) -> dict:
    """The sheet fields of `row` with one tunable value replaced (a new dict; `row` is untouched)."""
    if field not in TUNABLE:
        raise ValueError(f"{field} is not a tunable sheet field ({', '.join(TUNABLE)})")
    out = {k: row[k] for k in SHEET_FIELDS if k in row}
    if field == "reply_cooldown_sec":
        out[field] = int(value)
    else:
        if topic is None:
            raise ValueError("a min_closeness_by_topic change names its topic")
        out[field] = {**dict(row[field]), topic: value}
    return out


def tuned_value(row: dict, field: str, topic: str | None):
    """The value a suggestion changes in one version: the cooldown, or one topic's threshold (None
    when the topic is absent from the map)."""
    if field == "min_closeness_by_topic":
        return (row.get(field) or {}).get(topic)
    return row.get(field)


def moved_since(history: list[dict], base_version: int, field: str, topic: str | None) -> dict | None:
    """The first version after `base_version` whose value of (`field`, `topic`) differs from the
    base's, or None: a suggestion goes stale only when the value it changes was changed since it
    was made (another topic's threshold, or the cooldown, moving does not touch it)."""
    base = next((h for h in history if h["version"] == base_version), None)
    if base is None:
        return None
    was = tuned_value(base, field, topic)
    return next((h for h in history if h["version"] > base_version and tuned_value(h, field, topic) != was), None)


def diff(before: dict | None, after: dict) -> list[str]:
    """What changed between two versions of a sheet, one short line per field."""
    if before is None:
        return []
    out = []
    if before.get("reply_cooldown_sec") != after.get("reply_cooldown_sec"):
        out.append(f"reply_cooldown_sec {before.get('reply_cooldown_sec')} → {after.get('reply_cooldown_sec')}")
    b, a = before.get("min_closeness_by_topic") or {}, after.get("min_closeness_by_topic") or {}
    for topic in sorted(set(b) | set(a)):
        if b.get(topic) != a.get(topic):
            out.append(f"min_closeness_by_topic[{topic}] {b.get(topic, '—')} → {a.get(topic, '—')}")
    for k in ("character_name", "world_topic_tags", "banned_tags", "note"):
        if before.get(k) != after.get(k):
            out.append(f"{k} changed")
    return out
