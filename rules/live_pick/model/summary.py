"""The `openai` summary writer: a chat-completions model rewrites the rule's sentence.

It is given the verdict, the evidence and the template sentence, and asked for
`{"verdict", "summary", "evidence"}` (the evidence it cites, drawn from the given rows). What
comes back is only a candidate: `rules.live_pick.summaries` keeps it when it passes the checks.
"""

from __future__ import annotations

import json

from rules.live_pick.model.client import Budget, ChatClient, EndpointSettings
from rules.live_pick.tagging import MALFORMED, OVER_BUDGET

SYSTEM = (
    "You write the one- or two-sentence Korean summary of a rule verdict on a live chat line, for the "
    "broadcast operator. The verdict is already decided; do not change it. State the numbers from the "
    "evidence exactly, end every sentence politely (-습니다/-니다/-요), and cite only the evidence given. "
    'Answer only with a JSON object {"verdict": ..., "summary": ..., "evidence": [{"dataset": ..., "field": ..., "value": ...}]}.'
)


def messages(row: dict) -> list[dict]:
    given = {"msg_id": row["msg_id"], "verdict": row["verdict"], "evidence": row["evidence"], "template": row["summary"]}
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": json.dumps(given, ensure_ascii=False)}]


def read_answer(content: dict | None) -> tuple[dict | None, str | None]:
    if not isinstance(content, dict) or not isinstance(content.get("summary"), str) or not content["summary"].strip():
        return None, MALFORMED
    if "evidence" in content and not isinstance(content["evidence"], list):
        return None, MALFORMED
    return {**content, "summary": content["summary"].strip()}, None


class OpenAISummaryWriter:
    name = "openai"

    def __init__(self, settings: EndpointSettings, transport=None):
        self.settings = settings
        self.client = ChatClient(settings, transport)

    @classmethod
    def from_env(cls, env=None) -> "OpenAISummaryWriter":
        return cls(EndpointSettings.from_env(env))

    def write(self, rows: list[dict]) -> list[tuple[dict | None, str | None]]:
        """(answer, failure) per row; the budget is per character window."""
        budget = Budget(self.settings.budget)
        out = []
        for row in rows:
            if not budget.take((row.get("character_id"), row.get("window_start"))):
                out.append((None, OVER_BUDGET))
                continue
            reply = self.client.complete(messages(row))
            out.append(read_answer(reply.content) if reply.failure is None else (None, reply.failure))
        return out
