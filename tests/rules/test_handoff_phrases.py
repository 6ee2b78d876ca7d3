"""`best_match` against a reading of one message at a time: every phrase looked for in the folded
text, the winner by smallest first reply, earliest position, longest phrase, then table order."""

from __future__ import annotations

import unicodedata

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.handoff.config import PhraseMatching
from rules.handoff.phrases import best_match, fold

# Korean composed and decomposed (NFD 연 = ᄋ ᅧ ᆫ), Latin in both cases, whitespace of several kinds, NUL
# (texts that differ after a NUL are folded apart, however often each repeats).
PIECES = ["직", "원", "연", unicodedata.normalize("NFD", "연"), "결", "상", "담", "A", "a", "Z", " ", "\u3000", "\n", "?", "\x00"]


def joined(max_size: int):
    return st.lists(st.sampled_from(PIECES), max_size=max_size).map("".join)


texts = st.lists(st.one_of(joined(12), st.none(), st.just("\ud800직원")), max_size=12)
phrases = st.lists(st.tuples(joined(4), st.integers(1, 3)), min_size=1, max_size=5)
matchings = st.builds(PhraseMatching, remove_whitespace=st.booleans(), unicode_form=st.sampled_from(["NFC", "none"]),
                      ignore_case=st.booleans())


def one_at_a_time(texts: list, table: list[tuple[str, int]], matching: PhraseMatching) -> dict[int, tuple]:
    out = {}
    for i, text in enumerate(texts):
        folded = fold(text, matching) or ""
        found = []
        for order, (phrase, minutes) in enumerate(table):
            needle = fold(phrase, matching)
            if needle and needle in folded:
                found.append((minutes, folded.find(needle), -len(needle), order, phrase))
        if found:
            minutes, pos, _, order, phrase = min(found)
            out[i] = (order, phrase, minutes, pos)
    return out


@settings(max_examples=300, deadline=None)
@given(texts=texts, table=phrases, matching=matchings)
def test_best_match_agrees_with_reading_one_message_at_a_time(texts, table, matching):
    frame = pd.DataFrame({"trigger_phrase": [p for p, _ in table], "first_reply_min": [m for _, m in table]})
    best = best_match(pd.Series(texts, index=range(100, 100 + len(texts)), dtype=object), frame, matching)
    got = {i - 100: (int(r.phrase_order), r.trigger_phrase, int(r.first_reply_min), int(r.pos)) for i, r in best.iterrows()}
    assert got == one_at_a_time(texts, table, matching)
