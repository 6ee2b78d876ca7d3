"""live_pick: the sample broadcast's chat repeated with fresh viewers against the same characters.

Copies share the sample's windows, so a 30-second window holds one line per copy and ranks
compete across copies; each copy's viewers carry their own closeness and cooldown.
"""

from __future__ import annotations

from pathlib import Path

from evals.generate import Plan, build, repeated, truncated, with_fields
from rules.live_pick.spec import SPEC

PLAN = Plan(
    domain="live_pick", spec=SPEC,
    main="live_chat",
    copied={"live_chat": ("msg_id", "viewer_id"), "viewer_relation": ("viewer_id",)},
    shared=("character_sheet",),
    malformed={
        "live_chat": (
            ("invalid_json", truncated("msg_id")),
            ("unknown_character", with_fields("msg_id", character_id="CH-9999")),
            ("duplicate_id", repeated({"body": "같은 줄이 다시 수집됨", "donation_amount": 500})),
        ),
        "viewer_relation": (
            ("schema", with_fields("viewer_id", closeness_level=6)),
            ("bad_timestamp", with_fields("viewer_id", last_replied_at="어제 밤")),
            ("duplicate_id", repeated({"closeness_level": 0, "answered_topics": []})),
        ),
        "character_sheet": (
            ("schema", with_fields("character_id", reply_cooldown_sec=901)),
            ("missing_id", with_fields(None, character_id=" ")),
            ("duplicate_id", repeated({"banned_tags": [], "note": "older sheet"})),
        ),
    },
)


def generate(rows: int, seed: int, out_dir: Path) -> dict:
    return build(PLAN, rows, seed, out_dir)
