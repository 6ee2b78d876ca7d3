"""Finding a customer's request for a human counsellor in a message.

Text and phrase are folded the same way before matching: every whitespace character removed
(so '직원연결 해주세요' contains '직원 연결'), optionally composed to NFC and lower-cased, as
configured. When several phrases match one message, the one with the smallest
`first_reply_min` wins; ties go to the earliest position in the folded text, then the longest
folded phrase, then the phrase table's order.

Matching is vectorised per phrase over every message (the phrase table is small, messages are
many), so the cost grows with messages × phrases and not with pairs of messages: Arrow's
`match_substring` finds the messages holding a phrase, and only those are searched for its position.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rules.common.distinct import each_value
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
    """`fold` of every text, worked out once per distinct text (customers repeat their requests)."""
    return each_value(lambda t: fold(t, matching), texts)


def _arrow_text(texts: list[str]) -> pa.Array | None:
    """The texts as one Arrow array; None when one is not valid Unicode (a lone surrogate)."""
    try:
        return pa.array(texts, type=pa.large_string())
    except (pa.ArrowException, UnicodeEncodeError):
        return None


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
    folded = fold_series(texts, matching).fillna("").tolist()
    table = phrase_table(phrases, matching)
    arrow = _arrow_text(folded)
    hits = []
    for p in table.itertuples(index=False):
        # Arrow finds the rows holding the phrase (UTF-8 bytes match where code points do); the
        # position, in code points, is read for those rows alone.
        found = (np.flatnonzero(pc.match_substring(arrow, p.folded).to_numpy(zero_copy_only=False)) if arrow is not None
                 else np.flatnonzero([p.folded in t for t in folded]))
        if len(found):
            hits.append(pd.DataFrame({
                "row": found, "pos": np.array([folded[i].find(p.folded) for i in found.tolist()], dtype=np.int64),
                "phrase_order": p.phrase_order, "first_reply_min": p.first_reply_min,
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
