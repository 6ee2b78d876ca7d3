"""Jobs: what the schedule, the demo and the UI run."""

from dagster import AssetSelection, define_asset_job

from assets.common.partitions import DAILY
from assets.handoff import JUDGED as HANDOFF_JUDGED
from evals import domains

CROSS_DAY = AssetSelection.assets(["persona", "prompt_comparison"], ["persona", "review_queue"])
"""Assets that read every judged day, so they sit outside the daily job."""

# No executor here: the code location's (orchestration.execution.batch_executor) decides,
# in-process by default, Celery workers for a team that has outgrown one machine.
nightly_job = define_asset_job(
    "nightly",
    # handoff's verdicts wait for the next day's data: their partitions end a day earlier and a
    # sensor judges each day once its look-ahead has landed.
    selection=AssetSelection.groups(*domains.names()) - CROSS_DAY - HANDOFF_JUDGED,
    partitions_def=DAILY,
    description="Every domain's daily chain for one day: raw → normalised + quarantine → verdicts → report.",
)

evaluation_job = define_asset_job(
    "evaluation",
    selection=CROSS_DAY,
    description="Across every judged day: the persona prompt-version comparison and review queue.",
)
