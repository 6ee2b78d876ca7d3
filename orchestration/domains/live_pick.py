"""The live_pick domain for the command line."""

from __future__ import annotations

from pathlib import Path

from orchestration.domains import Domain, Judged


def domain() -> Domain:
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
