"""handoff: the sample's rooms repeated with fresh room and customer ids, same articles and phrases.

A malformed message names a real room, so that room is held rather than judged.
"""

from __future__ import annotations

from pathlib import Path

from evals.generate import Plan, build, repeated, truncated, with_fields
from rules.handoff.spec import SPEC


def _without_sent_at(prev: dict, fresh: str) -> dict:
    prev["message_id"] = fresh
    prev.pop("sent_at", None)
    return prev


PLAN = Plan(
    domain="handoff", spec=SPEC,
    main="chat_messages",
    copied={"chat_messages": ("message_id", "room_id"), "rooms": ("room_id", "customer_id")},
    shared=("handoff_phrases", "help_articles"),
    malformed={
        "chat_messages": (
            ("missing_sent_at", _without_sent_at),
            ("empty_room_id", with_fields("message_id", room_id="")),
            ("duplicate_id", repeated({"text": "같은 메시지가 다시 수집됨"})),
        ),
        "rooms": (
            ("schema", with_fields("room_id", closed_by="bot")),
            ("missing_customer", with_fields("room_id", customer_id=" ")),
            ("duplicate_id", repeated({"closed_by": "counselor"})),
        ),
        "handoff_phrases": (
            ("schema", with_fields("trigger_phrase", first_reply_min=0)),
            ("invalid_json", truncated("trigger_phrase")),
            ("duplicate_id", repeated({"first_reply_min": 99})),
        ),
        "help_articles": (
            ("schema", with_fields("article_id", title=5)),
            ("missing_id", with_fields(None, article_id=" ")),
            ("duplicate_id", repeated({"title": "옛 제목"})),
        ),
    },
)


def generate(rows: int, seed: int, out_dir: Path) -> dict:
    return build(PLAN, rows, seed, out_dir)
