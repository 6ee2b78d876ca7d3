"""Shared pieces of the asset tests: the test resources, materialising day partitions, and the oracle rows."""

from __future__ import annotations

import json
from pathlib import Path

from dagster import DagsterInstance, materialize

from assets.resources.reports import ReportsResource
from assets.resources.raw_files import RawFilesResource
from assets.resources.warehouse import WarehouseResource
from tests.conftest import FIXTURES, SEEDS


def resources_in(tmp_path: Path, url: str | None = None, raw_root: Path = SEEDS) -> dict:
    """Warehouse (SQLite under tmp_path unless url), raw files from raw_root, reports under tmp_path."""
    return {
        "warehouse": WarehouseResource(url=url or f"sqlite:///{tmp_path / 'wh.sqlite'}"),
        "raw_files": RawFilesResource(root=str(raw_root)),
        "reports": ReportsResource(root=str(tmp_path / "reports")),
    }


def materialise_day(assets, resources: dict, day: str, instance=None, **options):
    """Materialise the assets for one day's partition, on a fresh ephemeral instance unless one is given."""
    return materialize(assets, resources=resources, partition_key=day, instance=instance or DagsterInstance.ephemeral(),
                       **options)


def materialise_in_turn(resources: dict, run_day, days) -> WarehouseResource:
    """run_day(resources, day, instance) for each day in order on one instance, each a success; the warehouse."""
    instance = DagsterInstance.ephemeral()
    for day in days:
        assert run_day(resources, day, instance).success
    return resources["warehouse"]


def oracle_rows(domain: str) -> list[dict]:
    """Every row of the domain's hand-worked oracle, tests/fixtures/<domain>/expected.jsonl."""
    return [json.loads(line) for line in (FIXTURES / domain / "expected.jsonl").read_text(encoding="utf-8").splitlines()]
