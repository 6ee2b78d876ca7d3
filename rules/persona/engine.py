"""The §3 rules, vectorised over whole tables: one merge, then one mask per rule."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from rules.common.distinct import is_text, per_distinct_text, select_labels
from rules.common.frames import renumbered
from rules.common.lookup import add_looked_up
from rules.common.evidence import plain_columns, rows_of
from rules.common.cells import int_or_none, trim, trim_column
from rules.common.ordering import stable_order
from rules.common.output import output_frame
from rules.persona import verdicts as V
from rules.persona.config import PersonaConfig
from rules.persona.explain import READS, explain

OUTPUT_COLUMNS = ["check_id", "turn_no", "profile_no", "persona_code", "evidence", "summary", "hedge"]
EXPLAINED = list(dict.fromkeys([*(c for c in OUTPUT_COLUMNS if c not in ("evidence", "summary", "hedge")), *READS]))
"""The feature columns a part of decided turns is explained and output from."""


def judge(turns: pd.DataFrame, profiles: pd.DataFrame, config: PersonaConfig) -> pd.DataFrame:
    """One verdict row per turn (output-schema columns), in time order."""
    if turns.empty:
        return _no_rows()
    f, order = decided(turns, profiles, config)
    return _explained(f.iloc[order], config)


PART_ROWS = 50_000
"""Rows explained at once by `judge_parts`."""


def judge_parts(turns: pd.DataFrame, profiles: pd.DataFrame, config: PersonaConfig, rows: int | None = None):
    """`judge`'s rows, `rows` at a time: every verdict is decided first, then each part taken in time
    order and explained as it is asked for (a turn's explanation reads that turn alone), so a writer
    never holds every row's evidence at once. Each part's evidence is its rows' JSON texts, for writing
    as they are; `records` reads them back."""
    for make in part_makers(turns, profiles, config, rows):
        yield make()


def part_makers(turns: pd.DataFrame, profiles: pd.DataFrame, config: PersonaConfig, rows: int | None = None) -> list:
    """`judge_parts`' parts as calls: every verdict decided now, each part explained when its call is made."""
    rows = rows or PART_ROWS
    if turns.empty:
        return [_no_rows]
    f, order = decided(turns, profiles, config)
    f = f[EXPLAINED]  # a part takes the columns explaining and output read, not every feature
    return [partial(_explained_part, f, order[start:start + rows], config) for start in range(0, len(f), rows)]


def _explained_part(f: pd.DataFrame, positions: np.ndarray, config: PersonaConfig) -> pd.DataFrame:
    return _explained(f.iloc[positions], config, encoded=True)


def decided(turns: pd.DataFrame, profiles: pd.DataFrame, config: PersonaConfig) -> tuple[pd.DataFrame, np.ndarray]:
    """Every turn's features and verdict, and the positions that put them in output (time) order."""
    f = features(turns, profiles)
    masks = {
        V.PROFILE_UNMAPPED: profile_unmapped(f),
        V.REPLY_EMPTY: reply_empty(f),
        V.FORBIDDEN_TOPIC: forbidden_topic(f, config),
        V.AGE_CONFLICT: age_conflict(f, config),
        V.JOB_CONFLICT: job_conflict(f, config),
    }
    f["persona_code"] = select_labels([masks[c].to_numpy(dtype=bool) for c in V.RULE_ORDER[:-1]], V.RULE_ORDER[:-1], V.CONSISTENT)
    f["minor_topic"] = minor_restricted(f, config) & ~forbidden_direct(f)
    f["avoided"] = avoided_forbidden(f)
    f["check_id"] = "pk_" + f["turn_no"]
    keys = ["created_at_ns", "turn_no"]
    return f, stable_order(f, keys)


def _explained(f: pd.DataFrame, config: PersonaConfig, encoded: bool = False) -> pd.DataFrame:
    """Output rows of decided turns, with their evidence (`encoded`: as JSON texts), summary and hedge."""
    cited, summaries, hedges = explain(f, config, encoded)
    return output_frame(f, OUTPUT_COLUMNS, evidence=cited, summary=summaries, hedge=hedges)


def _no_rows() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in OUTPUT_COLUMNS})


