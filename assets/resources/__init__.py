"""Dagster resources of the asset layer: raw files, the warehouse, stored review decisions; chosen by environment in `orchestration.definitions`."""
