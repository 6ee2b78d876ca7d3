"""Schedules: the nightly evaluation of yesterday's partition (Asia/Seoul)."""

from dagster import DefaultScheduleStatus, build_schedule_from_partitioned_job

from orchestration.jobs import nightly_job

# Targets the latest complete day of the job's daily partitions, i.e. yesterday in Seoul.
nightly_schedule = build_schedule_from_partitioned_job(
    nightly_job,
    name="nightly_schedule",
    hour_of_day=2,
    minute_of_hour=30,
    default_status=DefaultScheduleStatus.RUNNING,
)
