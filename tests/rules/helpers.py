"""Scaffolding shared by the rule tests: fixture files, raw frames and each domain's judged sample."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from rules.common.jsonl import RAW_COLUMNS
from rules.live_pick import config as live_pick_config
from rules.live_pick import engine as live_pick_engine
from rules.live_pick import normalise as live_pick_normalise
from rules.persona import config as persona_config
from rules.persona import engine as persona_engine
from rules.persona import normalise as persona_normalise
from rules.retry import config as retry_config
from rules.retry import engine as retry_engine
from rules.retry import normalise as retry_normalise
from tests.conftest import SEEDS


def read_jsonl(path: Path) -> list[dict]:
    """The objects of a JSON Lines file; blank lines are skipped, anything else must parse."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def raw_frame(dataset: str, rows) -> pd.DataFrame:
    """A dataset as `read_raw` gives it: one raw JSON line per row (strings kept as written), numbered from 1."""
    texts = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows]
    return pd.DataFrame(
        {"dataset": dataset, "file": f"{dataset}.jsonl", "line": pd.array(range(1, len(texts) + 1), dtype="int64"),
         "text": texts},
        columns=RAW_COLUMNS,
    )


def judge_persona(norm, config) -> list[dict]:
    """The persona verdict rows of normalised tables."""
    return persona_engine.records(persona_engine.judge(norm.tables["turns"], norm.tables["profiles"], config))


def judge_live_pick(norm, config) -> list[dict]:
    """The live_pick verdict rows of normalised tables."""
    return live_pick_engine.records(live_pick_engine.judge(norm.chat, norm.sheet, norm.relation, config))


def judge_retry(norm, config) -> list[dict]:
    """The retry verdict rows of normalised tables."""
    return retry_engine.records(retry_engine.judge(norm.tables["interaction_events"], norm.tables["surface_catalog"], config))


# handoff is left out: its rows depend on the day it is judged for, so its tests build their own view.
_DOMAINS = {
    "persona": (persona_config.load_config, persona_normalise.load_dir, judge_persona),
    "live_pick": (live_pick_config.load_config, live_pick_normalise.load_dir, judge_live_pick),
    "retry": (retry_config.load_config, retry_normalise.load_dir, judge_retry),
}


def judged_sample(domain: str) -> tuple:
    """A domain's seed sample gated and judged with the shipped configuration: (normalised, rows, config)."""
    load_config, load_dir, judge = _DOMAINS[domain]
    config = load_config()
    norm = load_dir(SEEDS / domain, config)
    return norm, judge(norm, config), config
