"""One chat-completions client: settings from the environment, timeout, bounded retries, budget.

    VERDICTS_OPENAI_URL      base URL of the endpoint, e.g. http://127.0.0.1:8000/v1 (required)
    VERDICTS_OPENAI_MODEL    model name sent with every request (required)
    VERDICTS_OPENAI_KEY      bearer key (optional; never logged, never in a repr)
    VERDICTS_OPENAI_TIMEOUT  seconds per attempt (default 10)
    VERDICTS_OPENAI_RETRIES  extra attempts after a timeout, a connection error, 429 or 5xx (default 2)
    VERDICTS_OPENAI_BUDGET   requests per (character, 30-second window) (default 40)

A failed call never raises to the caller's run: `complete` returns a `Reply` whose `failure`
names what went wrong (timeout, endpoint_error, over_budget), and the caller discards or falls
back as the seed says.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping

import httpx

from rules.common.bounded_json import parse_object
from rules.live_pick.tagging import ENDPOINT_ERROR, MALFORMED, TIMEOUT

log = logging.getLogger("verdicts.model")
RETRY_STATUS = (429, 500, 502, 503, 504)


@dataclass(frozen=True)
class EndpointSettings:
    url: str
    model: str
    key: str | None = field(default=None, repr=False)
    timeout: float = 10.0
    retries: int = 2
    budget: int = 40
    backoff: float = 0.25
    """Seconds before the first retry; doubled each time."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "EndpointSettings":
        env = os.environ if env is None else env
        missing = [v for v in ("VERDICTS_OPENAI_URL", "VERDICTS_OPENAI_MODEL") if not env.get(v)]
        if missing:
            raise ValueError(f"the openai adapters need {' and '.join(missing)} in the environment "
                             "(an OpenAI-compatible chat-completions endpoint and its model)")
        try:
            return cls(url=env["VERDICTS_OPENAI_URL"].rstrip("/"), model=env["VERDICTS_OPENAI_MODEL"],
                       key=env.get("VERDICTS_OPENAI_KEY") or None,
                       timeout=float(env.get("VERDICTS_OPENAI_TIMEOUT", "10")),
                       retries=int(env.get("VERDICTS_OPENAI_RETRIES", "2")),
                       budget=int(env.get("VERDICTS_OPENAI_BUDGET", "40")))
        except ValueError as exc:
            raise ValueError(f"VERDICTS_OPENAI_TIMEOUT / _RETRIES / _BUDGET must be numbers ({exc})") from None


@dataclass(frozen=True)
class Reply:
    content: dict | None
    """The answer's JSON object, or None with a failure."""
    failure: str | None = None


class Budget:
    """Requests left per group (a character's 30-second window)."""

    def __init__(self, per_group: int):
        self.per_group = per_group
        self.used: Counter = Counter()

    def take(self, group) -> bool:
        if self.used[group] >= self.per_group:
            return False
        self.used[group] += 1
        return True


class ChatClient:
    def __init__(self, settings: EndpointSettings, transport: httpx.BaseTransport | None = None):
        self.settings = settings
        headers = {"Authorization": f"Bearer {settings.key}"} if settings.key else {}
        self.http = httpx.Client(base_url=settings.url, headers=headers, timeout=settings.timeout, transport=transport)

    def close(self) -> None:
        self.http.close()

    def complete(self, messages: list[dict]) -> Reply:
        """One JSON answer: the first choice's content parsed as a JSON object."""
        body = {"model": self.settings.model, "messages": messages, "temperature": 0,
                "response_format": {"type": "json_object"}}
        failure = ENDPOINT_ERROR
        for attempt in range(self.settings.retries + 1):
            if attempt:
                time.sleep(self.settings.backoff * 2 ** (attempt - 1))
            try:
                response = self.http.post("/chat/completions", json=body)
            except httpx.TimeoutException:
                failure = TIMEOUT
                log.warning("chat-completions timed out (attempt %d of %d)", attempt + 1, self.settings.retries + 1)
                continue
            except httpx.HTTPError as exc:
                failure = ENDPOINT_ERROR
                log.warning("chat-completions failed: %s (attempt %d)", exc.__class__.__name__, attempt + 1)
                continue
            if response.status_code in RETRY_STATUS:
                failure = ENDPOINT_ERROR
                log.warning("chat-completions answered %d (attempt %d)", response.status_code, attempt + 1)
                continue
            if response.status_code != 200:
                log.warning("chat-completions answered %d; not retried", response.status_code)
                return Reply(None, ENDPOINT_ERROR)
            content = parse_content(response)
            return Reply(content, None if content is not None else MALFORMED)
        return Reply(None, failure)


def parse_content(response: httpx.Response) -> dict | None:
    """The JSON object the model wrote as its message, or None when there is none."""
    try:
        text = response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError, RecursionError):
        return None
    if not isinstance(text, str):
        return None
    text = text.strip()
    if text.startswith("```"):  # a fenced block: take what is inside
        text = text.strip("`").removeprefix("json").strip()
    # The gates' own reader: a model's answer is input too (no NaN, no lone surrogate, no 1e400).
    return parse_object(text)
