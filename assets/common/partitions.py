"""Daily partitions: days in Asia/Seoul; a judged day waits for the days its look-ahead reads."""

from functools import lru_cache

from dagster import DailyPartitionsDefinition

DAILY = DailyPartitionsDefinition(start_date="2026-09-01", timezone="Asia/Seoul")


@lru_cache(maxsize=None)
def judged_partitions(after: int) -> DailyPartitionsDefinition:
    """Daily partitions ending `after` days before the raw ones: the days whose look-ahead is complete."""
    return DailyPartitionsDefinition(
        start_date=DAILY.start.strftime("%Y-%m-%d"), timezone=DAILY.timezone, end_offset=DAILY.end_offset - after
    )
