#!/usr/bin/env python3
"""Path parity: do two binberg catalogs hold the same tables? (the demo's path A vs path B)

  parity.py [--wait SECONDS] DIR_A DIR_B DATABASE TABLE...

Each DIR holds a binberg SQL catalog (catalog.db) and its warehouse. For each TABLE, pyiceberg reads
DATABASE.TABLE in both and computes the SHA-256 digest of the canonical rows (the independent
implementation in tests/iceberg/table_reader_tool.py), and compares the streamed event ids of
DATABASE.TABLE_changelog (the initial snapshots' rows are left out: each path takes its own).
With --wait, the second catalog is read again once a second until it matches, or the time is up
(it may still be catching up). Prints one line a table; exit 0 when every table is equal.
"""

import argparse
import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "iceberg"))
from table_reader_tool import canonical_rows, row_encoding  # noqa: E402


def open_catalog(directory):
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog("binberg", uri=f"sqlite:///{directory}/catalog.db", warehouse=f"{directory}/warehouse")


def digest(catalog, identifier):
    rows = canonical_rows(catalog.load_table(identifier).scan().to_arrow())
    return len(rows), hashlib.sha256(b"".join(sorted(row_encoding(row) for row in rows))).hexdigest()


def streamed_events(catalog, identifier):
    ids = catalog.load_table(identifier).scan(selected_fields=("_event_id",)).to_arrow().column("_event_id")
    return {event for event in ids.to_pylist() if not event.startswith("snapshot:")}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wait", type=float, default=0, help="seconds to wait for the second catalog")
    parser.add_argument("dir_a")
    parser.add_argument("dir_b")
    parser.add_argument("database")
    parser.add_argument("tables", nargs="+")
    args = parser.parse_args()
    a, b = open_catalog(args.dir_a), open_catalog(args.dir_b)
    names = [f"{args.database}.{table}" for table in args.tables]
    wanted = {name: digest(a, name) for name in names}
    deadline = time.monotonic() + args.wait
    while True:
        try:
            got = {name: digest(b, name) for name in names}
        except Exception as error:  # its tables may not exist yet
            got = {"error": str(error)}
        if got == wanted or time.monotonic() >= deadline:
            break
        time.sleep(1)
    equal = True
    for name in names:
        rows_a, sha_a = wanted[name]
        rows_b, sha_b = got.get(name, ("?", "?"))
        events_a = streamed_events(a, name + "_changelog")
        try:
            events_b = streamed_events(b, name + "_changelog")
        except Exception:
            events_b = set()
        same = (rows_a, sha_a) == (rows_b, sha_b) and events_a == events_b
        equal = equal and same
        print(f"    {name}: {'EQUAL' if same else 'DIFFERENT'}  A {rows_a} rows sha256 {sha_a[:16]}... "
              f"{len(events_a)} streamed events | B {rows_b} rows sha256 {str(sha_b)[:16]}... "
              f"{len(events_b)} streamed events")
    if "error" in got:
        print(f"    second catalog: {got['error']}")
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())
