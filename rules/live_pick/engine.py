"""The §4 rules, vectorised over whole tables.

Each filter is one function named after the verdict it decides; tag set operations are done
on a long (line, tag) table with merges, so cost grows with the number of tags, not with
lines × vocabulary. Instants are exact integer nanoseconds.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from rules.common.distinct import exact_factorize
from rules.common.frames import columns_of, renumbered, taken
from rules.common.nullable import missing_int64
from rules.common.json_columns import Encoded, object_texts
from rules.common.timestamps import NS_PER_SEC, format_ns
from rules.live_pick import verdicts as V
from rules.live_pick.sheets import VERSION, is_versioned, version_in_force
from rules.live_pick.config import LivePickConfig
from rules.common.evidence import cells, plain_columns, plain_records, rows_of
from rules.common.lookup import add_looked_up
from rules.common.ordering import stable_order
from rules.common.output import output_frame
from rules.live_pick.explain import READS, explain, ranked, ranked_bases
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
        return _no_rows()
    f = filtered(chat, sheet, relation, config, tags)
    rank_remaining(f, config)
    return _rows(f, config)


PART_ROWS = 50_000
"""Rows explained at once by `judge_parts`."""

PROVENANCE = ("tagger", "tag_answer", "tags", "tag_discard")
"""The feature columns a line's provenance is made of."""

EXPLAINED = list(dict.fromkeys([*(c for c in OUTPUT_COLUMNS if c not in ("evidence", "summary", "hedge", "provenance")),
                                 "verdict", *READS, *PROVENANCE]))
"""The feature columns a part of decided lines is explained and output from."""


def judge_parts(chat: pd.DataFrame, sheet: pd.DataFrame, relation: pd.DataFrame, config: LivePickConfig,
                tags=None, rows: int | None = None):
    """`judge`'s rows, `rows` at a time: every line is decided and ranked first, then each part
    explained as it is asked for (a line's explanation reads that line alone), so a writer never
    holds every row's evidence at once. Each part's evidence is its rows' JSON texts, for writing as
    they are; `records` reads them back."""
    for make in part_makers(chat, sheet, relation, config, tags, rows):
        yield make()


def part_makers(chat: pd.DataFrame, sheet: pd.DataFrame, relation: pd.DataFrame, config: LivePickConfig,
                tags=None, rows: int | None = None) -> list:
    """`judge_parts`' parts as calls: every line decided and ranked now, each part explained when its call is made."""
    rows = rows or PART_ROWS
    if chat.empty:
        return [_no_rows]
    f = filtered(chat, sheet, relation, config, tags)
    rank_remaining(f, config)
    order = _ordered(f)
    f = columns_of(f, EXPLAINED)  # a part takes the columns explaining and output read, not every feature
    return [partial(_explained_part, f, order[start:start + rows], config) for start in range(0, len(f), rows)]


def _explained_part(f: pd.DataFrame, positions: np.ndarray, config: LivePickConfig) -> pd.DataFrame:
    return _explained(f.iloc[positions], config, encoded=True)


def filtered(chat: pd.DataFrame, sheet: pd.DataFrame, relation: pd.DataFrame, config: LivePickConfig,
             tags=None) -> pd.DataFrame:
    """Every line's features with the three filters applied: `verdict` is the first filter that
    matched, None for a line left for the ranking. None of this depends on the window's other lines."""
    tagging = tag_lines(chat, sheet, tags, config.window_seconds)
    f = features(chat, sheet, relation, config, tagging)
    f["verdict"] = None
    for verdict, rule in ((V.OUT_OF_WORLD, out_of_world), (V.JUST_ANSWERED, just_answered), (V.BELOW_CLOSENESS, below_closeness)):
        undecided = f["verdict"].isna()
        f.loc[undecided & rule(f), "verdict"] = verdict
    f["window_start"] = window_starts(f["window_ns"].tolist(), f["sent_at_form"].tolist(), config.timezone)
    return f


