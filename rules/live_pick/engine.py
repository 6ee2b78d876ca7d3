"""The §4 rules, vectorised over whole tables.

Each filter is one function named after the verdict it decides; tag set operations are done
on a long (line, tag) table with merges, so cost grows with the number of tags, not with
lines × vocabulary. Instants are exact integer nanoseconds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rules.common.timestamps import NS_PER_SEC, format_ns
from rules.live_pick import verdicts as V
from rules.live_pick.sheets import VERSION, is_versioned, version_in_force
from rules.live_pick.config import LivePickConfig
from rules.live_pick.explain import explain
from rules.live_pick.tags import tag_lines

OUTPUT_COLUMNS = [
    "pick_id",
    "msg_id",
    "viewer_id",
    "character_id",
    "window_start",
    "verdict",
    "rank_in_window",
    "cooldown_elapsed_sec",
    "evidence",
    "summary",
    "hedge",
    "provenance",
    "sheet_version",
]

RANK_KEYS = ["donation_amount", "is_question", "sent_at_ns", "msg_id"]
RANK_ASCENDING = [False, False, True, True]


def judge(
    chat: pd.DataFrame,
    sheet: pd.DataFrame,
    relation: pd.DataFrame,
    config: LivePickConfig,
    tags=None,
) -> pd.DataFrame:
    """One verdict row per chat line (output-schema columns), sorted by window and rank.

    `tags`: a tagger or its name (`rules.live_pick.tags`); None is the gold `topic_tags`. The
    tags the rules used are kept beside the gold column (never written over it) and stored in
    each row's `provenance`, so evidence and re-computation can tell them apart.
    """
    if chat.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in OUTPUT_COLUMNS})
    tagging = tag_lines(chat, sheet, tags, config.window_seconds)
    f = features(chat, sheet, relation, config, tagging)
    f["verdict"] = None
    for verdict, rule in ((V.OUT_OF_WORLD, out_of_world), (V.JUST_ANSWERED, just_answered), (V.BELOW_CLOSENESS, below_closeness)):
        undecided = f["verdict"].isna()
        f.loc[undecided & rule(f), "verdict"] = verdict
    rank_remaining(f, config)
    f["window_start"] = [format_ns(ns, form, config.timezone) for ns, form in zip(f["window_ns"], f["sent_at_form"])]
    f["pick_id"] = pick_ids(f["msg_id"])
    f["evidence"], f["summary"], f["hedge"] = explain(f, config)
    f["provenance"] = [
        {"tagger": t, "answer": a, "tags": u, "discard": d, "summary": "template", "summary_fallback": None}
        for t, a, u, d in zip(f["tagger"], f["tag_answer"], f["tags"], f["tag_discard"])
    ]
    f = f.sort_values(
        ["window_ns", "character_id", "rank_in_window", "sent_at_ns", "msg_id"], na_position="last", kind="stable"
    )
    return f[OUTPUT_COLUMNS].reset_index(drop=True)


def features(chat: pd.DataFrame, sheet: pd.DataFrame, relation: pd.DataFrame, config: LivePickConfig,
             tagging: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every chat line with its sheet, relation, window, elapsed seconds and tag facts.

    `tags` are what the rules use (`tagging`, index-aligned with `chat`; gold when None)."""
    tagging = tag_lines(chat, sheet, None) if tagging is None else tagging
    f = chat.reset_index(drop=True).copy()
    f["tags"] = list(tagging["tags"])
    f["tag_answer"] = list(tagging["answer"])
    f["tag_discard"] = list(tagging["discard"])
    f["tagger"] = list(tagging["tagger"])
    f["row"] = np.arange(len(f))
    step = config.window_seconds * NS_PER_SEC
    sent = f["sent_at_ns"].to_numpy(dtype="int64")
    f["window_ns"] = sent - sent % step
    # Each line is judged with the sheet version in force when its window opened.
    f[VERSION] = version_in_force(f, sheet)
    on = ["character_id", VERSION] if is_versioned(sheet) else ["character_id"]
    sheet_cols = ["character_name", "world_topic_tags", "banned_tags", "min_closeness_by_topic", "reply_cooldown_sec"]
    f = f.merge(sheet[[*on, *sheet_cols]], on=on, how="left", validate="many_to_one")
    rel = relation[["viewer_id", "nickname", "closeness_level", "answered_topics", "last_replied_at", "last_replied_ns"]]
    f = f.merge(rel.assign(has_relation=True), on="viewer_id", how="left", validate="many_to_one")
    f["has_relation"] = f["has_relation"].eq(True)
    f["closeness_level"] = f["closeness_level"].where(f["has_relation"], config.first_time_viewer.closeness_level).astype("int64")
    f["answered_topics"] = [a if isinstance(a, list) else [] for a in f["answered_topics"]]

    sent = f["sent_at_ns"].to_numpy(dtype="int64")
    has_last = f["last_replied_ns"].notna().to_numpy()
    last = f["last_replied_ns"].astype("Int64").fillna(0).to_numpy(dtype="int64")
    f["has_last"] = has_last
    f["cooldown_elapsed_sec"] = pd.array(np.where(has_last, (sent - last) // NS_PER_SEC, 0), dtype="Int64")
    f.loc[~has_last, "cooldown_elapsed_sec"] = pd.NA

    _tag_facts(f, config)
    return f


def _tag_facts(f: pd.DataFrame, config: LivePickConfig) -> None:
    """Per line: tag count, first banned / off-world / answered tag, required closeness."""
    # A character's vocabulary and thresholds may differ between sheet versions: key by both.
    f["sheet_key"] = f["character_id"].astype(str) + "\x1f" + f[VERSION].astype(str)
    ex = f[["row", "sheet_key", "viewer_id", "tags"]].explode("tags").dropna(subset=["tags"])
    ex = ex.rename(columns={"tags": "tag"}).astype({"tag": object})
    ex["pos"] = np.arange(len(ex))  # keeps each line's tag order for "first"

    def members(frame: pd.DataFrame, key: str, col: str) -> pd.DataFrame:
        long = frame[[key, col]].explode(col).dropna(subset=[col]).rename(columns={col: "tag"}).astype({"tag": object})
        return long.drop_duplicates().assign(hit=True)

    def flag(long: pd.DataFrame, key: str) -> pd.Series:
        hit = ex.merge(long, on=[key, "tag"], how="left")["hit"]
        return hit.eq(True).to_numpy()

    sheet_cols = f.drop_duplicates("sheet_key")
    ex["banned"] = flag(members(sheet_cols, "sheet_key", "banned_tags"), "sheet_key")
    ex["world"] = flag(members(sheet_cols, "sheet_key", "world_topic_tags"), "sheet_key")
    viewers = f.drop_duplicates("viewer_id")
    ex["answered"] = flag(members(viewers, "viewer_id", "answered_topics"), "viewer_id")

    mins = pd.DataFrame(
        [(c, t, v) for c, m in zip(sheet_cols["sheet_key"], sheet_cols["min_closeness_by_topic"]) for t, v in m.items()],
        columns=["sheet_key", "tag", "min_closeness"],
    )
    ex = ex.merge(mins, on=["sheet_key", "tag"], how="left").sort_values("pos")
    ex["in_map"] = ex["min_closeness"].notna()
    ex["min_closeness"] = pd.to_numeric(ex["min_closeness"]).astype(float).fillna(config.missing_topic_min_closeness)

    def first(mask: np.ndarray) -> pd.Series:
        return ex.loc[mask].groupby("row")["tag"].first().reindex(f["row"]).to_numpy()

    f["n_tags"] = ex.groupby("row").size().reindex(f["row"], fill_value=0).to_numpy()
    f["banned_tag"] = first(ex["banned"].to_numpy())
    f["offworld_tag"] = first(~ex["world"].to_numpy() & ~ex["banned"].to_numpy())
    f["answered_tag"] = first(ex["answered"].to_numpy())
    f["first_tag"] = first(np.ones(len(ex), dtype=bool))
    top = ex.sort_values(["row", "min_closeness", "pos"], ascending=[True, False, True]).drop_duplicates("row")
    top = top.set_index("row").reindex(f["row"])
    f["required_closeness"] = top["min_closeness"].astype(float).fillna(config.missing_topic_min_closeness).to_numpy()
    f["required_tag"] = top["tag"].to_numpy()
    f["required_in_map"] = top["in_map"].eq(True).to_numpy()


# -- the rules, in order ---------------------------------------------------------------


def out_of_world(f: pd.DataFrame) -> pd.Series:
    """No tags; or a banned tag; or a tag that is not a world topic."""
    return f["n_tags"].eq(0) | f["banned_tag"].notna() | f["offworld_tag"].notna()


def just_answered(f: pd.DataFrame) -> pd.Series:
    """Replied before, still inside the cooldown, and a tag was already answered."""
    inside = f["cooldown_elapsed_sec"].lt(f["reply_cooldown_sec"]).fillna(False).astype(bool)
    return f["has_last"] & inside & f["answered_tag"].notna()


def below_closeness(f: pd.DataFrame) -> pd.Series:
    """Closeness below the largest per-topic minimum among the line's tags."""
    return f["closeness_level"] < f["required_closeness"]


def rank_remaining(f: pd.DataFrame, config: LivePickConfig) -> None:
    """Rank the unfiltered lines of each character window; the top N are answered now."""
    remaining = f["verdict"].isna()
    r = f.loc[remaining].sort_values(["character_id", "window_ns", *RANK_KEYS], ascending=[True, True, *RANK_ASCENDING])
    groups = r.groupby(["character_id", "window_ns"], sort=False)
    rank = groups.cumcount() + 1
    f["rank_in_window"] = pd.array([pd.NA] * len(f), dtype="Int64")
    f.loc[rank.index, "rank_in_window"] = rank.astype("int64")
    f["ranked_in_window"] = pd.array([pd.NA] * len(f), dtype="Int64")
    f.loc[rank.index, "ranked_in_window"] = groups["msg_id"].transform("size").astype("int64")
    f.loc[remaining, "verdict"] = np.where(f.loc[remaining, "rank_in_window"] <= config.picks_per_window, V.PICK, V.DEFERRED)


def pick_ids(msg_ids: pd.Series) -> list[str]:
    """`PICK-` + the last segment of msg_id; the whole msg_id where that segment is shared."""
    last = msg_ids.map(lambda m: m.rsplit("-", 1)[-1])
    clash = last.duplicated(keep=False)
    return ["PICK-" + (m if c else s) for m, s, c in zip(msg_ids, last, clash)]


def records(verdicts: pd.DataFrame) -> list[dict]:
    """Output rows as plain JSON-ready dicts (None, not NA; int, not numpy)."""
    out = []
    for row in verdicts[OUTPUT_COLUMNS].itertuples(index=False):
        d = row._asdict()
        for k in ("rank_in_window", "cooldown_elapsed_sec", "sheet_version"):
            d[k] = None if pd.isna(d[k]) else int(d[k])
        out.append(d)
    return out
