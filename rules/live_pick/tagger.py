"""An offline tagger: topic tags from the chat body alone, by keyword lexicon.

Deterministic and dependency-free, so the live path can run it on every line. Its answer is
checked against the character's vocabulary (world topics ∪ banned tags): one tag outside it
discards the whole answer (no tags), and the line goes out of world as §4 says.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd
import yaml

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
    """Tags from the body; None when nothing matched or the answer left the vocabulary."""

    name = "model"

    def __init__(self, lexicon: dict[str, tuple[str, ...]] | None = None):
        self.lexicon = lexicon or load_lexicon()

    def tags(self, chat: pd.DataFrame, sheet: pd.DataFrame) -> pd.Series:
        vocab = {
            c: set(w) | set(b)
            for c, w, b in zip(sheet["character_id"], sheet["world_topic_tags"], sheet["banned_tags"])
        }
        out = []
        for body, character in zip(chat["body"], chat["character_id"]):
            found = tag_body(body, self.lexicon)
            allowed = vocab.get(character, set())
            out.append(found if found and all(t in allowed for t in found) else None)
        return pd.Series(out, index=chat.index, dtype=object)


def with_tags(chat: pd.DataFrame, sheet: pd.DataFrame, source) -> pd.DataFrame:
    """The chat table with `topic_tags` replaced by a tag source's answer.

    Evidence then cites the tags the verdict actually rested on.
    """
    out = chat.copy()
    out["topic_tags"] = source.tags(chat, sheet).reindex(chat.index)
    return out
