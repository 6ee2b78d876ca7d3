"""Where a chat line's topic tags come from, and the one registry of taggers by name.

At run time tags come from a tagger that sees only the body; the collector's gold
`topic_tags` serve re-computation, verification and scoring the tagger. A tagger proposes,
per line, a list of tags (its *answer*) or None; the seed's rule then keeps the answer only
when every tag is in the line's character vocabulary (world topics ∪ banned tags), otherwise
the answer is discarded and the line has no tags (it goes out of world).

    gold     the collector's `topic_tags`, as written (the default of `verdicts judge`)
    lexicon  keyword lists (lexicon.yaml), substring match
    kiwi     Korean morphological analysis; lemmas matched against topic_lemmas.yaml (live default)
    openai   any OpenAI-compatible chat-completions endpoint (settings from the environment)
    model    alias of the live default, `kiwi`

Adapters are imported only when their name is asked for: `judge` with gold tags never loads
the analyser or an HTTP client. The names are in `names`, what every tagger shares in `tagging`:
both below the taggers, which this registry lists.
"""

from __future__ import annotations

import pandas as pd

from rules.common.evidence import cells
from rules.common.timestamps import NS_PER_SEC
from rules.live_pick.names import canonical
from rules.live_pick.tagging import NO_TAG, OUTSIDE_VOCABULARY


class GoldTags:
    """The collector's `topic_tags`, as written (after trimming)."""

    name = "gold"


def tag_source(name: str):
    """The tagger called `name` (one instance per process for the costly ones)."""
    name = canonical(name)
    if name == "gold":
        return GoldTags()
    if name == "lexicon":
        from rules.live_pick.tagger_lexicon import LexiconTagger

        return LexiconTagger()
    if name == "kiwi":
        from rules.live_pick.tagger_kiwi import shared_tagger

        return shared_tagger()
    from rules.live_pick.model.tagger import OpenAITagger

    return OpenAITagger.from_env()


def vocabularies(chat: pd.DataFrame, sheet: pd.DataFrame) -> list[frozenset[str]]:
    vocab = {c: frozenset(w) | frozenset(b)
             for c, w, b in zip(sheet["character_id"], sheet["world_topic_tags"], sheet["banned_tags"])}
    return [vocab.get(c, frozenset()) for c in chat["character_id"]]


def tag_lines(chat: pd.DataFrame, sheet: pd.DataFrame, source, window_seconds: int = 30) -> pd.DataFrame:
    """Per chat line (index aligned): `answer` (what the source said), `tags` (what the rules
    use), `discard` (why the answer was not used, or None) and `tagger` (the source's name)."""
    if isinstance(source, str):
        source = tag_source(source)
    if source is None or source.name == "gold":
        tags = [list(t) if isinstance(t, list) else None for t in cells(chat["topic_tags"])]
        return pd.DataFrame({"answer": tags, "tags": tags, "discard": None, "tagger": "gold"}, index=chat.index, dtype=object)
    vocab = vocabularies(chat, sheet)
    step = window_seconds * NS_PER_SEC  # budgets are per (character, window)
    groups = list(zip(chat["character_id"], (int(s) - int(s) % step for s in chat["sent_at_ns"]))) if "sent_at_ns" in chat else [None] * len(chat)
    proposals = source.propose(list(chat["body"]), vocab, groups) if len(chat) else []
    answers, used, discard = [], [], []
    for p, allowed in zip(proposals, vocab):
        answers.append(p.answer)
        if p.failure is not None or not p.answer:
            used.append(None)
            discard.append(p.failure or NO_TAG)
        elif all(t in allowed for t in p.answer):
            used.append(list(p.answer))
            discard.append(None)
        else:  # one tag outside the vocabulary discards the whole answer (seed check 12)
            used.append(None)
            discard.append(OUTSIDE_VOCABULARY)
    return pd.DataFrame({"answer": answers, "tags": used, "discard": discard, "tagger": source.name},
                        index=chat.index, dtype=object)

