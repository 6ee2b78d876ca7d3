"""persona as Dagster assets: the shared daily chain, plus the prompt-version comparison and
the review queue, which look across every judged day."""

import json

import pandas as pd
from dagster import Config, MaterializeResult, MetadataValue, asset

from assets.common.chain import build_assets
from assets.common.wiring import chain_for
from assets.resources.reports import ReportsResource
from assets.resources.warehouse import WarehouseResource
from evals.domains.persona import DOMAIN
from rules.common.atomic import write_text
from rules.common.jsonl import write_jsonl
from rules.persona import verdicts as V
from rules.persona.config import load_config
from rules.persona.normalise import restore_turns
from rules.persona.review import candidate_count, review_queue


CHAIN = chain_for(DOMAIN)


def _all_turns_with_codes(warehouse: WarehouseResource) -> pd.DataFrame:
    """Every judged turn of every materialised day, with its code."""
    turns = restore_turns(warehouse.read_table(CHAIN.table("turns")), load_config())
    verdicts = warehouse.read_table(CHAIN.table("verdicts"), ["turn_no", "persona_code", "summary"])
    return turns.merge(verdicts, on="turn_no", how="inner")


class ComparisonConfig(Config):
    a: str = ""
    """Prompt version A; default: the second newest version seen."""
    b: str = ""
    """Prompt version B; default: the newest version seen."""
    character_code: str = ""
    """Limit to one character; default: the character(s) with turns in both versions."""


@asset(
    key=CHAIN.key("prompt_comparison"),
    group_name=DOMAIN.name,
    deps=[CHAIN.key("verdicts"), CHAIN.key("turns")],
    description="Inconsistency rate of prompt version A vs B (Wilson intervals, McNemar on scenario pairs or Fisher), and which codes moved. Reads every judged day.",
)
def persona_prompt_comparison(config: ComparisonConfig, warehouse: WarehouseResource, reports: ReportsResource) -> MaterializeResult:
    from evals.compare import compare_versions, render_comparison

    frame = _all_turns_with_codes(warehouse)
    versions = sorted(set(frame["prompt_ver"].dropna()))  # a set: pandas' unique stops reading text at a NUL
    if len(versions) < 2 and not (config.a and config.b):
        raise ValueError(f"need two prompt versions to compare; judged turns have {versions}")
    a, b = config.a or versions[-2], config.b or versions[-1]
    frame["character_code"] = frame["character_code_raw"].str.strip()
    if config.character_code:
        frame = frame[frame["character_code"] == config.character_code]
    else:
        both = set(frame.loc[frame["prompt_ver"] == a, "character_code"]) & set(frame.loc[frame["prompt_ver"] == b, "character_code"])
        frame = frame[frame["character_code"].isin(both)]
    scope = f"{config.character_code or ', '.join(sorted(set(frame['character_code'])))} · {a} vs {b}"
    result = compare_versions(frame, a, b, inconsistent=V.INCONSISTENT, excluded=V.EXCLUDED, scope=scope)
    md = render_comparison(result)
    folder = reports.folder(DOMAIN.name, "comparison")
    write_text(folder / f"{a}_vs_{b}.md", md)
    write_text(folder / f"{a}_vs_{b}.json", json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    return MaterializeResult(metadata={
        "comparison": MetadataValue.md(md),
        "rate_a": result.rate_a.format(), "rate_b": result.rate_b.format(),
        "test": result.test, "p_value": result.p_value if result.p_value is not None else "—",
        "path": MetadataValue.path(str(folder / f"{a}_vs_{b}.md")),
    })


@asset(
    key=CHAIN.key("review_queue"),
    group_name=DOMAIN.name,
    deps=[CHAIN.key("verdicts"), CHAIN.key("turns")],
    description="A reproducible sample of turns where the user re-named the character's settings, for a person to judge.",
)
def persona_review_queue(warehouse: WarehouseResource, reports: ReportsResource) -> MaterializeResult:
    from evals.persona import render_review_queue

    config = load_config()
    frame = _all_turns_with_codes(warehouse)
    queue = review_queue(frame, config)
    folder = reports.folder(DOMAIN.name, "review")
    write_jsonl(folder / "review_queue.jsonl", queue.to_dict("records"))
    md = render_review_queue(queue, candidate_count(frame, config), config.review.sample_size)
    write_text(folder / "review_queue.md", md)
    return MaterializeResult(metadata={"queue": MetadataValue.md(md), "items": len(queue),
                                       "path": MetadataValue.path(str(folder / "review_queue.jsonl"))})


assets = [*build_assets(CHAIN), persona_prompt_comparison, persona_review_queue]
