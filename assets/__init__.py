"""Dagster assets, one module per domain; shared machinery in `assets.common`."""
