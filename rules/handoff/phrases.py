"""Finding a customer's request for a human counsellor in a message.

Text and phrase are folded the same way before matching: every whitespace character removed
(so '직원연결 해주세요' contains '직원 연결'), optionally composed to NFC and lower-cased, as
configured. When several phrases match one message, the one with the smallest
`first_reply_min` wins; ties go to the earliest position in the folded text, then the longest
folded phrase, then the phrase table's order.

Matching is vectorised per phrase over every message (the phrase table is small, messages are
many), so the cost grows with messages × phrases and not with pairs of messages.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np
import pandas as pd

from rules.handoff.config import PhraseMatching

_WHITESPACE = re.compile(r"\s+")

HIT_COLUMNS = ["phrase_order", "trigger_phrase", "first_reply_min", "pos"]


def fold(text: object, matching: PhraseMatching) -> str | None:
    """One text as it is matched; None for a missing text."""
    if not isinstance(text, str):
        return None
    if matching.unicode_form == "NFC":
        text = unicodedata.normalize("NFC", text)
    if matching.remove_whitespace:
        text = _WHITESPACE.sub("", text)
    if matching.ignore_case:
        text = text.casefold()
    return text


def fold_series(texts: pd.Series, matching: PhraseMatching) -> pd.Series:
    return texts.map(lambda t: fold(t, matching))


def phrase_table(phrases: pd.DataFrame, matching: PhraseMatching) -> pd.DataFrame:
    """The phrase rows in table order with their folded form; a phrase that folds to nothing is dropped."""
    p = phrases.reset_index(drop=True)[["trigger_phrase", "first_reply_min"]].copy()
    p["phrase_order"] = np.arange(len(p))
    p["folded"] = fold_series(p["trigger_phrase"], matching)
    p = p.loc[p["folded"].map(bool).astype(bool)].copy()
    p["length"] = p["folded"].map(len)
    return p


def best_match(texts: pd.Series, phrases: pd.DataFrame, matching: PhraseMatching) -> pd.DataFrame:
    """Per text (same index) the winning phrase: phrase_order, trigger_phrase, first_reply_min, pos.

    Texts that match no phrase are absent from the result.
    """
    folded = fold_series(texts, matching).fillna("")
    table = phrase_table(phrases, matching)
    hits = []
    for p in table.itertuples(index=False):
        pos = folded.str.find(p.folded).to_numpy()
        found = np.flatnonzero(pos >= 0)
        if len(found):
            hits.append(pd.DataFrame({
                "row": found, "pos": pos[found], "phrase_order": p.phrase_order, "first_reply_min": p.first_reply_min,
                "length": p.length, "trigger_phrase": p.trigger_phrase,
            }))
    if not hits:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in HIT_COLUMNS}, index=texts.index[:0])
    long = pd.concat(hits, ignore_index=True)
    long["neg_length"] = -long["length"]
    long = long.sort_values(["row", "first_reply_min", "pos", "neg_length", "phrase_order"], kind="stable")
    best = long.drop_duplicates("row").set_index("row")
    best.index = texts.index[best.index.to_numpy()]
    return best[HIT_COLUMNS]
