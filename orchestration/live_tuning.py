"""Closing the operator's loop in Dagster: an asset per closed broadcast listing its sheet
tuning suggestions, and the jobs that apply or reject one (launched from the Launchpad with
the suggestion's id)."""

from dagster import (
    AssetExecutionContext,
    AssetKey,
    AssetMaterialization,
    Config,
    DynamicPartitionsDefinition,
    Failure,
    MaterializeResult,
    MetadataValue,
    OpExecutionContext,
    asset,
    in_process_executor,
    job,
    op,
)
from pydantic import Field

from live import clock, sheets
from live.view import history_markdown, suggestions_markdown
from assets.resources.warehouse import WarehouseResource
from rules.live_pick.config import load_config

BROADCASTS = DynamicPartitionsDefinition(name="live_pick_broadcasts")
"""One partition per closed broadcast, keyed `CH-0007-20260908T211400` (character, first window)."""
SUGGESTIONS = AssetKey(["live_pick_tuning", "broadcast_suggestions"])
SHEET_VERSIONS = AssetKey(["live_pick_tuning", "sheet_versions"])
BY_TAG = "verdicts/by"
"""Run tag naming who applied or rejected (recorded with the decision)."""


def broadcast_metadata(engine, broadcast_id: str) -> dict:
    found = sheets.list_suggestions(engine, broadcast_id)
    return {
        "suggestions": MetadataValue.md(suggestions_markdown(engine, broadcast_id)),
        "open": sum(1 for s in found if s["status"] == sheets.OPEN),
        "suggestion_ids": MetadataValue.json([s["suggestion_id"] for s in found]),
    }


def record_broadcast(context, engine, broadcast_id: str) -> AssetMaterialization:
    """Register the broadcast's partition and record its suggestions as a materialization."""
    if not context.instance.has_dynamic_partition(BROADCASTS.name, broadcast_id):
        context.instance.add_dynamic_partitions(BROADCASTS.name, [broadcast_id])
    return AssetMaterialization(asset_key=SUGGESTIONS, partition=broadcast_id,
                                description="Sheet tuning suggestions of a closed broadcast.",
                                metadata=broadcast_metadata(engine, broadcast_id))


@asset(key=SUGGESTIONS, partitions_def=BROADCASTS, group_name="live_pick_tuning",
       description="Per closed broadcast: figures per topic (answered, held by cooldown or closeness, deferred, "
                   "repeat askers) and the sheet tuning suggestions they support, with their status.")
def broadcast_suggestions(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    engine, config = warehouse.engine, load_config()
    broadcast = sheets.find_broadcast(engine, context.partition_key, config.timezone)
    if broadcast is None:
        raise Failure(description=f"no closed broadcast '{context.partition_key}'")
    sheets.suggest_broadcast(engine, broadcast, config, clock.now_ns())
    return MaterializeResult(metadata=broadcast_metadata(engine, context.partition_key))


class ApplyConfig(Config):
    suggestion_id: str = Field(description="The suggestion to apply, e.g. SUG-1A2B3C4D5E6F (listed in the broadcast's asset)")


class RejectConfig(Config):
    suggestion_id: str = Field(description="The suggestion to reject")
    reason: str = Field(description="Why (kept with the decision)")


@op(out={})
def apply_suggestion(context: OpExecutionContext, config: ApplyConfig, warehouse: WarehouseResource):
    engine = warehouse.engine
    try:
        done = sheets.apply_suggestion(engine, config.suggestion_id.strip(), clock.now_ns(), context.run.tags.get(BY_TAG))
    except sheets.SuggestionError as exc:
        raise Failure(description=str(exc), metadata={"kind": exc.kind}) from exc
    context.log.info(done.message)
    yield AssetMaterialization(asset_key=SHEET_VERSIONS, description="Character-sheet version history.",
                               metadata={"character_id": done.character_id, "version": done.version, "changed": done.changed,
                                         "history": MetadataValue.md(history_markdown(engine, done.character_id))})
    yield record_broadcast(context, engine, done.broadcast_id)


@op(out={})
def reject_suggestion(context: OpExecutionContext, config: RejectConfig, warehouse: WarehouseResource):
    engine = warehouse.engine
    try:
        s = sheets.reject_suggestion(engine, config.suggestion_id.strip(), config.reason, clock.now_ns(), context.run.tags.get(BY_TAG))
    except sheets.SuggestionError as exc:
        raise Failure(description=str(exc), metadata={"kind": exc.kind}) from exc
    context.log.info(f"{s['suggestion_id']} rejected: {s['reason']}" + ("" if s["changed"] else " (already)"))
    yield record_broadcast(context, engine, s["broadcast_id"])


@job(executor_def=in_process_executor, tags={"live_pick/loop": "apply"},
     description="Apply a sheet tuning suggestion: writes the next version of the character's sheet (in force for windows "
                 "that open from now on) and marks the suggestion applied. Run config: ops.apply_suggestion.config.suggestion_id.")
def apply_sheet_suggestion():
    apply_suggestion()


@job(executor_def=in_process_executor, tags={"live_pick/loop": "reject"},
     description="Reject a sheet tuning suggestion with a reason.")
def reject_sheet_suggestion():
    reject_suggestion()
