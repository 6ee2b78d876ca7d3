"""The Celery app that `verdicts worker` runs: dagster-celery's step task, configured from
the same environment settings as the runs' executor (orchestration.execution)."""

from dagster_celery.executor import CeleryExecutor
from dagster_celery.make_app import make_app
from dagster_celery.tasks import create_task

from orchestration.execution import celery_settings

app = make_app(CeleryExecutor.for_cli(**celery_settings().executor_config()).app_args())
execute_plan = create_task(app)