def _clean(series: pd.Series) -> pd.Series:
    """Trimmed text; blank or missing → None. A column of text (tags, jobs: few distinct values)
    is cleaned once per distinct value, found by pandas' factorize; any other in one list pass."""
    values = series.to_numpy(dtype=object)
    if is_text(values):
        return pd.Series(per_distinct_text(lambda v: trim(v) or None, values), index=series.index, dtype=object)
    cells = trim_column(series).tolist()
    return pd.Series([(v or None) if isinstance(v, str) else None for v in cells], index=series.index, dtype=object)


def features(turns: pd.DataFrame, profiles: pd.DataFrame) -> pd.DataFrame:
    f = renumbered(turns.copy())
    f["character_code"] = trim_column(f["character_code_raw"])
    prof = profiles.rename(columns={c: f"profile_{c}" for c in ("age", "job", "forbidden_topic", "character_name", "note", "file", "line")})
    keep = ["character_code", "profile_no", "profile_age", "profile_job", "profile_forbidden_topic", "profile_character_name"]
    add_looked_up(f, prof, ["character_code"], keep[1:])  # not a merge: its check of the keys stops at a NUL
    f["topic"] = _clean(f["topic_tag"])
    f["user_topic"] = _clean(f["user_topic_tag"])
    f["forbidden"] = _clean(f["profile_forbidden_topic"])
    f["job"] = _clean(f["profile_job"])
    f["stated_job_clean"] = _clean(f["stated_job"])
    f["age"] = int_or_none(f["profile_age"])
    f["stated_age"] = int_or_none(f["stated_age"])
    return f


# -- the rules, in order ---------------------------------------------------------------


def profile_unmapped(f: pd.DataFrame) -> pd.Series:
    return f["profile_no"].isna()


def reply_empty(f: pd.DataFrame) -> pd.Series:
    return f["reply_text"].map(lambda v: not isinstance(v, str) or not v.strip())


def forbidden_direct(f: pd.DataFrame) -> pd.Series:
    return f["topic"].notna() & f["forbidden"].notna() & (f["topic"] == f["forbidden"])


def minor_restricted(f: pd.DataFrame, config: PersonaConfig) -> pd.Series:
    minor = f["age"].map(lambda a: a is not None and a < config.adult_age)
    return minor & f["topic"].isin(config.age_restricted_topics)


def forbidden_topic(f: pd.DataFrame, config: PersonaConfig) -> pd.Series:
    return forbidden_direct(f) | minor_restricted(f, config)


def age_conflict(f: pd.DataFrame, config: PersonaConfig) -> pd.Series:
    stated = f["stated_age"].notna()
    known = f["age"].notna()
    differs = stated & known & (f["stated_age"].astype(object) != f["age"])
    unfilled = stated & ~known & (config.null_field_policy.age == "conflict")
    return differs | unfilled


def job_conflict(f: pd.DataFrame, config: PersonaConfig) -> pd.Series:
    stated = f["stated_job_clean"].notna()
    known = f["job"].notna()
    differs = stated & known & (f["stated_job_clean"] != f["job"])
    unfilled = stated & ~known & (config.null_field_policy.job == "conflict")
    return differs | unfilled


def avoided_forbidden(f: pd.DataFrame) -> pd.Series:
    """Asked for the forbidden topic, answered something else."""
    return f["forbidden"].notna() & (f["user_topic"] == f["forbidden"]) & (f["topic"] != f["forbidden"])


def records(verdicts: pd.DataFrame) -> list[dict]:
    """Output rows as plain JSON-ready dicts (None for a missing profile_no or hedge), made column by column."""
    return rows_of(verdict_columns(verdicts))


def verdict_columns(verdicts: pd.DataFrame) -> dict[str, list]:
    """`records`' values by output column."""
    return plain_columns(verdicts, OUTPUT_COLUMNS)