def window_starts(window_ns: list[int], forms: list, tz: str) -> list[str]:
    """Each line's window start written in its own timestamp form: formatted once per distinct
    (window, form), which every line of a window shares, and the text shared with them."""
    written: dict[tuple, str] = {}
    out = []
    for key in zip(window_ns, forms):
        text = written.get(key)
        if text is None:
            text = written[key] = format_ns(key[0], key[1], tz)
        out.append(text)
    return out


def _rows(f: pd.DataFrame, config: LivePickConfig) -> pd.DataFrame:
    """Output rows of decided and ranked lines: ids, explanation, provenance, in window and rank order."""
    return _explained(f.iloc[_ordered(f)], config)


ORDER = ["window_ns", "character_id", "rank_in_window", "sent_at_ns", "msg_id"]
"""Output order: window, character, rank (unranked lines last), time, id."""


def _ordered(f: pd.DataFrame) -> np.ndarray:
    """Gives decided and ranked lines their pick ids (settled among all of them); returns the
    positions that put them in output order (`ORDER`), sorting the keys alone rather than every column."""
    f["pick_id"] = pick_ids(f["msg_id"])
    return stable_order(f, ORDER)


def _explained(f: pd.DataFrame, config: LivePickConfig, encoded: bool = False) -> pd.DataFrame:
    """Output rows of decided lines in output order, with their explanation (`encoded`: the evidence
    as JSON texts) and provenance."""
    cited, summaries, hedges = explain(f, config, encoded)
    return output_frame(f, OUTPUT_COLUMNS, evidence=cited, summary=summaries, hedge=hedges,
                        provenance=_provenance(f, encoded))


def _no_rows() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in OUTPUT_COLUMNS})


def _provenance(f: pd.DataFrame, encoded: bool = False) -> list[dict] | Encoded:
    """Each line's tagger, its answer, the tags used and why an answer was discarded, with the
    template's sentence; `encoded`: as each row's JSON text (`object_texts`), where it can be."""
    columns = dict(zip(("tagger", "answer", "tags", "discard"), (cells(f[c]) for c in PROVENANCE)))
    template = {"summary": "template", "summary_fallback": None}
    texts = object_texts(columns, template) if encoded else None
    if texts is not None:
        return texts
    return [{"tagger": t, "answer": a, "tags": u, "discard": d, "summary": "template", "summary_fallback": None}
            for t, a, u, d in zip(*columns.values())]


# -- judging a window whose lines arrive over its life -------------------------------------

WAITING_COLUMNS = ["msg_id", "viewer_id", "character_id", "window_ns", "window_start", "cooldown_elapsed_sec",
                   "sheet_version", "provenance", *RANK_KEYS[:-1], "base"]
"""A line that passed every filter, waiting for its window's ranking: its output fields but the
rank-decided ones, its rank keys, and the rank-independent part of its explanation."""


def judge_arrived(chat: pd.DataFrame, sheet: pd.DataFrame, relation: pd.DataFrame, config: LivePickConfig,
                  tags=None) -> tuple[pd.DataFrame, list[dict]]:
    """`judge` for lines that arrive while their window is open, in two steps: here the filtered
    lines' rows (final: a filter depends on the line alone) and the others as waiting records
    (`WAITING_COLUMNS`); `rank_waiting` finishes those once their windows' lines are all in.
    Pick ids are settled among the lines given to `rank_waiting`, as `judge` settles them among its lines."""
    if chat.empty:
        return _no_rows(), []
    f = filtered(chat, sheet, relation, config, tags)
    waits = f["verdict"].isna().to_numpy()
    done = taken(f, ~waits)
    rank_remaining(done, config)
    w = taken(f, waits)
    w["provenance"] = _provenance(w)
    w["base"] = ranked_bases(w, config)
    waiting = plain_records(w[WAITING_COLUMNS]) if len(w) else []
    return (_rows(done, config) if len(done) else _no_rows()), waiting


