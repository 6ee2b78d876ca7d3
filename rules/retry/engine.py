"""The §5 rules, vectorised over whole tables.

Events are put in session order (session, sent_at, event_id). Pairs of events of one session
that share a word are found through a (session, word) index, never by looking at every pair.
Overlaps are exact fractions: each distinct value is made a Fraction once and ranked, and the
vectorised code compares the ranks, so no comparison ever sees a rounded number.
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial

import numpy as np
import pandas as pd

from rules.common.distinct import exact_factorize, select_labels
from rules.common.evidence import plain_columns, rows_of
from rules.common.frames import columns_of, taken
from rules.common.ordering import stable_order
from rules.common.output import output_frame
from rules.retry import verdicts as V
from rules.retry.baseline import surface_baselines
from rules.retry.config import RetryConfig
from rules.retry.explain import CONTEXT, USED, explain, explain_context
from rules.retry.wordsets import group_pairs, index_word_sets, run_offsets

OUTPUT_COLUMNS = [
    "event_id", "session_id", "surface_key", "verdict", "surface_baseline", "max_overlap", "matched_event_id", "reason",
    "evidence",
]


EXPLAINED = list(dict.fromkeys([*(c for c in OUTPUT_COLUMNS if c not in ("evidence", "reason")), *USED, *CONTEXT]))
"""The feature columns a part of decided rows is explained and output from."""

PART_ROWS = 50_000
"""Rows explained at once by `judge_parts`."""


def judge(events: pd.DataFrame, catalog: pd.DataFrame, config: RetryConfig, baselines: dict | None = None) -> pd.DataFrame:
    """One verdict row per event (output-schema columns), in time order; `baselines` (surface →
    `Baseline`): those of a wider scope than these events (a day judged a part at a time), else
    worked out from them."""
    f, order = decided(events, catalog, config, baselines)
    return _explained(f.iloc[order], config)


def judge_parts(events: pd.DataFrame, catalog: pd.DataFrame, config: RetryConfig, rows: int | None = None):
    """`judge`'s rows, `rows` at a time: every verdict is decided first, then each part taken in
    output order and explained as it is asked for, so a writer never holds every row's evidence, nor
    a second, sorted copy of the features, at once. Each part's evidence is its rows' JSON texts
    (`evidence_table.texts`), for writing as they are; `records` reads them back."""
    for make in part_makers(events, catalog, config, rows):
        yield make()


def part_makers(events: pd.DataFrame, catalog: pd.DataFrame, config: RetryConfig, rows: int | None = None) -> list:
    """`judge_parts`' parts as calls: every verdict decided now, each part explained when its call is made."""
    rows = rows or PART_ROWS
    f, order = decided(events, catalog, config)
    f = columns_of(f, EXPLAINED) if len(f) else f  # a part takes the columns explaining and output read, not every feature
    return [partial(_explained_part, f, order[start:start + rows], config) for start in range(0, max(len(f), 1), rows)]


def _explained_part(f: pd.DataFrame, positions: np.ndarray, config: RetryConfig) -> pd.DataFrame:
    return _explained(f.iloc[positions], config, encoded=True)


def decided(events: pd.DataFrame, catalog: pd.DataFrame, config: RetryConfig,
            baselines: dict | None = None) -> tuple[pd.DataFrame, np.ndarray]:
    """Every event's features, verdict and what explaining it reads of the others (`explain_context`),
    in session order; and the positions that put them in output (time) order."""
    f = features(events, catalog, config, baselines)
    if f.empty:
        return f, np.arange(0)
    exact, reworded, hop = exact_retry(f), reworded_retry(f), surface_hop(f, config)
    f["verdict"] = select_labels([exact, reworded, hop], [V.EXACT_RETRY, V.REWORDED_RETRY, V.SURFACE_HOP], V.ONE_SHOT)
    # exact_retry and surface_hop name the event their rule matched; the others the best
    # earlier event of the same surface, when it shares a word.
    picked = [f["verdict"].eq(V.EXACT_RETRY).to_numpy(), f["verdict"].eq(V.SURFACE_HOP).to_numpy()]
    f["matched_event_id"] = np.select(picked, [f["exact_match"].to_numpy(), f["hop_match"].to_numpy()], f["best_match"].to_numpy())
    matched_pos = np.select(picked, [f["exact_pos"].to_numpy(), f["hop_pos"].to_numpy()], f["best_pos"].to_numpy())
    for name, values in explain_context(f, matched_pos).items():
        f[name] = values
    return f, stable_order(f, ["sent_at_ns", "event_id"])


