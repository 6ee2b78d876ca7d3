"""The persona domain for the command line."""

from __future__ import annotations

from pathlib import Path

from orchestration.domains import Domain
from orchestration.domains.wiring import day_loader, wire


def reporting():
    """The report builder and golden loader, imported when a report is made (they load the statistics libraries)."""
    from evals.persona import build_report, load_golden

    return build_report, load_golden


def domain() -> Domain:
    from rules.persona import verdicts as V
    from rules.persona.checks import run_checks
    from rules.persona.config import load_config
    from rules.persona.engine import judge, records
    from rules.persona.normalise import normalise, read_input_dir
    from rules.persona.review import candidate_count, review_queue

    load = day_loader(read_input_dir, normalise, load_config, "turns", "created_at")

    def turns_with_codes(input_dir: Path):
        norm, _, config = load(input_dir, None)
        verdicts = judge(norm.tables["turns"], norm.tables["profiles"], config)
        turns = norm.tables["turns"].merge(verdicts[["turn_no", "persona_code", "summary"]], on="turn_no")
        turns["character_code"] = turns["character_code_raw"].str.strip()
        return turns, config

    def compare(input_dir: Path, a: str, b: str, character: str | None = None):
        from evals.compare import compare_versions

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

    return wire(
        "persona", load, lambda norm, config, tags: judge(norm.tables["turns"], norm.tables["profiles"], config),
        records, run_checks, load_config, reporting, compare=compare, review=review,
    )
