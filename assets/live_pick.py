"""live_pick as Dagster assets: the shared daily chain over the live_pick rules."""

from assets.common.chain import DomainChain, build_assets, numbered_checks
from assets.common.lazy import lazy
from assets.common.metadata import md_table
from rules.live_pick import verdicts as V
from rules.live_pick.checks import run_checks
from rules.live_pick.config import load_config
from rules.live_pick.engine import OUTPUT_COLUMNS, judge, records
from rules.live_pick.expectations import EXPECTATIONS
from rules.live_pick.normalise import ID_FIELDS, JSON_COLUMNS, normalise, restore, stored_columns
from schemas import required_columns
from schemas.live_pick import DOMAIN, INPUT_DATASETS, OUTPUT


# Report code (statistics) loads only where a report is made, not in every run.
build_report = lazy("evals.live_pick", "build_report")
load_golden = lazy("evals.live_pick", "load_golden")


def _preview(rows: list[dict]) -> str:
    picks = [[r["window_start"], r["character_id"], r["rank_in_window"], r["msg_id"], r["summary"]]
             for r in rows if r["verdict"] == V.PICK][:30]
    return md_table(["window_start", "character_id", "rank", "msg_id", "summary"], picks) if picks else ""


CHAIN = DomainChain(
    domain=DOMAIN,
    datasets=INPUT_DATASETS,
    id_fields=ID_FIELDS,
    time_fields={"live_chat": "sent_at"},
    required=lambda d: required_columns(DOMAIN, d),
    load_config=load_config,
    normalise=normalise,
    stored_columns=stored_columns,
    json_columns=JSON_COLUMNS,
    restore=restore,
    judge=lambda t, cfg: judge(t["live_chat"], t["character_sheet"], t["viewer_relation"], cfg),
    records=records,
    output_columns=OUTPUT_COLUMNS,
    verdict_json_columns=("evidence",),
    verdict_key="verdict",
    output_schema=OUTPUT,
    verdict_order=V.ORDER,
    run_checks=run_checks,
    check_titles=numbered_checks([
        "verdict enum", "required fields filled", "ranges", "cooldown re-computed", "rank re-computed",
        "evidence fields are columns", "evidence values equal rows", "polite Korean summary",
        "empty tags are out of world", "rule order", "closeness per character", "tag vocabulary",
        "cooldown and rank filled when due",
    ]),
    # A verdict file that breaks its schema or disagrees with the re-computation must not reach a report.
    blocking_checks=frozenset({"schema", "recompute"}),
    expectations=EXPECTATIONS,
    load_golden=load_golden,
    build_report=build_report,
    verdicts_description="One verdict per judged chat line: which three lines each character answers per 30-second window, and why the others were left out.",
    preview=_preview,
)

assets = build_assets(CHAIN)
