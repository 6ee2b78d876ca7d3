"""Dagster wiring: definitions, resources, partitions, jobs, schedules and the CLI."""
