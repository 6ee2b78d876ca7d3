"""What counts as the same words (§5): the normalised text, its words and its squashed form.

normalised text = input_text without any character of Unicode category P* (punctuation) or
S* (symbols, emoji), Latin letters lower-cased; words = that text split on whitespace, as a
set; squashed = that text with all whitespace removed (exact_retry compares these).
Nothing else is changed: no Unicode normalisation, and combining marks (Mn) such as emoji
variation selectors stay, because they are neither P* nor S*.
"""

from __future__ import annotations

import unicodedata


def _mapping(cp: int) -> str | None:
    """What one code point becomes: deleted (None), its lower case, or itself."""
    ch = chr(cp)
    if unicodedata.category(ch)[0] in "PS":
        return None
    if ch.lower() != ch and "LATIN" in unicodedata.name(ch, ""):
        return ch.lower()
    return ch


class _Table(dict):
    """The `str.translate` table of `_mapping`, filled as characters are met: texts use a few
    thousand of Unicode's 1.1 million code points, and a table of all of them took a third of a
    second to build in every process."""

    def __missing__(self, cp: int) -> str | None:
        mapped = self[cp] = _mapping(cp)
        return mapped


_TABLE = _Table()


def normalised(text: str) -> str:
    return text.translate(_TABLE)


def words(text: str) -> frozenset[str]:
    return frozenset(normalised(text).split())


def squashed(text: str) -> str:
    return "".join(normalised(text).split())
