"""A row-by-row re-computation of the §5 rules, written independently of the engine.

Plain loops over plain dicts, as the rules read in the spec: its own reading of the text
(character by character), overlaps as Fractions, and the baseline as the literal median of
the list of every cross-session overlap. It serves `verdicts validate` and the tests that
hold the vectorised engine to it. A surface with more cross-session pairs than
`reference_pair_limit` would not fit in a list; its baseline is then taken from the pair
counter, which the tests hold to this literal list on random inputs.
"""

from __future__ import annotations

import statistics
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import numpy as np

from rules.common.evidence import frame_records
from rules.common.cells import trim
from rules.common.normalised import Normalised
from rules.retry import verdicts as V
from rules.retry.config import RetryConfig


@dataclass
class Expected:
    event_id: str
    session_id: str
    surface_key: str
    verdict: str
    baseline: Fraction
    baseline_source: str
    """"pairs", "default" or "fallback"."""
    max_overlap: Fraction | None
    matched_event_id: str | None
    session_surfaces: int
    exact_ids: list[str] = field(default_factory=list)
    """Earlier events of the same session and surface with the same squashed text, in order."""
    hop_ids: list[str] = field(default_factory=list)
    """Earlier events of the same session on another surface sharing a word, in order."""


def kept_char(ch: str) -> str:
    """What the reading keeps of one character: nothing of punctuation or a symbol, a Latin
    letter in lower case, any other character as it is."""
    if unicodedata.category(ch).startswith(("P", "S")):
        return ""
    return ch.lower() if "LATIN" in unicodedata.name(ch, "") else ch


class _KeptChars(dict):
    """`str.translate`'s table, filled with `kept_char` the first time a character is met (its
    Unicode name is the slow part, and a log uses few distinct characters); emptied when it
    grows past `limit`, so a flood of rare characters cannot hold memory."""

    limit = 1 << 16

    def __missing__(self, code: int) -> str:
        if len(self) >= self.limit:
            self.clear()
        kept = self[code] = kept_char(chr(code))
        return kept


_KEPT = _KeptChars()


def normal_text(text: str) -> str:
    return text.translate(_KEPT)


@lru_cache(maxsize=1 << 12)
def _fraction(shared: int, either: int) -> Fraction:
    return Fraction(shared, either)  # few distinct (shared, either) counts: each Fraction is made once


def overlap(a: frozenset, b: frozenset) -> Fraction:
    return _fraction(len(a & b), len(a | b))


def expected_verdicts(norm: Normalised, config: RetryConfig,
                      baselines: dict[str, tuple[Fraction, str]] | None = None) -> dict[str, Expected]:
    """Every event's verdict; `baselines` (surface → (value, source)): the baselines of a wider scope
    than these events (a day judged a part at a time: `reference_baselines`), else worked out here."""
    catalog = {trim(c["surface_key"]): c for c in frame_records(norm.tables["surface_catalog"])}
    events = []
    for e in frame_records(norm.tables["interaction_events"]):
        text = normal_text(e["input_text"])
        events.append({
            "id": e["event_id"], "session": e["session_id"], "surface": surface_of(e["surface_key_raw"]),
            "ns": int(e["sent_at_ns"]), "words": frozenset(text.split()), "squashed": "".join(text.split()),
        })
    if baselines is None:
        baselines = {s: _baseline([e["session"] for e in evs], [e["words"] for e in evs], catalog.get(s), config)
                     for s, evs in _by(events, "surface").items()}

    out: dict[str, Expected] = {}
    for session, evs in _by(events, "session").items():
        evs.sort(key=lambda e: (e["ns"], e["id"]))
        surfaces = len({e["surface"] for e in evs})
        for n, e in enumerate(evs):
            earlier = evs[:n]
            same = [x for x in earlier if x["surface"] == e["surface"]]
            scores = [overlap(e["words"], x["words"]) for x in same]
            top = max(scores) if scores else None
            best = same[scores.index(top)]["id"] if scores and top > 0 else None
            exact = [x["id"] for x in same if x["squashed"] == e["squashed"]]
            others = [(overlap(e["words"], x["words"]), x["id"]) for x in earlier if x["surface"] != e["surface"]]
            others = [(o, i) for o, i in others if o > 0]
            baseline, source = baselines[e["surface"]]
            if exact:
                verdict, matched = V.EXACT_RETRY, exact[0]
            elif top is not None and top > baseline:
                verdict, matched = V.REWORDED_RETRY, best
            elif surfaces >= config.hop_min_surfaces and others:
                biggest = max(o for o, _ in others)
                verdict, matched = V.SURFACE_HOP, next(i for o, i in others if o == biggest)
            else:
                verdict, matched = V.ONE_SHOT, best
            out[e["id"]] = Expected(e["id"], session, e["surface"], verdict, baseline, source, top, matched, surfaces,
                                    exact, [i for _, i in others])
    return out


def _by(events: list[dict], key: str) -> dict[str, list[dict]]:
    groups = defaultdict(list)
    for e in events:
        groups[e[key]].append(e)
    return groups


def surface_of(raw: str) -> str:
    return trim(raw).lower()


def words_of(text: str) -> frozenset:
    return frozenset(normal_text(text).split())


def _baseline(sessions: list, words: list[frozenset], catalog_row: dict | None, config: RetryConfig) -> tuple[Fraction, str]:
    """A surface's baseline from its events' sessions and word sets (in any order)."""
    sizes = defaultdict(int)
    for session in sessions:
        sizes[session] += 1
    n = len(sessions)
    pairs = n * (n - 1) // 2 - sum(k * (k - 1) // 2 for k in sizes.values())
    if pairs == 0:
        default = None if catalog_row is None else catalog_row.get("default_baseline")
        if default is None or default != default:
            return Fraction(str(config.baseline_without_pairs)), "fallback"
        return Fraction(str(default)), "default"
    if pairs <= config.reference_pair_limit:
        values = [overlap(words[i], words[j]) for i in range(n) for j in range(i + 1, n) if sessions[i] != sessions[j]]
        return statistics.median(values), "pairs"
    return _counted_median(sessions, words), "pairs"


def _counted_median(sessions: list, words: list[frozenset]) -> Fraction:
    from rules.retry.baseline import as_overlaps, cross_session_pairs, median
    from rules.retry.wordsets import index_word_sets

    ids, ws = index_word_sets(words)
    _, codes = np.unique(np.array(sessions, dtype=object), return_inverse=True)
    return median(as_overlaps(cross_session_pairs(ids, codes.astype(np.int64).ravel(), ws)))


def reference_baselines(sessions: dict[str, list], words: dict[str, list[frozenset]], catalog,
                        config: RetryConfig) -> dict[str, tuple[Fraction, str]]:
    """Every surface's baseline from its events' sessions and word sets (`words_of`) gathered over a
    day read a part at a time: what `expected_verdicts` works out over one table of that day."""
    rows = {trim(c["surface_key"]): c for c in frame_records(catalog)}
    return {s: _baseline(sessions[s], words[s], rows.get(s), config) for s in sessions}