def rank_waiting(waiting: list[dict], config: LivePickConfig) -> list[dict]:
    """Output rows of waiting lines (`judge_arrived`), ranked within each character window among
    the waiting lines given: the same ranking and explanation `judge` gives them, in rank order."""
    if not waiting:
        return []
    f = pd.DataFrame({k: [r[k] for r in waiting] for k in ("character_id", "window_ns", *RANK_KEYS)})
    f["verdict"] = None
    f["sent_at_ns"] = f["sent_at_ns"].astype("int64")
    rank_remaining(f, config)
    ranks, counts = f["rank_in_window"].astype("int64").tolist(), f["ranked_in_window"].astype("int64").tolist()
    out = []
    for r, pick_id, verdict, rank, n in zip(waiting, pick_ids(f["msg_id"]), f["verdict"], ranks, counts):
        cited, summary = ranked(r["base"], verdict, rank, n, config)
        out.append({"pick_id": pick_id, "msg_id": r["msg_id"], "viewer_id": r["viewer_id"], "character_id": r["character_id"],
                    "window_start": r["window_start"], "verdict": verdict, "rank_in_window": rank,
                    "cooldown_elapsed_sec": r["cooldown_elapsed_sec"], "evidence": cited, "summary": summary,
                    "hedge": r["base"][2], "provenance": r["provenance"], "sheet_version": r["sheet_version"]})
    order = sorted(range(len(out)), key=lambda i: (waiting[i]["window_ns"], out[i]["character_id"], out[i]["rank_in_window"]))
    return [out[i] for i in order]  # as `judge` orders them: by window, then rank


