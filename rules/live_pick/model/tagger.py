"""The `openai` tagger: a chat-completions model reads the body and answers tags as JSON.

The request lists the line's character vocabulary and asks for `{"tags": [...]}` drawn from
it. The answer is used only as the seed allows: a tag outside the vocabulary discards the whole
answer (done for every tagger in `rules.live_pick.tags.tag_lines`); an answer that is not that
JSON shape, a timeout, an error or a spent window budget leaves the line without tags.
"""

from __future__ import annotations

import json
from typing import Sequence

from rules.live_pick.model.client import Budget, ChatClient, EndpointSettings
from rules.live_pick.tagging import MALFORMED, OVER_BUDGET, Proposal, dedupe_tags

SYSTEM = (
    "You tag one chat line of a Korean live broadcast with topic tags. "
    'Answer only with a JSON object {"tags": [...]} whose tags are taken from the allowed list; '
    'use {"tags": []} when no allowed tag fits. Never invent a tag.'
)


def messages(body: str, vocabulary: frozenset[str]) -> list[dict]:
    allowed = json.dumps(sorted(vocabulary), ensure_ascii=False)
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"allowed tags: {allowed}\nchat line: {body}"}]


def read_tags(content: dict | None) -> Proposal:
    tags = (content or {}).get("tags")
    if not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags):
        return Proposal(None, MALFORMED)
    return Proposal(dedupe_tags(t.strip() for t in tags) or None)


class OpenAITagger:
    name = "openai"

    def __init__(self, settings: EndpointSettings, transport=None):
        self.settings = settings
        self.client = ChatClient(settings, transport)

    @classmethod
    def from_env(cls, env=None) -> "OpenAITagger":
        return cls(EndpointSettings.from_env(env))

    def propose(self, bodies: Sequence[str], vocabularies: Sequence[frozenset[str]], groups: Sequence[object]) -> list[Proposal]:
        budget = Budget(self.settings.budget)
        out = []
        for body, vocabulary, group in zip(bodies, vocabularies, groups):
            if not budget.take(group):
                out.append(Proposal(None, OVER_BUDGET))
                continue
            reply = self.client.complete(messages(body, vocabulary))
            out.append(read_tags(reply.content) if reply.failure is None else Proposal(None, reply.failure))
        return out
