"""retry as Dagster assets: the shared daily chain over the retry rules.

The baseline of each surface is taken over the day's events, the partition being the judged
scope; the report carries the baseline sweep.
"""

from assets.common.chain import DomainChain, build_assets, numbered_checks
from assets.common.lazy import lazy
from assets.common.metadata import md_table
from rules.retry import verdicts as V
from rules.retry.checks import run_checks
from rules.retry.config import load_config
from rules.retry.engine import OUTPUT_COLUMNS, judge, records
from rules.retry.expectations import EXPECTATIONS
from rules.retry.normalise import ID_FIELDS, TIME_FIELDS, normalise, restore, stored_columns
from schemas import required_columns
from schemas.retry import DOMAIN, INPUT_DATASETS, OUTPUT


def _preview(rows: list[dict]) -> str:
    shown = [[r["event_id"], r["session_id"], r["surface_key"], r["verdict"], r["matched_event_id"] or "—", r["reason"]]
             for r in rows if r["verdict"] != V.ONE_SHOT][:30]
    return md_table(["event_id", "session_id", "surface_key", "verdict", "matched", "reason"], shown) if shown else ""


# Report code (statistics) loads only where a report is made, not in every run.
build_report = lazy("evals.retry", "build_report")
load_golden = lazy("evals.retry", "load_golden")


CHAIN = DomainChain(
    domain=DOMAIN,
    datasets=INPUT_DATASETS,
    id_fields=ID_FIELDS,
    time_fields=TIME_FIELDS,
    required=lambda d: required_columns(DOMAIN, d),
    load_config=load_config,
    normalise=normalise,
    stored_columns=stored_columns,
    json_columns=(),
    restore=restore,
    judge=lambda t, cfg: judge(t["interaction_events"], t["surface_catalog"], cfg),
    records=records,
    output_columns=OUTPUT_COLUMNS,
    verdict_json_columns=("evidence",),
    verdict_key="verdict",
    output_schema=OUTPUT,
    verdict_order=V.ORDER,
    run_checks=run_checks,
    check_titles=numbered_checks([
        "verdict enum", "seven fields present", "surface_key trimmed, lower-cased, in the catalog",
        "surface_baseline is the cross-session median", "max_overlap re-computed", "overlaps within 0–1",
        "evidence fields are columns", "evidence values equal rows", "exact_retry texts equal",
        "reworded_retry above the baseline", "surface_hop over 3+ surfaces", "polite Korean reason",
    ]),
    # A verdict file that breaks its schema or disagrees with the re-computation must not reach a report.
    blocking_checks=frozenset({"schema", "recompute"}),
    expectations=EXPECTATIONS,
    load_golden=load_golden,
    build_report=build_report,
    verdicts_description="One verdict per event: did the user try again (same text, reworded, across surfaces) or finish in one go?",
    preview=_preview,
)

assets = build_assets(CHAIN)
