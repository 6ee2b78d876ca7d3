"""persona: turns repeated with fresh turn numbers against the sample's profiles."""

from __future__ import annotations

from pathlib import Path

from evals.generate import Plan, build, repeated, with_fields
from rules.persona.spec import SPEC

PLAN = Plan(
    domain="persona", spec=SPEC,
    main="turns",
    copied={"turns": ("turn_no", "scenario_id")},
    shared=("profiles",),
    malformed={
        "turns": (
            ("schema", with_fields("turn_no", stated_age=121)),
            ("bad_timestamp", with_fields("turn_no", created_at="2026-10-04T25:61:00")),
            ("duplicate_id", repeated({"stated_job": "재전송된 행", "note": "collector re-sent"})),
        ),
        "profiles": (
            ("schema", with_fields("profile_no", character_code="CH-BAD-AGE", age=150)),
            ("missing_id", with_fields(None, profile_no="  ", character_code="CH-BAD-ID")),
            ("duplicate_id", repeated({"age": 22, "note": "older settings row"})),
        ),
    },
)


def generate(rows: int, seed: int, out_dir: Path) -> dict:
    return build(PLAN, rows, seed, out_dir)
