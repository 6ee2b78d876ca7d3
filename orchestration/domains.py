"""What the command line needs of each domain, in one place.

Each entry wires the domain's pure functions (read and gate a folder, judge, check,
report); the CLI dispatches on the DOMAIN argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd


@dataclass
class Judged:
    rows: list[dict]
    quarantine: pd.DataFrame
    reconciliation: dict
    normalised: object


@dataclass
class Domain:
    name: str
    judge_dir: Callable[..., Judged]
    """(input_dir, day=None, tags="gold") → Judged"""
    check_dir: Callable[..., tuple[list, Judged]]
    """(input_dir, verdict rows, day=None) → (check results, the gated input)"""
    report: Callable[..., object]
    """(rows, golden rows, checks, quarantine, reconciliation, scope) → Report"""
    load_golden: Callable[[Path], list[dict]]
    tag_sources: tuple[str, ...] = ("gold",)


def _live_pick() -> Domain:
    from evals.live_pick import build_report, load_golden
    from rules.common.days import line_days
    from rules.live_pick.checks import run_checks
    from rules.live_pick.config import load_config
    from rules.live_pick.engine import judge, records
    from rules.live_pick.normalise import normalise, read_input_dir
    from rules.live_pick.tags import SOURCES, tag_source

    def load(input_dir: Path, day: str | None):
        config = load_config()
        raw = read_input_dir(input_dir)
        chat = raw["live_chat"]
        if day and len(chat):
            raw["live_chat"] = chat[line_days(chat, "sent_at", config.timezone) == day].reset_index(drop=True)
        return normalise(raw, config), config

    def judge_dir(input_dir: Path, day: str | None = None, tags: str = "gold") -> Judged:
        norm, config = load(input_dir, day)
        verdicts = judge(norm.chat, norm.sheet, norm.relation, config, tag_source(tags))
        return Judged(records(verdicts), norm.quarantine, norm.reconciliation(), norm)

    def check_dir(input_dir: Path, rows: list, day: str | None = None):
        norm, config = load(input_dir, day)
        return run_checks(norm, rows, config), Judged([], norm.quarantine, norm.reconciliation(), norm)

    def report(rows, golden, checks, quarantine, reconciliation, scope):
        return build_report(rows, golden, checks=checks, quarantine=quarantine, reconciliation=reconciliation,
                            config=load_config(), scope=scope)

    return Domain("live_pick", judge_dir, check_dir, report, load_golden, tuple(SOURCES))


FACTORIES: dict[str, Callable[[], Domain]] = {"live_pick": _live_pick}
ALL_DOMAINS = ("persona", "live_pick", "retry", "handoff")


def get(name: str) -> Domain:
    if name not in FACTORIES:
        raise KeyError(name)
    return FACTORIES[name]()