def _explained(f: pd.DataFrame, config: RetryConfig, encoded: bool = False) -> pd.DataFrame:
    """Output rows of decided events, with their evidence (`encoded`: as JSON texts) and reason."""
    if f.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in OUTPUT_COLUMNS})
    cited, reasons = explain(f, config, encoded)
    return output_frame(f, OUTPUT_COLUMNS, evidence=cited, reason=reasons)


def features(events: pd.DataFrame, catalog: pd.DataFrame, config: RetryConfig, baselines: dict | None = None) -> pd.DataFrame:
    """Every event in session order with its baseline, best earlier matches and session facts."""
    f = taken(events, stable_order(events, ["session_id", "sent_at_ns", "event_id"]))
    if f.empty:
        return f
    n = len(f)
    f["pos"] = np.arange(n)
    set_of, ws = index_word_sets(f["words"])
    f["size"] = ws.sizes[set_of]
    session = exact_factorize(f["session_id"])[0]
    surface, surface_keys = exact_factorize(f["surface_key"])
    catalog_rows = catalog.set_index("surface_key")
    f["surface_name"] = f["surface_key"].map(catalog_rows["surface_name"])

    defaults = {k: (None if pd.isna(v) else v) for k, v in catalog_rows["default_baseline"].items()} \
        if "default_baseline" in catalog_rows else {}
    if baselines is None:
        baselines = surface_baselines(f["surface_key"].to_numpy(), session, set_of, ws, defaults, config.fallback_baseline)
    chosen = [baselines[s] for s in surface_keys.tolist()]  # per distinct surface, then spread to its rows
    f["baseline"] = pd.Series(_objects([b.value for b in chosen])[surface], dtype=object)
    f["baseline_source"] = _objects([b.source for b in chosen])[surface]
    f["baseline_default"] = pd.Series(_objects([b.default for b in chosen])[surface], dtype=object)  # None stays None, not NaN

    j, i, k = shared_word_pairs(session, set_of, ws)
    same = surface[j] == surface[i]
    union = f["size"].to_numpy()[j] + f["size"].to_numpy()[i] - k
    # Each distinct (shared, union) pair becomes a Fraction once; rows compare ranks in the sorted values.
    width = int(union.max(initial=0)) + 1
    combos, which = np.unique(k * width + union, return_inverse=True)
    fractions = [Fraction(int(c) // width, int(c) % width) for c in combos]
    universe = sorted({Fraction(0), *fractions, *(b.value for b in chosen)})
    rank_of = {v: r for r, v in enumerate(universe)}
    rank = np.array([rank_of[v] for v in fractions], dtype=np.int64)[which.ravel()] if len(k) else np.zeros(0, dtype=np.int64)
    f["baseline_rank"] = np.array([rank_of[b.value] for b in chosen], dtype=np.int64)[surface]
    # A position or rank of -1 (none) picks the None after the last value.
    ranked, ids = _objects([*universe, None]), _objects([*f["event_id"].tolist(), None])

    # Same session and surface: the best earlier event (largest overlap, then earliest).
    f["has_earlier"] = f.groupby([session, surface], sort=False).cumcount().gt(0)
    best_pos, best_rank = _best(n, i[same], j[same], rank[same])
    f["best_pos"] = best_pos
    f["max_rank"] = np.where(f["has_earlier"], np.maximum(best_rank, 0), -1)
    f["max_exact"] = ranked[f["max_rank"].to_numpy()]
    # The output's numbers: each value of the universe made a float once, spread by rank.
    floats = [float(v) for v in universe]
    f["surface_baseline"] = np.array(floats, dtype=np.float64)[f["baseline_rank"].to_numpy()]
    f["max_overlap"] = _objects([*floats, None])[f["max_rank"].to_numpy()].tolist()
    f["best_match"] = ids[best_pos]

    # Same session, another surface: the best earlier event sharing a word.
    hop_pos, hop_rank = _best(n, i[~same], j[~same], rank[~same])
    f["hop_pos"] = hop_pos
    f["hop_match"] = ids[hop_pos]
    f["hop_overlap"] = ranked[hop_rank]
    f["session_surfaces"] = pd.Series(surface).where(surface >= 0).groupby(session, sort=False).transform("nunique")

    # The earliest earlier event with the same squashed text on the same surface.
    group = f.groupby([session, surface, exact_factorize(f["squashed"])[0]], sort=False)
    f["is_exact"] = group.cumcount().gt(0)
    f["exact_pos"] = np.where(f["is_exact"], group["pos"].transform("first"), -1)
    f["exact_match"] = ids[f["exact_pos"].to_numpy()]
    return f


def _objects(values: list) -> np.ndarray:
    """A 1-D object array of the values, whatever they are (lists stay cells)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def shared_word_pairs(session: np.ndarray, set_of, ws) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(earlier j, later i, shared words k) for every pair of events of one session sharing a word.

    Positions are in session order; the (session, word) index lists only pairs that share something.
    """
    sizes = ws.sizes[set_of]
    pos = np.repeat(np.arange(len(set_of), dtype=np.int64), sizes)
    word = ws.indices[np.repeat(ws.indptr[set_of], sizes) + run_offsets(sizes)]
    label = session[pos] * max(ws.n_words, 1) + word
    order = np.argsort(label, kind="stable")  # keeps session order inside each (session, word)
    first, second = group_pairs(label[order])
    j, i = pos[order][first], pos[order][second]
    if len(j) == 0:
        return j, i, j
    keys, k = np.unique(j * len(set_of) + i, return_counts=True)
    return keys // len(set_of), keys % len(set_of), k.astype(np.int64)


def _best(n: int, i: np.ndarray, j: np.ndarray, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per later event i: the earlier j of the highest rank (ties: the earliest), or -1."""
    best_pos = np.full(n, -1, dtype=np.int64)
    best_rank = np.full(n, -1, dtype=np.int64)
    if len(i):
        order = np.lexsort((j, -rank, i))
        i, j, rank = i[order], j[order], rank[order]
        head = np.concatenate(([True], i[1:] != i[:-1]))
        best_pos[i[head]] = j[head]
        best_rank[i[head]] = rank[head]
    return best_pos, best_rank


# -- the rules, in order ---------------------------------------------------------------


def exact_retry(f: pd.DataFrame) -> np.ndarray:
    """The squashed normalised text equals that of an earlier event of the same session and surface."""
    return f["is_exact"].to_numpy(dtype=bool)


def reworded_retry(f: pd.DataFrame) -> np.ndarray:
    """max_overlap strictly above the surface's baseline (exact ranks: equal is not a retry)."""
    return f["has_earlier"].to_numpy(dtype=bool) & (f["max_rank"].to_numpy() > f["baseline_rank"].to_numpy())


def surface_hop(f: pd.DataFrame, config: RetryConfig) -> np.ndarray:
    """A session over enough surfaces, and a word shared with an earlier event on another surface."""
    return (f["session_surfaces"] >= config.hop_min_surfaces).to_numpy() & f["hop_match"].notna().to_numpy()


def records(verdicts: pd.DataFrame) -> list[dict]:
    """Output rows as plain JSON-ready dicts: None for missing, 0 and 1 as integers; made column by column."""
    return rows_of(verdict_columns(verdicts))


def verdict_columns(verdicts: pd.DataFrame) -> dict[str, list]:
    """`records`' values by output column."""
    columns = plain_columns(verdicts, OUTPUT_COLUMNS)
    for k in ("surface_baseline", "max_overlap"):
        columns[k] = _numbers(verdicts[k], columns[k])
    return columns


def _numbers(column: pd.Series, plain: list) -> list:
    """`_number` of each of the column's plain values: for a float column, NumPy finds the missing
    values and the zeros and ones, and only those are changed."""
    if column.dtype != np.float64:
        return [_number(v) for v in plain]
    values = column.to_numpy()
    out = list(plain)
    for i in np.flatnonzero(np.isnan(values)).tolist():
        out[i] = None
    for i in np.flatnonzero((values == 0) | (values == 1)).tolist():
        out[i] = int(values[i])
    return out


def _number(v):
    if v is None or (isinstance(v, float) and v != v):
        return None
    v = float(v)
    return int(v) if v in (0.0, 1.0) else v
