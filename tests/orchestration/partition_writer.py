"""A separate process writing partitions with the warehouse resource, as a worker would.

    python -m tests.orchestration.partition_writer URL TABLE DAY[,DAY...] [--start-at EPOCH] [--hold S]

`--start-at` makes several writers begin at the same moment; `--hold` keeps each write's
transaction open that long after its delete (prints `holding DAY` first), so writers overlap
for certain, or a test can kill the process mid-write.
"""

from __future__ import annotations

import argparse
import sys
import time

import pandas as pd

from assets.resources.warehouse import WarehouseResource

ROWS = 3000


def day_frame(day: str, version: str = "v1") -> pd.DataFrame:
    """A verdict-like partition: ids, a verdict, JSON evidence, an event time without offset."""
    n = ROWS
    return pd.DataFrame({
        "row_id": [f"{day}-{i:05d}" for i in range(n)],
        "verdict": [("one_shot", "exact_retry", "reworded_retry")[i % 3] for i in range(n)],
        "score": [i / 7 for i in range(n)],
        "evidence": [[{"dataset": "events", "field": "input_text", "value": f"{version}:{i}"}] for i in range(n)],
        "sent_at": [f"{day}T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}" for i in range(n)],
        "version": version,
    })


def write(url: str, table: str, day: str, version: str = "v1") -> int:
    return WarehouseResource(url=url).replace_partition(
        table, day, day_frame(day, version), json_columns=("evidence",), time_columns=("sent_at",),
        index_columns=("row_id",))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("table")
    p.add_argument("days")
    p.add_argument("--version", default="v1")
    p.add_argument("--start-at", type=float, default=0.0)
    p.add_argument("--hold", type=float, default=0.0)
    args = p.parse_args()
    if args.hold:
        original = WarehouseResource._copy

        def held(self, conn, table, frame):
            print(f"holding {frame['partition_key'].iloc[0]}", flush=True)
            time.sleep(args.hold)
            original(self, conn, table, frame)

        WarehouseResource._copy = held
    WarehouseResource(url=args.url).engine.connect().close()  # connect before the start line
    time.sleep(max(0.0, args.start_at - time.time()))
    for day in args.days.split(","):
        write(args.url, args.table, day, args.version)
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
