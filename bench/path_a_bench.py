#!/usr/bin/env python3
"""Path A benchmark: binlog -> Iceberg end to end, on the local stack (`./scripts/services up`).

Two figures, printed (never asserted: these machines are shared and noisy):

1. Throughput (catch-up): `binberg gen` writes EVENTS row events while `binberg replicate` is
   stopped; replicate is then started and timed until the Iceberg tables record the source's last
   GTID. Row events / seconds = sustained decode + apply + commit rate, process start included.
2. Freshness at a fixed rate: with replicate running, `binberg gen --rate RATE --commit-log` runs
   for SECONDS. For each source transaction, freshness = (timestamp of the first Iceberg snapshot
   whose recorded GTID position contains it) - (the time its COMMIT returned to the generator).
   A snapshot's timestamp is taken just before its catalog transaction, so the figures understate
   visibility by the catalog commit time (a few milliseconds on SQLite).

Usage: bench/path_a_bench.py [--events N] [--repeat K] [--rate R] [--seconds S] [--interval-ms MS]
"""

import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


class Bench:
    gtid_property = "binberg.source.gtid"  # the snapshot summary property that says what a snapshot holds

    def __init__(self, args):
        self.binberg = args.binberg
        services = Path(os.environ.get("BINBERG_SERVICES_DIR", ROOT / ".services"))
        endpoints = json.loads((services / "services.json").read_text())["mariadb"]
        self.mariadb = endpoints
        self.services = services
        self.dir = Path(tempfile.mkdtemp(prefix="path-bench-", dir=services))
        os.chmod(self.dir, 0o700)
        self.prefix = f"bench{os.getpid()}"
        for name, key in (("admin-password", "password"), ("cdc-password", "replication_password")):
            path = self.dir / name
            path.write_text(endpoints[key] + "\n")
            os.chmod(path, 0o600)
        self.config = self.dir / "binberg.toml"
        self.config.write_text(self.config_text(args))
        self.processes = []
        self.wrap = args.wrap.split() if args.wrap else []

    def config_text(self, args):
        endpoints = self.mariadb
        return f"""[source]
host = "{endpoints['host']}"
port = {endpoints['port']}
user = "{endpoints['replication_user']}"
password_file = "{self.dir}/cdc-password"
server_id = {7000 + os.getpid() % 1000}

[capture]
include = ["{endpoints['database']}.{self.prefix}_*"]

[iceberg]
catalog_uri = "sqlite:///{self.dir}/catalog.db"
warehouse = "{self.dir}/warehouse"

[commit]
interval_ms = {args.interval_ms}
"""

    def gen(self, *options):
        m = self.mariadb
        command = [self.binberg, "gen", "--host", m["host"], "--port", str(m["port"]), "--user", m["user"],
                   "--password-file", str(self.dir / "admin-password"), "--database", m["database"],
                   "--prefix", self.prefix, *options]
        with open(self.dir / "gen.log", "a") as log:
            return json.loads(subprocess.run(command, check=True, stdout=subprocess.PIPE, stderr=log).stdout)

    commands = ("replicate",)  # the binberg commands the pipeline runs as

    def start_replicate(self, wrapped=False):
        self.processes = []
        for command in self.commands:
            log = open(self.dir / f"{command}.log", "a")
            self.processes.append(subprocess.Popen(
                [*(self.wrap if wrapped else []), self.binberg, command, "--config", str(self.config)],
                stdout=log, stderr=log))

    def stop_replicate(self, wrapped=False):
        for command, process in zip(self.commands, self.processes):
            process.send_signal(signal.SIGTERM)
            # A wrapper (perf) reports its own status for the signal; only binberg's own is checked.
            if process.wait(timeout=300) != 0 and not wrapped:
                sys.exit(f"{command} exited with {process.returncode}; see {self.dir}/{command}.log")

    def cpu_seconds(self):
        """CPU time (user + system) each pipeline process used so far, by command."""
        ticks = os.sysconf("SC_CLK_TCK")
        used = {}
        for command, process in zip(self.commands, self.processes):
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            used[command] = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
        return used

    def drop_tables(self):
        m = self.mariadb
        subprocess.run(["mariadb", f"--host={m['host']}", f"--port={m['port']}", f"--user={m['user']}", m["database"],
                        "-e", f"DROP TABLE IF EXISTS {self.prefix}_accounts, {self.prefix}_orders"],
                       env={**os.environ, "MYSQL_PWD": m["password"]}, check=True)

    def snapshots(self):
        """Every snapshot of the generator's tables: (timestamp ms, GTID seq_no, summary)."""
        result = []
        with sqlite3.connect(self.dir / "catalog.db") as db:
            rows = db.execute("SELECT table_name, metadata_location FROM iceberg_tables WHERE table_name LIKE ?",
                              (f"{self.prefix}_%",)).fetchall()
        for _, location in rows:
            metadata = json.loads(Path(location.removeprefix("file:")).read_text())
            for snapshot in metadata.get("snapshots", []):
                summary = snapshot["summary"]
                result.append((snapshot["timestamp-ms"], gtid_seq(summary.get(self.gtid_property, "")), summary))
        return result

    def wait_for_gtid(self, seq, timeout_s=600):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if any(s >= seq for _, s, _ in self.snapshots()):
                    return
            except (sqlite3.Error, FileNotFoundError, json.JSONDecodeError):
                pass  # the catalog or a metadata file is being created
            time.sleep(0.05)
        sys.exit(f"{self.commands[-1]} did not reach gtid seq {seq} in {timeout_s} s; see {self.dir}")


