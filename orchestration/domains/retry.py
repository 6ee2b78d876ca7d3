"""The retry domain for the command line."""

from __future__ import annotations

from pathlib import Path

from orchestration.domains import Domain, Judged


def domain() -> Domain:
    from evals.retry import build_report, load_golden
    from rules.common.days import line_days
    from rules.retry.checks import run_checks
    from rules.retry.config import load_config
    from rules.retry.engine import judge, records
    from rules.retry.normalise import normalise, read_input_dir

    def load(input_dir: Path, day: str | None):
        config = load_config()
        raw = read_input_dir(input_dir)
        events = raw["interaction_events"]
        if day and len(events):
            raw["interaction_events"] = events[line_days(events, "sent_at", config.timezone) == day].reset_index(drop=True)
        return normalise(raw, config), config

    def judge_dir(input_dir: Path, day: str | None = None, tags: str = "gold") -> Judged:
        norm, config = load(input_dir, day)
        verdicts = judge(norm.tables["interaction_events"], norm.tables["surface_catalog"], config)
        return Judged(records(verdicts), norm.quarantine, norm.reconciliation(), norm)

    def check_dir(input_dir: Path, rows: list, day: str | None = None):
        norm, config = load(input_dir, day)
        return run_checks(norm, rows, config), Judged([], norm.quarantine, norm.reconciliation(), norm)

    def report(rows, golden, checks, quarantine, reconciliation, scope):
        return build_report(rows, golden, checks=checks, quarantine=quarantine, reconciliation=reconciliation,
                            config=load_config(), scope=scope)

    return Domain("retry", judge_dir, check_dir, report, load_golden)
