"""Daily partitions: days in Asia/Seoul."""

from dagster import DailyPartitionsDefinition

DAILY = DailyPartitionsDefinition(start_date="2026-09-01", timezone="Asia/Seoul")
