"""The handoff domain for the command line.

Without --day every room in the input is judged and look-ups reach the whole input. With
--day D the input's messages are split into days (Asia/Seoul) and days D−1, D and D+1 are
gated separately and combined, exactly as the Dagster partitions are; the quarantine and
counts reported are day D's.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from orchestration.domains import Domain, Judged


def domain() -> Domain:
    from evals.handoff import build_report, load_golden
    from rules.common.gates import Normalised
    from rules.common.jsonl import DatasetError
    from rules.handoff.checks import run_checks
    from rules.handoff.config import load_config
    from rules.handoff.engine import day_tables, judge, records
    from rules.handoff.normalise import read_input_dir
    from rules.handoff.view import from_raw

    last: dict = {}
    """The view of the latest judge/validate call, so `agree --input` can count every room of the day."""

    def load(input_dir: Path, day: str | None):
        config = load_config()
        if day is not None:
            try:
                date.fromisoformat(day)
            except ValueError:
                raise DatasetError("chat_messages", str(input_dir), f"--day {day!r} is not a date (YYYY-MM-DD)") from None
        norm, view = from_raw(read_input_dir(input_dir), day, config)
        last.update(view=view, config=config)
        return norm, view, config

    def judge_dir(input_dir: Path, day: str | None = None, tags: str = "gold") -> Judged:
        norm, view, config = load(input_dir, day)
        return Judged(records(judge(view, config)), norm.quarantine, norm.reconciliation(), Normalised(view, norm.quarantine))

    def check_dir(input_dir: Path, rows: list, day: str | None = None):
        norm, view, config = load(input_dir, day)
        results = run_checks(Normalised(view, norm.quarantine), rows, config)
        return results, Judged([], norm.quarantine, norm.reconciliation(), Normalised(view, norm.quarantine))

    def report(rows, golden, checks, quarantine, reconciliation, scope):
        config = load_config()
        side = day_tables(last["view"], last["config"]) if "view" in last else {}
        return build_report(rows, golden, checks=checks, quarantine=quarantine, reconciliation=reconciliation,
                            config=config, scope=scope, **side)

    return Domain("handoff", judge_dir, check_dir, report, load_golden)
