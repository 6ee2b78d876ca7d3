"""Each domain's own part of the verdict board: its sections, its layout where it departs from the default, and its `BOARD`."""
