"""surface_baseline: the median overlap over every cross-session pair of a surface, exactly.

A pair's overlap is k / (a + b − k) for word sets of sizes a and b sharing k words, so the
whole distribution is known once pairs are counted by (a, b, k). Nothing is sampled:

1. Events with the same word set share one distinct set with a multiplicity; pairs inside
   a distinct set all share every word.
2. Pairs of distinct sets are counted through an inverted index: sets sharing a word meet
   in that word's posting list. When a few words are in almost every set ("요약해줘"), the
   posting lists would give back nearly every pair, so the index is taken over word pairs,
   then triples, … (only subsets held by two sets or more) until the lists are short. The
   pairs below that level are not listed but counted: for t shared words, the sum over
   pairs of C(k, t) equals the sum over t-subsets T of the pairs of sets containing T, per
   size class. Those sums (binomial moments) and the listed counts above them fix every
   count by (a, b, k) exactly, by back-substitution.
3. Pairs inside one session are counted the same way (listed for ordinary sessions) and
   subtracted, leaving the cross-session pairs.

Cost grows with the number of events plus the pairs that share a rare subset of words,
which stays close to linear on real inputs; adversarial inputs (very long near-identical
texts) make it slower, never inexact. `naive_overlaps` is the plain O(n²) loop it is
tested and benchmarked against.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import Hashable, Sequence

import numpy as np

from rules.retry.wordsets import WordSets, expand_pairs, later_partners, run_offsets, shared_counts, sum_by_key

PAIR_BUDGET = 200_000
"""Pairs a level may list whatever its size: listing this few costs less than going deeper."""
PAIRS_PER_OCCURRENCE = 8
"""Beyond that, a level is listed only if its pairs are at most this many per subset occurrence,
which keeps the listed pairs in proportion to the input rather than to its square."""
LEVEL_BUDGET = 40_000_000
"""Word-subset occurrences a deeper level may hold; past this the current level is listed anyway."""
CHUNK = 1_000_000
"""Listed pairs held in memory at once (about 150 bytes each while they are counted)."""
SMALL_SESSION = 64
"""Sessions up to this many events on a surface have their pairs listed; larger ones are counted."""

Key = tuple[int, int, int]
"""(a, b, k): set sizes a ≤ b and the number of words they share."""


@dataclass(frozen=True)
class Baseline:
    value: Fraction
    source: str
    """"pairs" (the median), "default" (the catalog's default_baseline) or "fallback" (neither)."""
    pairs: int
    """Cross-session pairs the median is taken over."""
    default: float | int | None = None
    """The catalog's default_baseline as written (cited as evidence when it is used)."""


PAIRS, DEFAULT, FALLBACK = "pairs", "default", "fallback"


# -- counting pairs by (a, b, k) -----------------------------------------------------------


def pairs_by_overlap(ws: WordSets, mult: np.ndarray, pair_budget: int = PAIR_BUDGET,
                     level_budget: int = LEVEL_BUDGET, per_occurrence: int = PAIRS_PER_OCCURRENCE) -> Counter:
    """Unordered pairs of items, distinct set d standing for mult[d] items, counted by (a, b, k)."""
    mult = np.asarray(mult, dtype=np.int64)
    sizes = ws.sizes
    out: Counter = Counter()
    within = mult * (mult - 1) // 2
    for a, n in zip(*sum_by_key(sizes, within)):
        if n:
            out[(int(a), int(a), int(a))] += int(n)
    if len(ws) < 2:
        return out

    level = _Levels(ws, mult, pair_budget, level_budget, per_occurrence)
    listed, moments = level.run()
    for (a, b), m0 in _class_pairs(sizes, mult).items():
        top = min(a, b)
        n = {k: listed.get((a, b, k), 0) for k in range(level.listed_from, top + 1)}
        for k in range(min(level.listed_from - 1, top), -1, -1):
            m = m0 if k == 0 else moments[k].get((a, b), 0)
            n[k] = m - sum(comb(j, k) * n[j] for j in range(k + 1, top + 1))
            if n[k] < 0:
                raise AssertionError(f"negative pair count for {(a, b, k)}: the moments are inconsistent")
        for k, c in n.items():
            if c:
                out[(a, b, k)] += c
    return out


def _class_pairs(sizes: np.ndarray, mult: np.ndarray) -> dict[tuple[int, int], int]:
    """Pairs of items from two different distinct sets, per size class pair (a ≤ b)."""
    classes, items = sum_by_key(sizes, mult)
    _, squares = sum_by_key(sizes, mult * mult)
    out = {}
    for i in range(len(classes)):
        for j in range(i, len(classes)):
            n = (int(items[i]) ** 2 - int(squares[i])) // 2 if i == j else int(items[i]) * int(items[j])
            if n:
                out[(int(classes[i]), int(classes[j]))] = n
    return out


class _Levels:
    """Inverted indexes over the word subsets of size t = 1, 2, … held by at least two sets."""

    def __init__(self, ws: WordSets, mult: np.ndarray, pair_budget: int, level_budget: int, per_occurrence: int):
        self.ws, self.mult, self.sizes = ws, mult, ws.sizes
        self.pair_budget, self.level_budget, self.per_occurrence = pair_budget, level_budget, per_occurrence
        self.n_sets = len(ws)
        row = np.repeat(np.arange(self.n_sets, dtype=np.int64), self.sizes)
        # A word in one set only can be in no shared subset.
        support = np.bincount(ws.indices, minlength=ws.n_words)
        keep = support[ws.indices] >= 2
        self.kept_counts = np.bincount(row[keep], minlength=self.n_sets).astype(np.int64)
        self.kept_indptr = np.zeros(self.n_sets + 1, dtype=np.int64)
        np.cumsum(self.kept_counts, out=self.kept_indptr[1:])
        self.kept_words = ws.indices[keep]
        self.occ_set = row[keep].astype(np.int32)
        self.occ_key = self.kept_words.copy()
        self.occ_pos = run_offsets(self.kept_counts).astype(np.int32)
        self.listed_from = 1

    def run(self) -> tuple[Counter, list[dict]]:
        moments: list[dict] = [{}]
        t = 1
        while True:
            # Stable: occurrences arrive in set order within each subset, and listing relies on it.
            order = np.argsort(self.occ_key, kind="stable")
            key = self.occ_key[order]
            _, counts = _runs(key)
            # Only subsets held by two sets or more can make a pair; the rest are dropped here.
            shared = order[np.repeat(counts >= 2, counts)]
            occ_set, occ_pos = self.occ_set[shared], self.occ_pos[shared]
            del order, key, shared
            self.occ_set = self.occ_pos = self.occ_key = None
            self.listed_from = t
            if len(occ_set) == 0:
                return Counter(), moments
            counts = counts[counts >= 2]
            group = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
            listed_pairs = int((counts * (counts - 1) // 2).sum())
            grow = self.kept_counts[occ_set] - 1 - occ_pos
            cheap = listed_pairs <= self.pair_budget + self.per_occurrence * len(occ_set)
            if cheap or int(grow.sum()) > self.level_budget:
                return self._list(occ_set, group, t), moments
            moments.append(self._moments(occ_set, group))
            self._deeper(occ_set, group, occ_pos, grow)
            t += 1

    def _moments(self, occ_set: np.ndarray, group: np.ndarray) -> dict[tuple[int, int], int]:
        """Σ over pairs of distinct sets of C(k, t), per size class pair, from this level's subsets."""
        top = int(self.sizes.max()) + 1
        m = self.mult[occ_set]
        combo = group * top + self.sizes[occ_set]
        keys, c = sum_by_key(combo, m)
        _, q = sum_by_key(combo, m * m)
        subset, size = keys // top, keys % top
        out: Counter = Counter()
        ab, n = sum_by_key(size * top + size, (c * c - q) // 2)
        for k, v in zip(ab, n):
            out[(int(k // top), int(k % top))] += int(v)
        gap = 1
        while gap < len(keys):
            same = subset[gap:] == subset[:-gap]
            if not same.any():
                break
            i = np.flatnonzero(same)
            ab, n = sum_by_key(size[i] * top + size[i + gap], c[i] * c[i + gap])
            for k, v in zip(ab, n):
                out[(int(k // top), int(k % top))] += int(v)
            gap += 1
        return dict(out)

    def _deeper(self, occ_set, group, occ_pos, grow) -> None:
        """Extend every shared subset by each later kept word of the same set.

        The new key (subset number × words + word) is unique per subset; the next level's sort
        groups it, so no compaction pass is needed here.
        """
        grow = grow.astype(np.int64)
        self.occ_set = np.repeat(occ_set, grow)
        self.occ_pos = (np.repeat(occ_pos, grow) + 1 + run_offsets(grow)).astype(np.int32)
        word = self.kept_words[self.kept_indptr[self.occ_set] + self.occ_pos]
        self.occ_key = np.repeat(group, grow) * max(self.ws.n_words, 1) + word

    def _list(self, occ_set: np.ndarray, group: np.ndarray, t: int) -> Counter:
        """Every pair of distinct sets sharing a subset of this level, with its exact k.

        A pair sharing k words meets in C(k, t) subsets, so the number of meetings gives k.
        """
        positions, partners = later_partners(group)
        out: Counter = Counter()
        if not partners.any():
            return out
        per_set = np.zeros(self.n_sets, dtype=np.int64)
        np.add.at(per_set, occ_set, partners)
        cumulative = np.cumsum(per_set)
        table = _binomials(t, int(self.sizes.max()))
        lo = 0
        while lo < self.n_sets:
            done = cumulative[lo - 1] if lo else 0
            hi = max(int(np.searchsorted(cumulative, done + CHUNK, side="right")), lo + 1)
            # All pairs whose smaller set lies in [lo, hi): complete, since sets are sorted within a subset.
            sel = (occ_set >= lo) & (occ_set < hi) & (partners > 0)
            if sel.any():
                first, second = expand_pairs(positions[sel], partners[sel])
                pair = occ_set[first].astype(np.int64) * self.n_sets + occ_set[second]
                del first, second
                keys, seen = np.unique(pair, return_counts=True)
                del pair
                at = np.searchsorted(table, seen)
                if not np.array_equal(table[np.minimum(at, len(table) - 1)], seen):
                    raise AssertionError("a pair met a number of times that is no binomial coefficient")
                k = at + t
                d1, d2 = keys // self.n_sets, keys % self.n_sets
                a, b = self.sizes[d1], self.sizes[d2]
                small, large = np.minimum(a, b), np.maximum(a, b)
                top = int(self.sizes.max()) + 1
                combo, weight = sum_by_key((small * top + large) * top + k, self.mult[d1] * self.mult[d2])
                for c, w in zip(combo, weight):
                    out[(int(c // (top * top)), int(c // top % top), int(c % top))] += int(w)
            lo = hi
        return out


def _binomials(t: int, top: int) -> np.ndarray:
    """C(k, t) for k = t, t + 1, … up to `top`, stopping before int64 would overflow (no count gets that far)."""
    out, k = [], t
    while k <= top and comb(k, t) < 2**62:
        out.append(comb(k, t))
        k += 1
    return np.array(out, dtype=np.int64)


def _runs(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = len(sorted_keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.concatenate(([0], np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1))
    return starts, np.diff(np.concatenate((starts, [n])))


# -- cross-session pairs ------------------------------------------------------------------------


def cross_session_pairs(set_ids: np.ndarray, sessions: np.ndarray, ws: WordSets,
                        pair_budget: int = PAIR_BUDGET, small_session: int = SMALL_SESSION,
                        per_occurrence: int = PAIRS_PER_OCCURRENCE) -> Counter:
    """Pairs of events (given by distinct-set id and session code) from different sessions, by (a, b, k)."""
    set_ids = np.asarray(set_ids, dtype=np.int64)
    sessions = np.asarray(sessions, dtype=np.int64)
    if len(set_ids) < 2:
        return Counter()
    used, local = np.unique(set_ids, return_inverse=True)
    local = local.astype(np.int64).ravel()
    sub = ws.subset(used)
    every = pairs_by_overlap(sub, np.bincount(local, minlength=len(used)), pair_budget, per_occurrence=per_occurrence)
    same = _same_session_pairs(local, sessions, sub, pair_budget, small_session, per_occurrence)
    every.subtract(same)
    if any(v < 0 for v in every.values()):
        raise AssertionError("more same-session pairs than pairs")
    return +every


def _same_session_pairs(local: np.ndarray, sessions: np.ndarray, ws: WordSets, pair_budget: int,
                        small_session: int, per_occurrence: int) -> Counter:
    order = np.lexsort((local, sessions))
    s, d = sessions[order], local[order]
    starts, counts = _runs(s)
    out: Counter = Counter()
    positions, partners = later_partners(s)
    small = np.repeat(counts <= small_session, counts)
    first, second = expand_pairs(positions[small], partners[small])
    d1, d2 = d[first], d[second]
    if len(d1):
        k = ws.sizes[d1].copy()
        differ = d1 != d2
        k[differ] = shared_counts(ws, d1[differ], d2[differ])
        a, b = ws.sizes[d1], ws.sizes[d2]
        top = int(ws.sizes.max()) + 1
        combo, n = sum_by_key((np.minimum(a, b) * top + np.maximum(a, b)) * top + k, np.ones(len(k), dtype=np.int64))
        for c, w in zip(combo, n):
            out[(int(c // (top * top)), int(c // top % top), int(c % top))] += int(w)
    for start, count in zip(starts[counts > small_session], counts[counts > small_session]):
        sets, mult = np.unique(d[start:start + count], return_counts=True)
        out.update(pairs_by_overlap(ws.subset(sets), mult, pair_budget, per_occurrence=per_occurrence))
    return out


# -- from counts to the baseline -----------------------------------------------------------------


def as_overlaps(counts: Counter) -> Counter:
    """(a, b, k) counts as counts per exact overlap value."""
    out: Counter = Counter()
    for (a, b, k), n in counts.items():
        out[Fraction(k, a + b - k)] += n
    return out


def median(overlaps: Counter) -> Fraction | None:
    """The median of a multiset given as value → count; the mean of the two middle values when even."""
    total = sum(overlaps.values())
    if total == 0:
        return None
    lower, upper = (total - 1) // 2, total // 2
    seen, low = 0, None
    for value in sorted(overlaps):
        seen += overlaps[value]
        if low is None and seen > lower:
            low = value
        if seen > upper:
            return (low + value) / 2
    raise AssertionError("unreachable")


def naive_overlaps(words: Sequence[frozenset], sessions: Sequence[Hashable]) -> Counter:
    """Every cross-session pair, one by one: O(n²), kept for tests and the benchmark."""
    by_size: Counter = Counter()
    n = len(words)
    for i in range(n):
        wi, si = words[i], sessions[i]
        for j in range(i + 1, n):
            if sessions[j] != si:
                k = len(wi & words[j])
                by_size[(k, len(wi) + len(words[j]) - k)] += 1
    out: Counter = Counter()
    for (k, u), c in by_size.items():
        out[Fraction(k, u)] += c
    return out


def surface_baselines(surfaces: np.ndarray, sessions: np.ndarray, set_ids: np.ndarray, ws: WordSets,
                      defaults: dict[str, float | int | None], fallback: Fraction) -> dict[str, Baseline]:
    """The baseline of every surface present: the median over its cross-session pairs, else the
    catalog's default_baseline (read as the decimal written), else the configured fallback."""
    from rules.retry.config import exact_decimal

    out = {}
    surfaces = np.asarray(surfaces, dtype=object)
    for surface in sorted(set(surfaces)):
        on = surfaces == surface
        overlaps = as_overlaps(cross_session_pairs(set_ids[on], sessions[on], ws))
        value, n = median(overlaps), sum(overlaps.values())
        default = defaults.get(surface)
        if value is not None:
            out[surface] = Baseline(value, PAIRS, n, default)
        elif default is not None:
            out[surface] = Baseline(exact_decimal(default), DEFAULT, 0, default)
        else:
            out[surface] = Baseline(fallback, FALLBACK, 0, None)
    return out
