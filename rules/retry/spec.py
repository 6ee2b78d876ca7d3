"""retry, declared once: what every adapter needs of the domain."""

from __future__ import annotations

from rules.common.spec import from_layout
from rules.retry.day_parts import DAY_PARTS
from rules.retry import engine, normalise, verdicts
from rules.retry.checks import run_checks
from rules.retry.config import load_config
from rules.retry.expectations import EXPECTATIONS
from rules.retry.reference import expected_verdicts
from schemas import retry as schema

SPEC = from_layout(
    schema, normalise, engine, verdicts, run_checks, load_config, EXPECTATIONS,
    day_parts=DAY_PARTS,
    event_dataset="interaction_events",
    verdict_key="verdict",
    judge=lambda tables, config, tags=None, baselines=None: engine.judge(tables["interaction_events"], tables["surface_catalog"],
                                                                         config, baselines),
    part_makers=lambda tables, config, tags=None: engine.part_makers(tables["interaction_events"], tables["surface_catalog"], config),
    reference=expected_verdicts,
    explain_outputs=2,  # evidence and reason
)
