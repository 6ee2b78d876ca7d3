"""persona in the evaluation layer: its report, board, generator, prompt-version comparison and review queue."""

from __future__ import annotations

from pathlib import Path

from evals.domains.domain import Domain
from evals.generate.persona import generate
from evals.markdown import md_table
from rules.persona import verdicts as V
from rules.persona.review import candidate_count, review_queue
from rules.persona.spec import SPEC


def reporting():
    from evals.persona import build_report, load_golden

    return build_report, load_golden


def board():
    from evals.boards.persona import BOARD

    return BOARD


def preview(rows: list[dict]) -> str:
    shown = [[r["turn_no"], r["persona_code"], r["summary"]] for r in rows if r["persona_code"] != V.CONSISTENT][:30]
    return md_table(["turn_no", "persona_code", "summary"], shown) if shown else ""


def _turns_with_codes(input_dir: Path):
    norm, _, config = SPEC.load(input_dir)
    verdicts = SPEC.judge(norm.tables, config)
    turns = norm.tables["turns"].merge(verdicts[["turn_no", "persona_code", "summary"]], on="turn_no")
    turns["character_code"] = turns["character_code_raw"].str.strip()
    return turns, config


def compare(input_dir: Path, a: str, b: str, character: str | None = None):
    """Prompt version a against b on one character (the only one with turns in both, unless named)."""
    from evals.compare import compare_versions

    turns, _ = _turns_with_codes(input_dir)
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
    turns, config = _turns_with_codes(input_dir)
    return review_queue(turns, config), candidate_count(turns, config), config.review.sample_size


def extras(domain: Domain, input_dir: Path, judged, report) -> dict:
    """The week-2 evaluation's prompt-version comparison of the two newest versions."""
    from evals.compare import render_comparison

    versions = sorted(set(judged.normalised.tables["turns"]["prompt_ver"].dropna()))  # a set: pandas' unique stops at a NUL
    if len(versions) < 2:
        report.extra_sections.append(("프롬프트 버전 비교", f"비교할 버전이 둘 이상 없습니다 ({', '.join(versions) or '없음'})."))
        return {}
    try:
        comparison = domain.compare(input_dir, versions[-2], versions[-1])
    except ValueError as exc:  # e.g. several characters in both versions
        report.extra_sections.append(("프롬프트 버전 비교", f"비교하지 못했습니다: {exc}"))
        return {}
    report.extra_sections.append(("프롬프트 버전 비교", render_comparison(comparison)))
    return {"prompt_comparison": comparison.to_dict()}


SYNTHETIC_NOTE = "대화와 캐릭터 설정도 규칙을 쓴 같은 손으로 만들었습니다. 실제 일관성 품질은 실제 대화 로그가 있어야 잴 수 있습니다."
"""Shown when the input is synthetic (the sample data, or generated)."""


DOMAIN = Domain(
    SPEC, reporting, board, generate, synthetic_note=SYNTHETIC_NOTE,
    verdicts_description="One persona code per turn: did the character's reply break its profile (age, job, forbidden topic)?",
    preview=preview, extras=extras, compare=compare, review=review,
    report_columns=("turn_no", "persona_code", "profile_no"),
)
