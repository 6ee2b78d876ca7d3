"""The names live_pick's configuration accepts for its taggers and summary writers: below the
configuration that validates them and the registries that build them (`tags`, `summaries`)."""

from __future__ import annotations

TAGGERS = ("gold", "lexicon", "kiwi", "openai")
LIVE_DEFAULT = "kiwi"
ALIASES = {"model": LIVE_DEFAULT}
NAMES = (*TAGGERS, *ALIASES)
"""Every name `--tags` accepts."""

DETERMINISTIC = ("lexicon", "kiwi")
"""Taggers whose answer `verdicts validate` can re-compute from the body."""

WRITERS = ("template", "openai")
"""Every summary writer `--summary` accepts."""


def canonical(name: str) -> str:
    """The tagger a name stands for (`model` → the live default)."""
    name = ALIASES.get(name, name)
    if name not in TAGGERS:
        raise ValueError(f"unknown tagger '{name}'; available: {', '.join(NAMES)}")
    return name
