"""Where a run's steps execute, decided once from the environment.

- `VERDICTS_EXECUTOR`: `in_process` (the default: every step of a run in the run's own
  process, no server) or `celery` (each step is a task on a Celery queue; `verdicts worker`
  processes on any host run them).
- `VERDICTS_CELERY_BROKER`: the broker URL; default RabbitMQ on loopback
  (`pyamqp://guest:guest@127.0.0.1:5672//`).
- `VERDICTS_CELERY_BACKEND`: where task results go back to the run; default `rpc://`
  (replies over the same RabbitMQ connection, no second store).
- `VERDICTS_CELERY_QUEUE`: the queue runs send steps to and workers listen on; default `verdicts`.

The run process and every worker must see the same values (and the same `WAREHOUSE_URL`,
`VERDICTS_RAW_DIR`, `VERDICTS_REPORTS_DIR`): the worker rebuilds the code location to run a step.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

EXECUTORS = ("in_process", "celery")
DEFAULT_BROKER = "pyamqp://guest:guest@127.0.0.1:5672//"
DEFAULT_QUEUE = "verdicts"


@dataclass(frozen=True)
class CelerySettings:
    broker: str
    backend: str
    queue: str

    def executor_config(self) -> dict:
        """The `celery` executor's config; `verdicts worker` builds its app from the same dict."""
        return {
            "broker": self.broker,
            "backend": self.backend,
            "config_source": {
                "task_default_queue": self.queue,
                # A task is acknowledged when it has finished, not when a worker took it, and a
                # worker that dies mid-step hands the task back: the broker redelivers it to
                # another worker, whose write replaces the partition the dead one left unwritten.
                "task_acks_late": True,
                "task_reject_on_worker_lost": True,
                "worker_prefetch_multiplier": 1,
            },
        }


def executor_name() -> str:
    name = os.environ.get("VERDICTS_EXECUTOR", "in_process").strip() or "in_process"
    if name not in EXECUTORS:
        raise ValueError(f"VERDICTS_EXECUTOR={name!r}: expected one of {', '.join(EXECUTORS)}")
    return name


def celery_settings() -> CelerySettings:
    return CelerySettings(
        broker=os.environ.get("VERDICTS_CELERY_BROKER") or DEFAULT_BROKER,
        backend=os.environ.get("VERDICTS_CELERY_BACKEND") or "rpc://",
        queue=os.environ.get("VERDICTS_CELERY_QUEUE") or DEFAULT_QUEUE,
    )


def batch_executor():
    """The executor of the daily jobs and of backfills launched from the UI.

    In-process by default: a fresh process per step costs seconds and buys nothing on one
    machine. With Celery, every step of a run goes to the workers, so the days of a backfill
    spread over as many worker processes as there are.
    """
    from dagster import in_process_executor

    if executor_name() == "in_process":
        return in_process_executor
    from dagster_celery import celery_executor

    return celery_executor.configured(celery_settings().executor_config(), name="celery")


LIVE_RUN_TAGS = {"verdicts/lane": "live", "dagster/priority": "10"}
"""Tags of the live jobs' runs. The queue (dagster.yaml) caps backfill runs below the total, so a
slot stays free for these, and their priority puts them ahead of any queued backfill run."""
