"""Where a chat line's topic tags come from.

At run time tags come from a tagger that sees only the body; the collector's gold
`topic_tags` serve re-computation, verification and scoring the tagger. Every source returns,
per chat row, a list of tags or None when it found none.
"""

from __future__ import annotations

from typing import Protocol

import pandas as pd


class TagSource(Protocol):
    name: str

    def tags(self, chat: pd.DataFrame, sheet: pd.DataFrame) -> pd.Series:
        """Tags per chat row (index aligned with `chat`); the sheet gives each character's vocabulary."""
        ...


class GoldTags:
    """The collector's `topic_tags`, as written (after trimming)."""

    name = "gold"

    def tags(self, chat: pd.DataFrame, sheet: pd.DataFrame) -> pd.Series:
        return chat["topic_tags"]


SOURCES = ("gold", "model")
"""`gold`: the collector's topic_tags; `model`: the offline lexicon tagger on the body."""


def tag_source(name: str) -> TagSource:
    if name == "gold":
        return GoldTags()
    if name == "model":
        from rules.live_pick.tagger import LexiconTagger

        return LexiconTagger()
    raise ValueError(f"unknown tag source '{name}'; available: {', '.join(SOURCES)}")
