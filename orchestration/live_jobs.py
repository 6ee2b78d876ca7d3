"""The live window job, the broadcast-close job, and the sensors that launch them."""

import hashlib
import json

from dagster import (
    AssetCheckEvaluation,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetKey,
    AssetMaterialization,
    AssetSpec,
    Config,
    DefaultSensorStatus,
    MetadataValue,
    OpExecutionContext,
    RunRequest,
    SensorEvaluationContext,
    SkipReason,
    asset_check,
    in_process_executor,
    job,
    op,
    sensor,
)

from orchestration.execution import LIVE_RUN_TAGS
from live import clock, store
from live.judge import broadcasts_to_close, close_broadcast, judge_windows
from live.settings import live_settings
from live.verify import comparison_markdown, latest_outcomes, rejudge_windows
from orchestration.live_tuning import record_broadcast
from live.view import latest_windows_markdown
from assets.resources.raw_files import RawFilesResource
from assets.resources.warehouse import WarehouseResource
from rules.live_pick.config import load_config

BOARD = AssetKey(["live_pick", "live_board"])
MATCHES_BATCH = "live_matches_batch"
live_board = AssetSpec(
    BOARD, group_name="live_pick", kinds={"python"},
    description="The live windows (the live service's and the sensor's): picks, the others by reason, each window's "
                "latency. Materialised by every `live_pick_windows` run.",
)
RETRY_AFTER_NS = 300 * 1_000_000_000
"""A requested window still unjudged after this long is requested again (its run failed)."""


def window_key(character_id: str, window_ns: int) -> str:
    return f"{character_id}|{window_ns}"


def parse_key(key: str) -> tuple[str, int]:
    character, window = key.rsplit("|", 1)
    return character, int(window)


class WindowsConfig(Config):
    windows: list[str]
    """`character_id|window_start_ns` of every window to judge."""
    verify: list[str] = []
    """Windows the live service finished: judged again with the batch path and compared."""


@op(out={})
def judge_closed_windows(context: OpExecutionContext, config: WindowsConfig, warehouse: WarehouseResource,
                         raw_files: RawFilesResource):
    engine = warehouse.engine
    store.ensure_tables(engine)
    settings = live_settings()
    result = judge_windows(engine, [parse_key(k) for k in config.windows], raw_files.domain_dir("live_pick"),
                           load_config(), settings.tags, context.run_id, clock.now_ns, settings.summaries)
    latencies = result["latencies"]
    context.log.info(f"judged {result['windows']} windows, {result['lines']} lines; late lines recorded: {result['late']}")
    if result.get("checks_failed"):
        context.log.warning(f"seed checks failed on judged windows: {', '.join(result['checks_failed'])}")
    if config.verify:
        outcomes = rejudge_windows(engine, [parse_key(k) for k in config.verify], raw_files.domain_dir("live_pick"),
                                   load_config(), live_settings().tags, context.run_id, clock.now_ns())
        # reported on the board asset so the UI shows it beside the live windows
        context.instance.report_runless_asset_event(_matches_evaluation(outcomes))
    yield AssetMaterialization(
        asset_key=BOARD,
        description="Latest live windows: picks on top, the others by reason, each window's latency.",
        metadata={
            "windows_judged": result["windows"],
            "lines_judged": result["lines"],
            "max_latency_s": round(max(latencies.values()) / 1000, 3) if latencies else 0.0,
            "checks_failed": ", ".join(result.get("checks_failed", [])) or "none",
            "tagger": settings.tags,
            "summaries_kept": result.get("summaries", {}).get("kept", 0),
            "summaries_fallback": result.get("summaries", {}).get("fallback", 0),
            "board": MetadataValue.md(latest_windows_markdown(engine)),
        },
    )


def _matches_evaluation(outcomes: list[dict]) -> AssetCheckEvaluation:
    return AssetCheckEvaluation(asset_key=BOARD, check_name=MATCHES_BATCH, **_matches(outcomes))


def _matches(outcomes: list[dict]) -> dict:
    bad = [o for o in outcomes if not o["matches"]]
    return {
        "passed": not bad,
        "severity": AssetCheckSeverity.WARN,
        "description": "; ".join(f"{o['character_id']} {o['window_start']}: {', '.join(o['differing'][:10])}" for o in bad)
                       or f"{len(outcomes)} live windows equal their batch re-judgement",
        "metadata": {"windows_compared": len(outcomes), "windows_differing": len(bad),
                     "comparison": MetadataValue.md(comparison_markdown(outcomes))},
    }


@asset_check(asset=BOARD, name=MATCHES_BATCH, blocking=False,
             description="The live service's streamed verdicts equal the batch path's re-judgement of the same window "
                         "(the latest 200 re-judged windows); a failure names the window and the differing msg_ids.")
def live_matches_batch(warehouse: WarehouseResource) -> AssetCheckResult:
    store.ensure_tables(warehouse.engine)
    return AssetCheckResult(**_matches(latest_outcomes(warehouse.engine)))


class CloseConfig(Config):
    characters: list[str]


