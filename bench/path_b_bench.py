#!/usr/bin/env python3
"""Path B benchmark: binlog -> Kafka -> Iceberg end to end, on the local stack (`./scripts/services up`).

`binberg source` (exactly-once: Kafka transactions) and `binberg sink` run as two processes beside
the broker and the registry. The same two figures as bench/path_a_bench.py, printed, never asserted:

1. Throughput (catch-up): EVENTS row events are written while source and sink are stopped; both
   are then started and timed until the sink's Iceberg snapshots hold the source's last GTID.
2. Freshness at a fixed rate: for each source transaction, (timestamp of the first sink snapshot
   whose binberg.sink.newest-gtid is at or past it) - (the time its COMMIT returned).

Usage: bench/path_b_bench.py [--events N] [--repeat K] [--rate R] [--seconds S] [--interval-ms MS] [--partitions P]
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import path_a_bench  # noqa: E402


class PathBBench(path_a_bench.Bench):
    gtid_property = "binberg.sink.newest-gtid"
    commands = ("source", "sink")

    def config_text(self, args):
        stack = json.loads((self.services / "services.json").read_text())
        database = self.mariadb["database"]
        topics = ", ".join(f'"{self.prefix}.{database}.{self.prefix}_{t}"' for t in ("accounts", "orders"))
        return super().config_text(args) + f"""
[kafka]
bootstrap_servers = "{stack['kafka']['bootstrap_servers']}"
topic_prefix = "{self.prefix}"
partitions = {args.partitions}
source_name = "{self.prefix}"

[registry]
url = "{stack['registry']['url']}"

[sink]
topics = [{topics}]
group_id = "{self.prefix}-sink"
"""


if __name__ == "__main__":
    parser = path_a_bench.make_parser(__doc__)
    parser.add_argument("--partitions", type=int, default=1, help="partitions of each table topic")
    arguments = parser.parse_args()
    path_a_bench.run(PathBBench(arguments), arguments, "path B")
