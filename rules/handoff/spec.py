"""handoff, declared once: what every adapter needs of the domain.

A folder is judged through the day view: without a day every room in it, look-ups reaching the
whole input; with day D the messages are split into days (Asia/Seoul) and D−1, D and D+1 are
gated separately and combined, exactly as the Dagster partitions are, the quarantine and
counts being day D's.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from rules.common.normalised import Normalised
from rules.common.jsonl import DatasetError
from rules.common.spec import from_layout
from rules.handoff.day_parts import DAY_PARTS
from rules.handoff import engine, normalise, verdicts
from rules.handoff.checks import run_checks
from rules.handoff.config import load_config
from rules.handoff.expectations import EXPECTATIONS
from rules.handoff.reference import expected_rooms
from rules.handoff.view import from_raw
from schemas import handoff as schema


def load_dir(spec, input_dir: Path, day: str | None):
    """(day D's gated input, the view judged, config); the view's tables are what `judge` reads."""
    config = spec.load_config()
    if day is not None:
        try:
            date.fromisoformat(day)
        except ValueError:
            raise DatasetError("chat_messages", str(input_dir), f"--day {day!r} is not a date (YYYY-MM-DD)") from None
    norm, view = from_raw(spec.read_input_dir(input_dir), day, config)
    return norm, Normalised(view, norm.quarantine), config


SPEC = from_layout(
    schema, normalise, engine, verdicts, run_checks, load_config, EXPECTATIONS,
    day_parts=DAY_PARTS,
    event_dataset="chat_messages",
    verdict_key="verdict",
    judge=lambda tables, config, tags=None: engine.judge(tables, config),
    part_makers=lambda tables, config, tags=None: engine.part_makers(tables, config),
    reference=lambda judged, config: expected_rooms(judged.tables, config),
    verdict_json_columns=("evidence", "uncited_message_ids"),
    load_dir=load_dir,
)
