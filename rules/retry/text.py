"""What counts as the same words (§5): the normalised text, its words and its squashed form.

normalised text = input_text without any character of Unicode category P* (punctuation) or
S* (symbols, emoji), Latin letters lower-cased; words = that text split on whitespace, as a
set; squashed = that text with all whitespace removed (exact_retry compares these).
Nothing else is changed: no Unicode normalisation, and combining marks (Mn) such as emoji
variation selectors stay, because they are neither P* nor S*.
"""

from __future__ import annotations

import sys
import unicodedata
from functools import lru_cache


@lru_cache(maxsize=1)
def _table() -> dict[int, str | None]:
    """One str.translate table for the whole of Unicode, built once (about a third of a second)."""
    table: dict[int, str | None] = {}
    for cp in range(sys.maxunicode + 1):
        ch = chr(cp)
        category = unicodedata.category(ch)
        if category[0] in "PS":
            table[cp] = None
        elif ch.lower() != ch and "LATIN" in unicodedata.name(ch, ""):
            table[cp] = ch.lower()
    return table


def normalised(text: str) -> str:
    return text.translate(_table())


def words(text: str) -> frozenset[str]:
    return frozenset(normalised(text).split())


def squashed(text: str) -> str:
    return "".join(normalised(text).split())
