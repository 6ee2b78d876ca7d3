"""Jobs: what the schedule, the demo and the UI run."""

from dagster import AssetSelection, define_asset_job, in_process_executor

from assets.common.partitions import DAILY

DAILY_DOMAINS = ("live_pick", "persona")
CROSS_DAY = AssetSelection.assets(["persona", "prompt_comparison"], ["persona", "review_queue"])
"""Assets that read every judged day, so they sit outside the daily job."""

# One process per run: a fresh process per step costs seconds each and buys nothing for
# steps this size (daily partitions are the unit of scale-out, not steps).
nightly_job = define_asset_job(
    "nightly",
    selection=AssetSelection.groups(*DAILY_DOMAINS) - CROSS_DAY,
    partitions_def=DAILY,
    executor_def=in_process_executor,
    description="Every domain's daily chain for one day: raw → normalised + quarantine → verdicts → report.",
)

evaluation_job = define_asset_job(
    "evaluation",
    selection=CROSS_DAY,
    executor_def=in_process_executor,
    description="Across every judged day: the persona prompt-version comparison and review queue.",
)
