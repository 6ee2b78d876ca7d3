"""live_pick, declared once: what every adapter needs of the domain."""

from __future__ import annotations

from rules.common.reconcile import empty_quarantine
from rules.common.spec import from_layout
from rules.live_pick.day_parts import DAY_PARTS
from rules.live_pick import engine, normalise, verdicts
from rules.live_pick.checks import run_checks
from rules.live_pick.config import load_config
from rules.live_pick.expectations import EXPECTATIONS
from rules.live_pick.reference import expected_verdicts
from rules.live_pick.names import NAMES, WRITERS
from rules.live_pick.summaries import write_summaries
from schemas import live_pick as schema


def judge(tables: dict, config, tags=None, summaries: str | None = None):
    """The verdicts, with model sentences where the summary writer's pass the checks.
    `tags` and `summaries` name the tagger and the summary writer; None: the config's (config.yaml)."""
    frame = engine.judge(tables["live_chat"], tables["character_sheet"], tables["viewer_relation"], config,
                         config.tagger if tags is None else tags)
    norm = normalise.Normalised(tables=tables, quarantine=empty_quarantine())
    return write_summaries(frame, norm, config, config.summary_writer if summaries is None else summaries)


def part_makers(tables: dict, config, tags=None, summaries: str | None = None) -> list:
    """`judge` in parts; model sentences are written and checked over the whole frame, so with a
    model summary writer the frame is one part."""
    if (config.summary_writer if summaries is None else summaries) != "template":
        return [lambda: judge(tables, config, tags, summaries)]
    return engine.part_makers(tables["live_chat"], tables["character_sheet"], tables["viewer_relation"], config,
                              config.tagger if tags is None else tags)


SPEC = from_layout(
    schema, normalise, engine, verdicts, run_checks, load_config, EXPECTATIONS,
    day_parts=DAY_PARTS,
    time_fields={"live_chat": "sent_at"},
    event_dataset="live_chat",
    verdict_key="verdict",
    judge=judge,
    part_makers=part_makers,
    reference=expected_verdicts,
    json_columns=normalise.JSON_COLUMNS,
    verdict_json_columns=("evidence", "provenance"),
    tag_sources=NAMES,
    summary_writers=WRITERS,
)
