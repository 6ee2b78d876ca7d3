"""Word sets as integer arrays, and the pair machinery the engine and the baseline share.

Events that wrote the same word set share one distinct set; a distinct set is a sorted row
of word ids in compressed form (`indptr`, `indices`). Everything here is exact integer work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import Iterable

import numpy as np


@dataclass
class WordSets:
    """Distinct word sets: set d holds the word ids indices[indptr[d]:indptr[d + 1]], ascending."""

    indptr: np.ndarray
    indices: np.ndarray
    n_words: int
    _keys: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.indptr) - 1

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.indptr)

    def member_keys(self) -> np.ndarray:
        """set * n_words + word for every member, ascending: one sorted array answers membership."""
        if self._keys is None:
            rows = np.repeat(np.arange(len(self), dtype=np.int64), self.sizes)
            self._keys = rows * max(self.n_words, 1) + self.indices
        return self._keys

    def subset(self, ids: np.ndarray) -> "WordSets":
        """The given distinct sets (in that order) as their own WordSets, word ids unchanged."""
        ids = np.asarray(ids, dtype=np.int64)
        sizes = self.sizes[ids]
        indptr = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        take = np.repeat(self.indptr[ids], sizes) + run_offsets(sizes)
        return WordSets(indptr, self.indices[take], self.n_words)


def index_word_sets(items: Iterable[frozenset[str]]) -> tuple[np.ndarray, WordSets]:
    """Each item's distinct-set id, and the distinct sets (word ids in order of first use)."""
    seen: dict[frozenset[str], int] = {}
    vocab: dict[str, int] = {}
    rows: list[list[int]] = []
    ids: list[int] = []
    for ws in items:
        d = seen.get(ws)
        if d is None:
            d = seen[ws] = len(rows)
            rows.append(sorted(vocab.setdefault(w, len(vocab)) for w in ws))
        ids.append(d)
    sizes = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    indices = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=int(indptr[-1]))
    return np.asarray(ids, dtype=np.int64), WordSets(indptr, indices, len(vocab))


def run_offsets(counts: np.ndarray) -> np.ndarray:
    """0, 1, …, c-1 for each count c, concatenated."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.cumsum(counts) - counts
    return np.arange(total, dtype=np.int64) - np.repeat(starts, counts)


def later_partners(group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For an array sorted by group label: each position and how many later positions share its group."""
    n = len(group)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    change = np.flatnonzero(group[1:] != group[:-1]) + 1
    starts = np.concatenate(([0], change))
    ends = np.concatenate((change, [n]))
    size = np.repeat(ends - starts, ends - starts)
    rank = np.arange(n, dtype=np.int64) - np.repeat(starts, ends - starts)
    return np.arange(n, dtype=np.int64), size - 1 - rank


def expand_pairs(positions: np.ndarray, partners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (p, p + 1 … p + partners) for each position p: every later member of its group."""
    first = np.repeat(positions, partners)
    return first, first + 1 + run_offsets(partners)


def group_pairs(group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All pairs of positions i < j with the same label, for an array sorted by label."""
    return expand_pairs(*later_partners(group))


def shared_counts(ws: WordSets, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """|left[i] ∩ right[i]| for each pair of distinct sets."""
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    if len(left) == 0:
        return np.zeros(0, dtype=np.int64)
    sizes = ws.sizes[left]
    which = np.repeat(np.arange(len(left), dtype=np.int64), sizes)
    word = ws.indices[np.repeat(ws.indptr[left], sizes) + run_offsets(sizes)]
    keys = ws.member_keys()
    query = right[which] * max(ws.n_words, 1) + word
    at = np.searchsorted(keys, query)
    hit = keys[np.minimum(at, len(keys) - 1)] == query
    return np.bincount(which[hit], minlength=len(left)).astype(np.int64)


def sum_by_key(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact integer sums of values per distinct key (no float accumulation)."""
    if len(keys) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    starts = np.concatenate(([0], np.flatnonzero(k[1:] != k[:-1]) + 1))
    return k[starts], np.add.reduceat(np.asarray(values, dtype=np.int64)[order], starts)
