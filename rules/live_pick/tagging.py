"""What every tagger shares: a proposal per line, the reasons an answer is not used. Below the
taggers and the registry that lists them (`tags`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

# Why an answer was not used (column `discard`).
NO_TAG = "no_tag"                    # the tagger found nothing
OUTSIDE_VOCABULARY = "outside_vocabulary"
MALFORMED = "malformed_answer"       # not JSON, not a list of strings
TIMEOUT = "timeout"
ENDPOINT_ERROR = "endpoint_error"    # HTTP error or connection failure after the retries
OVER_BUDGET = "over_budget"          # the window's request budget was spent
DISCARDS = (NO_TAG, OUTSIDE_VOCABULARY, MALFORMED, TIMEOUT, ENDPOINT_ERROR, OVER_BUDGET)


@dataclass(frozen=True)
class Proposal:
    """A tagger's answer for one line: tags, or None with the reason it has none."""

    answer: list[str] | None
    failure: str | None = None


class Tagger(Protocol):
    """Body in, tags out. `vocabularies[i]` is line i's character vocabulary (for a tagger
    that asks a model to stay inside it); `groups[i]` its (character, window) for budgets."""

    name: str

    def propose(self, bodies: Sequence[str], vocabularies: Sequence[frozenset[str]],
                groups: Sequence[object]) -> list[Proposal]: ...


def dedupe_tags(tags: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(tags))
