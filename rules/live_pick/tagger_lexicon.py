"""The `lexicon` tagger: topic tags from the chat body alone, by keyword substring.

Deterministic and dependency-free. It misses inflected or spaced forms a keyword list does
not spell out ("불러줘" against "불러 줘"); the `kiwi` tagger matches lemmas instead.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Sequence

import yaml

from rules.live_pick.tagging import Proposal

LEXICON_PATH = Path(__file__).with_name("lexicon.yaml")


@lru_cache(maxsize=None)
def load_lexicon(path: str | None = None) -> dict[str, tuple[str, ...]]:
    data = yaml.safe_load(Path(path or LEXICON_PATH).read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict) or not all(isinstance(v, list) and v for v in data.values()):
        raise ValueError(f"{path or LEXICON_PATH}: expected a map of tag → non-empty keyword list")
    return {str(tag): tuple(str(k) for k in kws) for tag, kws in data.items()}


def tag_body(body: object, lexicon: dict[str, tuple[str, ...]]) -> list[str]:
    """Tags whose keywords occur in the body, in lexicon order (case-insensitive for Latin)."""
    if not isinstance(body, str):
        return []
    text = body.casefold()
    return [tag for tag, keywords in lexicon.items() if any(k.casefold() in text for k in keywords)]


class LexiconTagger:
    name = "lexicon"

    def __init__(self, lexicon: dict[str, tuple[str, ...]] | None = None):
        self.lexicon = lexicon or load_lexicon()

    def propose(self, bodies: Sequence[str], vocabularies=None, groups=None) -> list[Proposal]:
        return [Proposal(tag_body(b, self.lexicon) or None) for b in bodies]
