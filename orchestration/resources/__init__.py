"""Resources, chosen by environment in `orchestration.definitions`."""
