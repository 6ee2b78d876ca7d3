"""Resources of the asset layer that are not storage: where reports are written."""

from __future__ import annotations

from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field


class ReportsResource(ConfigurableResource):
    root: str = Field(description="Folder for report files, one sub-folder per domain and partition")

    def folder(self, domain: str, partition_key: str) -> Path:
        path = Path(self.root) / domain / partition_key
        path.mkdir(parents=True, exist_ok=True)
        return path
