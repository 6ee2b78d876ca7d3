"""What the command line needs of each domain.

Each domain has a module here that wires its pure functions (read and gate a folder, judge,
check, report) into a `Domain` through `wiring`; the CLI dispatches on the DOMAIN argument.
Modules are imported only when their domain is used, so a command pays for one domain's imports.
"""

from __future__ import annotations

import importlib
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
    """(input_dir, day=None, tags="gold", summaries="template") → Judged (summaries: live_pick only)"""
    check_dir: Callable[..., tuple[list, Judged]]
    """(input_dir, verdict rows, day=None) → (check results, the gated input)"""
    report: Callable[..., object]
    """(rows, golden rows, checks, quarantine, reconciliation, scope) → Report"""
    load_golden: Callable[[Path], list[dict]]
    tag_sources: tuple[str, ...] = ("gold",)
    summary_writers: tuple[str, ...] = ("template",)
    compare: Callable[..., object] | None = None
    """(input_dir, a, b, character=None) → Comparison; for domains with prompt versions"""
    review: Callable[..., object] | None = None
    """(input_dir) → (review queue frame, candidate count, sample size)"""


ALL_DOMAINS = ("persona", "live_pick", "retry", "handoff")
AVAILABLE = ("persona", "live_pick", "retry", "handoff")
"""Domains with a module here (`orchestration/domains/<name>.py` defining `domain()`)."""


def get(name: str) -> Domain:
    if name not in AVAILABLE:
        raise KeyError(name)
    return importlib.import_module(f"orchestration.domains.{name}").domain()
