"""The floor for the live benchmark: the same sensor logic launching a job that judges
nothing, only records when each window's run got to store (so its latency is pure overhead).
"""

from dagster import DefaultSensorStatus, Definitions, OpExecutionContext, SensorEvaluationContext, in_process_executor, job, op, sensor

from live import clock, store
from orchestration.live_jobs import WindowsConfig, parse_key, window_requests
from live.settings import live_settings
from assets.resources.warehouse import WarehouseResource
from rules.common import environment
from rules.common import timestamps
from rules.live_pick.config import load_config


@op(name="judge_closed_windows", out={})
def record_only(context: OpExecutionContext, config: WindowsConfig, warehouse: WarehouseResource):
    keys = [parse_key(k) for k in config.windows]
    step = load_config().window_seconds * timestamps.NS_PER_SEC
    meta = {k: {"window_start": str(k[1]), "window_end_ns": k[1] + step, "lines": 0} for k in keys}
    import pandas as pd

    store.store_windows(warehouse.engine, keys, [], {}, pd.DataFrame({"line": []}), meta, {}, {}, clock.now_ns(),
                        context.run_id, clock.now_ns)


@job(executor_def=in_process_executor)
def live_floor():
    record_only()


@sensor(job=live_floor, minimum_interval_seconds=live_settings().sensor_interval, default_status=DefaultSensorStatus.RUNNING)
def live_floor_sensor(context: SensorEvaluationContext, warehouse: WarehouseResource):
    return window_requests(context, warehouse, clock.now_ns())


defs = Definitions(jobs=[live_floor], sensors=[live_floor_sensor],
                   resources={"warehouse": WarehouseResource(url=environment.warehouse_url())})