@op(out={})
def close_broadcasts(context: OpExecutionContext, config: CloseConfig, warehouse: WarehouseResource):
    store.ensure_tables(warehouse.engine)
    for character in config.characters:
        done = close_broadcast(warehouse.engine, character, load_config(), clock.now_ns)
        context.log.info(f"{character}: {done['answered']} answered lines written back")
        if done["closed"]:
            context.log.info(f"{done['broadcast_id']}: {len(done['suggestions'])} sheet tuning suggestions"
                             + (" (too thin to suggest)" if done["thin"] else ""))
            yield record_broadcast(context, warehouse.engine, done["broadcast_id"])


@job(executor_def=in_process_executor, tags=LIVE_RUN_TAGS, description="Judge closed 30-second live_pick windows from the landing table.")
def live_pick_windows():
    judge_closed_windows()


@job(executor_def=in_process_executor, tags=LIVE_RUN_TAGS,
     description="Write a closed broadcast's answered lines back to the viewer relations and make its sheet tuning suggestions.")
def live_pick_close_broadcast():
    close_broadcasts()


_SETTINGS = live_settings()
_STATUS = DefaultSensorStatus.RUNNING if _SETTINGS.running else DefaultSensorStatus.STOPPED


@sensor(job=live_pick_windows, minimum_interval_seconds=_SETTINGS.sensor_interval, default_status=_STATUS,
        description="Launches a judging run for every closed window that holds unjudged lines.")
def live_pick_window_sensor(context: SensorEvaluationContext, warehouse: WarehouseResource):
    return window_requests(context, warehouse, clock.now_ns())


def window_requests(context: SensorEvaluationContext, warehouse: WarehouseResource, now: int):
    """One run for all windows closed since the last request: a backlog drains in one run."""
    store.ensure_tables(warehouse.engine)
    settings = live_settings()
    config = load_config()
    closed = store.closed_unjudged(warehouse.engine, now, config.window_seconds, settings.grace)
    # cursor: window key -> [requested at, attempts]
    requested = json.loads(context.cursor) if context.cursor else {}
    open_keys = {window_key(c, w) for c, w in closed}
    requested = {k: v for k, v in requested.items() if k in open_keys or k.startswith("verify|")}  # judged windows drop out
    due = [window_key(c, w) for c, w in closed
           if window_key(c, w) not in requested or now - requested[window_key(c, w)][0] > RETRY_AFTER_NS]
    # windows the live service finished, to be judged again and compared (asked for once per attempt)
    verify = [window_key(c, w) for c, w in store.unverified(warehouse.engine)]
    pending_verify = {"verify|" + k for k in verify}
    requested = {k: v for k, v in requested.items() if k in open_keys or k in pending_verify}
    verify_due = [k for k in verify if "verify|" + k not in requested or now - requested["verify|" + k][0] > RETRY_AFTER_NS]
    if not due and verify_due:
        for k in verify_due:
            requested["verify|" + k] = [now, requested.get("verify|" + k, [0, 0])[1] + 1]
        context.update_cursor(json.dumps(requested))
        digest = hashlib.sha1("\n".join(verify_due).encode()).hexdigest()[:16]
        return RunRequest(run_key=f"verify:{digest}:{max(requested['verify|' + k][1] for k in verify_due)}",
                          run_config={"ops": {"judge_closed_windows": {"config": {"windows": [], "verify": verify_due}}}},
                          tags={"live_pick/verify": str(len(verify_due))})
    if not due:
        context.update_cursor(json.dumps(requested))
        late = store.unrecorded_late(warehouse.engine)
        if late and not closed:  # lines after their window's verdicts: record them as late
            return RunRequest(run_key=f"late:{now // 10**9}", run_config={"ops": {"judge_closed_windows": {"config": {"windows": []}}}})
        return SkipReason(f"{len(closed)} closed windows, all requested" if closed else "no closed window with unjudged lines")
    for k in due:
        requested[k] = [now, requested.get(k, [0, 0])[1] + 1]
    for k in verify_due:
        requested["verify|" + k] = [now, requested.get("verify|" + k, [0, 0])[1] + 1]
    context.update_cursor(json.dumps(requested))
    attempt = max(requested[k][1] for k in due)
    digest = hashlib.sha1("\n".join(due + verify_due).encode()).hexdigest()[:16]
    return RunRequest(
        run_key=f"windows:{digest}:{attempt}",  # the same windows are never requested twice in one attempt
        run_config={"ops": {"judge_closed_windows": {"config": {"windows": due, "verify": verify_due}}}},
        tags={"live_pick/windows": str(len(due))},
    )


@sensor(job=live_pick_close_broadcast, minimum_interval_seconds=_SETTINGS.sensor_interval, default_status=_STATUS,
        description="Closes a broadcast after a gap with no lines, writing its answers back.")
def live_pick_broadcast_close_sensor(context: SensorEvaluationContext, warehouse: WarehouseResource):
    store.ensure_tables(warehouse.engine)
    characters = broadcasts_to_close(warehouse.engine, clock.now_ns(), live_settings().close_gap)
    if not characters:
        return SkipReason("no broadcast to close")
    return RunRequest(
        run_key="close:" + ",".join(characters) + f":{clock.now_ns() // 10**9}",
        run_config={"ops": {"close_broadcasts": {"config": {"characters": characters}}}},
    )
