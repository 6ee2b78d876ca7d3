"""Raw dataset files on disk, read per daily partition.

Two layouts are accepted under `<root>/<domain>/`:
- a folder per day, `<day>/<dataset>.jsonl`: every line of that file belongs to the day;
- flat files, `<dataset>.jsonl`: event datasets are split by the day of their time field
  (see `rules.common.days`); reference datasets (no time field) are read whole, as the
  snapshot every day is judged against.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pandas as pd
from dagster import ConfigurableResource
from pydantic import Field

from rules.common.days import DaySplit, line_days
from rules.common.jsonl import dataset_path, read_raw
from rules.common.raw_chunks import read_raw_chunks


class RawFilesResource(ConfigurableResource):
    root: str = Field(description="Folder holding one sub-folder of raw files per domain")
    timezone: str = "Asia/Seoul"

    def domain_dir(self, domain: str) -> Path:
        return Path(self.root) / domain

    def read_partition(
        self, domain: str, dataset: str, day: str, time_field: str | None, required: tuple[str, ...] = ()
    ) -> pd.DataFrame:
        day_file = dataset_path(self.domain_dir(domain) / day, dataset)
        if day_file.is_file():
            return read_raw(day_file, dataset, required)
        raw = read_raw(dataset_path(self.domain_dir(domain), dataset), dataset, required)
        if time_field is None or raw.empty:
            return raw
        return raw[line_days(raw, time_field, self.timezone) == day].reset_index(drop=True)

    def read_partition_chunks(
        self, domain: str, dataset: str, day: str, time_field: str | None, required: tuple[str, ...] = ()
    ) -> Iterator[pd.DataFrame]:
        """`read_partition`'s rows a block of the file at a time (a file is never held whole); the
        same errors, raised once the file has been read through."""
        day_file = dataset_path(self.domain_dir(domain) / day, dataset)
        if day_file.is_file():
            yield from read_raw_chunks(day_file, dataset, required)
            return
        blocks = read_raw_chunks(dataset_path(self.domain_dir(domain), dataset), dataset, required)
        if time_field is None:
            yield from blocks
            return
        split = DaySplit(time_field, self.timezone)
        for raw in blocks:
            kept = split.lines_of(raw, day)
            if len(kept):
                yield kept
        split.finish()

    def golden_path(self, domain: str) -> Path:
        return self.domain_dir(domain) / "golden.jsonl"
