"""Resources of the asset layer that are not storage: where reports are written."""

from __future__ import annotations

from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field


class ReportsResource(ConfigurableResource):
    root: str = Field(description="Folder for report files, one sub-folder per domain and partition")
    admin_url: str = Field("", description="Address of `verdicts serve` (VERDICTS_ADMIN_URL): report assets link its pages; "
                                           "empty: they say how to get the link")

    def folder(self, domain: str, partition_key: str) -> Path:
        path = Path(self.root) / domain / partition_key
        path.mkdir(parents=True, exist_ok=True)
        return path
