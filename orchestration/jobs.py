"""Jobs: what the schedule and the demo run."""

from dagster import AssetSelection, define_asset_job, in_process_executor

from assets.common.partitions import DAILY

# One process per run: a fresh process per step costs seconds each and buys nothing for
# steps this size (daily partitions are the unit of scale-out, not steps).
nightly_job = define_asset_job(
    "nightly",
    selection=AssetSelection.groups("live_pick"),
    partitions_def=DAILY,
    executor_def=in_process_executor,
    description="Every domain's daily chain for one day: raw → normalised + quarantine → verdicts → report.",
)
