"""persona, declared once: what every adapter needs of the domain."""

from __future__ import annotations

from rules.common.spec import from_layout
from rules.persona.day_parts import DAY_PARTS
from rules.persona import engine, normalise, verdicts
from rules.persona.checks import run_checks
from rules.persona.config import load_config
from rules.persona.expectations import EXPECTATIONS
from rules.persona.reference import expected_codes
from schemas import persona as schema

SPEC = from_layout(
    schema, normalise, engine, verdicts, run_checks, load_config, EXPECTATIONS,
    day_parts=DAY_PARTS,
    event_dataset="turns",
    verdict_key="persona_code",
    judge=lambda tables, config, tags=None: engine.judge(tables["turns"], tables["profiles"], config),
    part_makers=lambda tables, config, tags=None: engine.part_makers(tables["turns"], tables["profiles"], config),
    reference=expected_codes,
)
