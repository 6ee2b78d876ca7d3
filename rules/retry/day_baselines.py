"""A day's baseline per surface when the day is judged a part at a time.

The baseline looks across sessions (every cross-session pair of a surface), so no part can work it
out alone. `DayBaselines` takes the day's events a part at a time (the baselines do not depend on
their order) and keeps, per event, only small integers (its surface, its session, its distinct word
set) and the distinct word sets themselves; then the engine's baseline (`baseline.surface_baselines`, on the engine's reading of the text) and
the reference's (`reference.reference_baselines`, on its own reading) are each worked out once, the
same as over one table of the whole day, and handed to every part.
"""

from __future__ import annotations

from array import array

import numpy as np
import pandas as pd

from rules.retry.baseline import Baseline, surface_baselines
from rules.retry.config import RetryConfig
from rules.retry.reference import reference_baselines, words_of
from rules.retry.wordsets import WordSets


class DayBaselines:
    def __init__(self) -> None:
        self._surfaces: dict[str, int] = {}
        self._sessions: dict[str, int] = {}
        self._engine_sets: dict[frozenset, int] = {}
        self._reference_sets: dict[frozenset, int] = {}
        self._reference_words: dict[str, frozenset] = {}  # each distinct text read once
        self.surface, self.session, self.engine_set, self.reference_set = (array("q") for _ in range(4))

    def add(self, events: pd.DataFrame) -> None:
        """A block of the day's events, with the columns `normalise.derive` adds (words, surface_key).
        The reference reads the surface from `surface_key_raw` itself; the engine's key is the same
        text (trimmed, lower-cased), so both are kept under one code."""
        for name, column, codes in ((self._surfaces, events["surface_key"], self.surface),
                                    (self._sessions, events["session_id"], self.session),
                                    (self._engine_sets, events["words"], self.engine_set)):
            codes.extend(name.setdefault(v, len(name)) for v in column.tolist())
        texts = self._reference_words
        for text in events["input_text"].tolist():
            words = texts.get(text)
            if words is None:
                if len(texts) > 1 << 16:
                    texts.clear()
                words = texts[text] = words_of(text)
            self.reference_set.append(self._reference_sets.setdefault(words, len(self._reference_sets)))

    def engine(self, catalog: pd.DataFrame, config: RetryConfig) -> dict[str, Baseline]:
        """The engine's baseline of every surface met (`engine.features` over the whole day)."""
        rows = catalog.set_index("surface_key")
        defaults = {k: (None if pd.isna(v) else v) for k, v in rows["default_baseline"].items()} if "default_baseline" in rows else {}
        names = np.array(list(self._surfaces), dtype=object)
        return surface_baselines(names[np.frombuffer(self.surface, dtype=np.int64)] if len(self.surface) else names[:0],
                                 np.frombuffer(self.session, dtype=np.int64), np.frombuffer(self.engine_set, dtype=np.int64),
                                 _word_sets(list(self._engine_sets)), defaults, config.fallback_baseline)

    def reference(self, catalog: pd.DataFrame, config: RetryConfig) -> dict:
        """The reference's baseline of every surface met (`reference.expected_verdicts` over the whole day)."""
        sets = list(self._reference_sets)
        sessions: dict[str, list] = {s: [] for s in self._surfaces}
        words: dict[str, list] = {s: [] for s in self._surfaces}
        names = list(self._surfaces)
        for s, session, w in zip(self.surface, self.session, self.reference_set):
            sessions[names[s]].append(session)
            words[names[s]].append(sets[w])
        return reference_baselines(sessions, words, catalog, config)


def _word_sets(distinct: list[frozenset]) -> WordSets:
    """Distinct word sets in their order as `WordSets` (word ids in order of first use)."""
    from rules.retry.wordsets import index_word_sets

    return index_word_sets(distinct)[1]
