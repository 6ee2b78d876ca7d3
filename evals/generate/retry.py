"""retry: the sample's sessions repeated with fresh session and event ids on the same surfaces.

Surfaces are shared, so every copy adds cross-session pairs to each surface's baseline.
"""

from __future__ import annotations

from pathlib import Path

from evals.generate import Plan, build, repeated, with_fields
from rules.retry.spec import SPEC

PLAN = Plan(
    domain="retry", spec=SPEC,
    main="interaction_events",
    copied={"interaction_events": ("event_id", "session_id")},
    shared=("surface_catalog",),
    malformed={
        "interaction_events": (
            ("no_words", with_fields("event_id", input_text="?!…")),
            ("missing_session", with_fields("event_id", session_id="  ")),
            ("duplicate_id", repeated({"input_text": "다시 보낸 같은 이벤트"})),
        ),
        "surface_catalog": (
            ("schema", with_fields("surface_key", default_baseline=1.5)),
            ("key_not_lower", with_fields("surface_key")),
            ("duplicate_id", repeated({"default_baseline": 0.9})),
        ),
    },
)


def generate(rows: int, seed: int, out_dir: Path) -> dict:
    return build(PLAN, rows, seed, out_dir)
