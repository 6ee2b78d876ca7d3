"""The Celery app that `verdicts worker` runs: dagster-celery's step task, configured from
the same environment settings as the runs' executor (orchestration.execution)."""

from dagster._core.execution.retries import RetryMode
from dagster_celery.executor import CeleryExecutor
from dagster_celery.make_app import make_app
from dagster_celery.tasks import create_task

from orchestration.execution import celery_settings

_config = celery_settings().executor_config()
app = make_app(CeleryExecutor(retries=RetryMode(RetryMode.DISABLED), **_config).app_args())
execute_plan = create_task(app)
