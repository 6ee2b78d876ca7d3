"""The persona domain for the command line."""

from __future__ import annotations

from pathlib import Path

from orchestration.domains import Domain, Judged


def domain() -> Domain:
    from evals.compare import compare_versions
    from evals.persona import build_report, load_golden
    from rules.common.days import line_days
    from rules.persona import verdicts as V
    from rules.persona.checks import run_checks
    from rules.persona.config import load_config
    from rules.persona.engine import judge, records
    from rules.persona.normalise import normalise, read_input_dir
    from rules.persona.review import candidate_count, review_queue

    def load(input_dir: Path, day: str | None):
        config = load_config()
        raw = read_input_dir(input_dir)
        turns = raw["turns"]
        if day and len(turns):
            raw["turns"] = turns[line_days(turns, "created_at", config.timezone) == day].reset_index(drop=True)
        return normalise(raw, config), config

    def judge_dir(input_dir: Path, day: str | None = None, tags: str = "gold") -> Judged:
        norm, config = load(input_dir, day)
        verdicts = judge(norm.tables["turns"], norm.tables["profiles"], config)
        return Judged(records(verdicts), norm.quarantine, norm.reconciliation(), norm)

    def check_dir(input_dir: Path, rows: list, day: str | None = None):
        norm, config = load(input_dir, day)
        return run_checks(norm, rows, config), Judged([], norm.quarantine, norm.reconciliation(), norm)

    def report(rows, golden, checks, quarantine, reconciliation, scope):
        return build_report(rows, golden, checks=checks, quarantine=quarantine, reconciliation=reconciliation,
                            config=load_config(), scope=scope)

    def turns_with_codes(input_dir: Path):
        norm, config = load(input_dir, None)
        verdicts = judge(norm.tables["turns"], norm.tables["profiles"], config)
        turns = norm.tables["turns"].merge(verdicts[["turn_no", "persona_code", "summary"]], on="turn_no")
        turns["character_code"] = turns["character_code_raw"].str.strip()
        return turns, config

    def compare(input_dir: Path, a: str, b: str, character: str | None = None):
        turns, _ = turns_with_codes(input_dir)
        if character:
            turns = turns[turns["character_code"] == character]
        else:
            both = set(turns.loc[turns["prompt_ver"] == a, "character_code"]) & set(turns.loc[turns["prompt_ver"] == b, "character_code"])
            if len(both) > 1:
                raise ValueError(f"several characters have turns in both {a} and {b} ({', '.join(sorted(both))}); choose one with --character")
            turns = turns[turns["character_code"].isin(both)]
            character = next(iter(both), None)
        if character is None:
            raise ValueError(f"no character has turns in both {a} and {b}")
        return compare_versions(turns, a, b, inconsistent=V.INCONSISTENT, excluded=V.EXCLUDED, scope=f"{character} · {a} vs {b}")

    def review(input_dir: Path):
        turns, config = turns_with_codes(input_dir)
        return review_queue(turns, config), candidate_count(turns, config), config.review.sample_size

    return Domain("persona", judge_dir, check_dir, report, load_golden, compare=compare, review=review)