def gtid_seq(position):
    """The sequence number of a single-domain MariaDB GTID position ("0-1-123" -> 123)."""
    if not position:
        return -1
    if "," in position:
        sys.exit(f"the benchmark expects one GTID domain, got {position}")
    return int(position.rsplit("-", 1)[1])


def make_parser(description):
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binberg", default=str(ROOT / "build/release/src/cli/binberg"))
    parser.add_argument("--events", type=int, default=500_000, help="row events of the catch-up run")
    parser.add_argument("--rate", type=float, default=10_000, help="row events/s of the freshness run")
    parser.add_argument("--seconds", type=float, default=30, help="length of the freshness run")
    parser.add_argument("--interval-ms", type=int, default=1000, help="replicate's [commit] interval_ms")
    parser.add_argument("--wrap", help="command prefix for the catch-up replicate, e.g. 'perf record -g -o p.data'")
    parser.add_argument("--repeat", type=int, default=1,
                        help="catch-up runs (a shared machine is noisy: the median of several says more)")
    parser.add_argument("--skip-freshness", action="store_true")
    return parser


def run(bench, args, name):
    print(f"{name} benchmark in {bench.dir} (commit interval {args.interval_ms} ms)")

    # Tables and the initial snapshot, then replicate stops so the binlog piles up.
    bench.gen("--create", "--initial-rows", "10000", "--transactions", "1")
    bench.start_replicate()
    created = bench.gen("--transactions", "1", "--seed", "99")
    bench.wait_for_gtid(gtid_seq(created["last_gtid"]))
    bench.stop_replicate()

    # Catch-up runs: each piles up a backlog while the pipeline is stopped, then times it through.
    rates = []
    for attempt in range(args.repeat):
        if attempt:
            bench.stop_replicate(wrapped=bool(bench.wrap))
        load = bench.gen("--events", str(args.events), "--seed", str(1 + attempt), "--rows-per-statement", "50",
                         "--statements", "4", "--multi-table-share", "0.3", "--large-every", "200",
                         "--large-rows", "20000")
        print(f"  backlog: {load['events']['total']} row events in {load['transactions']} transactions "
              f"(gen: {load['events_per_second']:.0f} events/s)")
        started = time.monotonic()
        bench.start_replicate(wrapped=True)
        bench.wait_for_gtid(gtid_seq(load["last_gtid"]))
        elapsed = time.monotonic() - started
        rates.append(load["events"]["total"] / elapsed)
        print(f"  throughput: {rates[-1]:,.0f} row events/s end to end "
              f"({load['events']['total']} events in {elapsed:.2f} s, process start included)")
        if not bench.wrap:  # a wrapper's pid is not binberg's
            used = ", ".join(f"{command} {seconds:.2f} s" for command, seconds in bench.cpu_seconds().items())
            print(f"  cpu time in that run: {used} (on {os.cpu_count()} cores)")
    if len(rates) > 1:
        print(f"  throughput over {len(rates)} runs: median {statistics.median(rates):,.0f}, "
              f"min {min(rates):,.0f}, max {max(rates):,.0f} row events/s")

    if args.skip_freshness:
        bench.stop_replicate(wrapped=bool(bench.wrap))
        bench.drop_tables()
        return
    # Freshness at a fixed rate, replicate caught up and running.
    commit_log = bench.dir / "commits.log"
    steady = bench.gen("--events", str(int(args.rate * args.seconds)), "--rate", str(args.rate), "--seed", "2",
                       "--rows-per-statement", "10", "--commit-log", str(commit_log))
    bench.wait_for_gtid(gtid_seq(steady["last_gtid"]))
    bench.stop_replicate()
    snapshots = sorted((seq, ts) for ts, seq, _ in bench.snapshots())
    freshness_ms = []
    index = 0
    for line in commit_log.read_text().splitlines():
        gtid, committed_us, _ = line.split()
        seq = gtid_seq(gtid)
        while index < len(snapshots) and snapshots[index][0] < seq:
            index += 1
        if index == len(snapshots):
            sys.exit(f"no snapshot holds transaction {gtid}")
        # Commits move forward in time and position, so the first snapshot at or past SEQ is the
        # commit that made the transaction visible.
        freshness_ms.append(snapshots[index][1] - int(committed_us) / 1000)
    achieved = steady["events_per_second"]
    print(f"  freshness at {achieved:,.0f} row events/s ({len(freshness_ms)} transactions over {steady['seconds']:.1f} s): "
          f"p50 {percentile(freshness_ms, 50):.0f} ms, p95 {percentile(freshness_ms, 95):.0f} ms, "
          f"p99 {percentile(freshness_ms, 99):.0f} ms, max {max(freshness_ms):.0f} ms")
    bench.drop_tables()


if __name__ == "__main__":
    arguments = make_parser(__doc__).parse_args()
    run(Bench(arguments), arguments, "path A")
