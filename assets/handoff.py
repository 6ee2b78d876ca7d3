"""handoff as Dagster assets: the shared daily chain with a day window for look-ups.

Day D's verdicts read the normalised partitions D−1, D and D+1 (a room opened before midnight,
the rest of late rooms, a customer's next room). Verdicts and report are partitioned by the
days whose look-ahead has ended, and judge themselves once the look-ahead partition lands:
the nightly job materialises yesterday's raw and normalised tables, which completes the day
before, and `lookahead_sensor` then judges that day.
"""

import warnings

from dagster import (
    BetaWarning,
    AssetSelection,
    AutomationCondition,
    AutomationConditionSensorDefinition,
    DefaultSensorStatus,
    define_asset_job,
)

from assets.common.chain import DayWindow, build_assets
from assets.common.wiring import chain_for
from evals.domains.handoff import DOMAIN
from rules.handoff.engine import day_tables
from rules.handoff.view import AFTER_DAYS, BEFORE_DAYS, combine

KEPT = {
    "day_rooms": {"room_id": "text", "customer_id": "text", "opened_day": "text", "status": "text", "verdict": "text",
                  "handoff_at": "text", "reply_wait_min": "float", "first_reply_min": "integer", "on_time": "boolean",
                  "late": "boolean", "provisional": "boolean", "next_room_id": "text"},
    "held_rows": {"room_id": "text", "dataset": "text", "file": "text", "line": "integer", "id": "text",
                  "reason_code": "text", "reason": "text"},
}
"""Every room of the day (listed or not) and the rows that held rooms back: the report's header and held group."""


CHAIN = chain_for(
    DOMAIN,
    window=DayWindow(
        before=BEFORE_DAYS,
        after=AFTER_DAYS,
        combine=combine,
        kept=KEPT,
        keep=day_tables,
        # Judge the newest day whose look-ahead has landed (eager keeps to the newest partition).
        automation_condition=AutomationCondition.eager(),
    ),
)

assets = build_assets(CHAIN)

JUDGED = AssetSelection.assets(CHAIN.key("verdicts"), CHAIN.key("agreement_report"))
"""Partitioned by days whose look-ahead is complete, so they sit outside the daily nightly job."""

judge_job = define_asset_job(
    "handoff_judge",
    selection=JUDGED,
    description="handoff verdicts and report for days whose next day is in (backfills, re-runs).",
)

with warnings.catch_warnings():  # Dagster marks this sensor class beta; it is the documented way
    warnings.simplefilter("ignore", BetaWarning)
    lookahead_sensor = AutomationConditionSensorDefinition(
        "handoff_lookahead",
        target=JUDGED,
        default_status=DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=300,
        description="Judges a handoff day once the next day's partition has been materialised (by the nightly job).",
    )