def features(chat: pd.DataFrame, sheet: pd.DataFrame, relation: pd.DataFrame, config: LivePickConfig,
             tagging: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every chat line with its sheet, relation, window, elapsed seconds and tag facts.

    `tags` are what the rules use (`tagging`, index-aligned with `chat`; gold when None)."""
    tagging = tag_lines(chat, sheet, None) if tagging is None else tagging
    f = renumbered(chat.copy())
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
    add_looked_up(f, sheet, on, sheet_cols)
    rel = ["nickname", "closeness_level", "answered_topics", "last_replied_at", "last_replied_ns"]
    add_looked_up(f, relation[["viewer_id", *rel]].assign(has_relation=True), ["viewer_id"], [*rel, "has_relation"])
    f["has_relation"] = f["has_relation"].eq(True)
    f["closeness_level"] = f["closeness_level"].where(f["has_relation"], config.first_time_viewer.closeness_level).astype("int64")
    f["answered_topics"] = [a if isinstance(a, list) else [] for a in cells(f["answered_topics"])]

    sent = f["sent_at_ns"].to_numpy(dtype="int64")
    has_last = f["last_replied_ns"].notna().to_numpy()
    last = f["last_replied_ns"].astype("Int64").fillna(0).to_numpy(dtype="int64")
    f["has_last"] = has_last
    f["cooldown_elapsed_sec"] = pd.array(np.where(has_last, (sent - last) // NS_PER_SEC, 0), dtype="Int64")
    f.loc[~has_last, "cooldown_elapsed_sec"] = pd.NA

    _tag_facts(f, config)
    return f


def _tag_facts(f: pd.DataFrame, config: LivePickConfig) -> None:
    """Per line: tag count, first banned / off-world / answered tag, required closeness.

    One pass over the lines' short tag lists against each sheet's and viewer's vocabulary, held
    as sets and maps: a handful of lookups per line, with no per-call joins (a live batch of a
    few lines costs a few lookups, not a few dozen table operations)."""
    # A character's vocabulary and thresholds may differ between sheet versions: key by both.
    keys = list(zip(cells(f["character_id"]), cells(f[VERSION])))
    sheets = {}
    for k, banned, world, mins in zip(keys, *(cells(f[c]) for c in ("banned_tags", "world_topic_tags", "min_closeness_by_topic"))):
        if k not in sheets:
            sheets[k] = (frozenset(banned), frozenset(world), mins)
    default = float(config.missing_topic_min_closeness)
    # What a line's tags say against its sheet is worked out once per distinct (sheet, tags): lines
    # repeat a few tag lists; only the answered tag depends on the viewer.
    facts: dict[tuple, tuple] = {}
    per_line, answered_tag = [], []
    for k, tags, answered in zip(keys, cells(f["tags"]), cells(f["answered_topics"])):
        tags = tags if isinstance(tags, list) else []
        try:
            key = (k, tuple(tags))
            fact = facts.get(key)
        except TypeError:  # a tag that cannot be a key (a tagger's odd answer): worked out alone
            key, fact = None, _sheet_facts(tags, *sheets[k], default)
        if fact is None:
            fact = facts[key] = _sheet_facts(tags, *sheets[k], default)
        per_line.append(fact)
        answered_tag.append(next((t for t in tags if t in answered), None) if answered else None)
    n_tags, banned_tag, offworld_tag, first_tag, required, required_tag, in_map = (
        map(list, zip(*per_line)) if per_line else ([] for _ in range(7)))
    f["n_tags"] = np.array(n_tags, dtype="int64")
    for name, values in (("banned_tag", banned_tag), ("offworld_tag", offworld_tag), ("answered_tag", answered_tag),
                         ("first_tag", first_tag), ("required_tag", required_tag)):
        f[name] = pd.Series(values, index=f.index, dtype=object)
    f["required_closeness"] = np.array(required, dtype=float)
    f["required_in_map"] = np.array(in_map, dtype=bool)


def _sheet_facts(tags: list, banned: frozenset, world: frozenset, mins: dict, default: float) -> tuple:
    """(tag count, first banned tag, first off-world tag, first tag, required closeness, the tag
    requiring it, whether the sheet's map names it) of one tag list against one sheet."""
    top, need, mapped = None, default, False  # the largest minimum; the earliest tag on a tie
    for t in tags:
        v = float(mins[t]) if t in mins else default
        if top is None or v > need:
            top, need, mapped = t, v, t in mins
    return (len(tags), next((t for t in tags if t in banned), None),
            next((t for t in tags if t not in world and t not in banned), None), tags[0] if tags else None,
            need, top, mapped)


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
    if not remaining.any():  # every line filtered (a live batch's filtered lines): no ranking to do
        f["rank_in_window"] = missing_int64(len(f))
        f["ranked_in_window"] = missing_int64(len(f))
        return
    keys = ["character_id", "window_ns", *RANK_KEYS]
    r = f.loc[remaining, keys]  # the keys alone, not a copy of every feature column
    r = r.iloc[stable_order(r, keys, [True, True, *RANK_ASCENDING])]
    groups = r.groupby([exact_factorize(r["character_id"])[0], r["window_ns"].to_numpy()], sort=False)
    rank = groups.cumcount() + 1
    f["rank_in_window"] = missing_int64(len(f))
    f.loc[rank.index, "rank_in_window"] = rank.astype("int64")
    f["ranked_in_window"] = missing_int64(len(f))
    f.loc[rank.index, "ranked_in_window"] = groups["msg_id"].transform("size").astype("int64")
    # Set in an array of objects: through `.loc` each line got a str of its own (562,501 at 10⁶ lines).
    where = np.flatnonzero(remaining.to_numpy(dtype=bool))
    verdicts = f["verdict"].to_numpy(dtype=object, copy=True)
    verdicts[where] = V.DEFERRED
    verdicts[where[f["rank_in_window"].to_numpy(dtype="int64", na_value=0)[where] <= config.picks_per_window]] = V.PICK
    f["verdict"] = verdicts


def pick_ids(msg_ids: pd.Series) -> list[str]:
    """`PICK-` + the last segment of msg_id; the whole msg_id where that segment is shared."""
    last = msg_ids.map(lambda m: m.rsplit("-", 1)[-1])
    clash = last.duplicated(keep=False)
    return ["PICK-" + (m if c else s) for m, s, c in zip(msg_ids, last, clash)]


def records(verdicts: pd.DataFrame) -> list[dict]:
    """Output rows as plain JSON-ready dicts (None, not NA; int, not numpy), made column by column."""
    return rows_of(verdict_columns(verdicts))


def verdict_columns(verdicts: pd.DataFrame) -> dict[str, list]:
    """`records`' values by output column."""
    columns = plain_columns(verdicts, OUTPUT_COLUMNS)  # None for NA and NaN
    for k in ("rank_in_window", "cooldown_elapsed_sec", "sheet_version"):
        columns[k] = [None if v is None else int(v) for v in columns[k]]
    return columns
