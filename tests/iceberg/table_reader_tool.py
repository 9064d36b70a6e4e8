"""Independent readers of a binberg-written table, for the interop tests.

  rows pyiceberg <catalog-uri> <warehouse> <namespace.table>   rows via pyiceberg's SqlCatalog
  rows duckdb <metadata.json>                                  rows via DuckDB's iceberg_scan
  digest pyiceberg|duckdb ...                                  the same table's canonical digest

rows prints {"count": N, "rows": [...]} with every row as a list of canonical strings in column
order, so the C++ side can build the same list from its own reader and compare exactly. digest
prints {"count": N, "digest": HEX}: the SHA-256 of the rows' canonical encodings, computed here
from the specification in src/iceberg/canonical_row.h, independently of binberg's code.

Canonical strings: null -> null, int/long -> decimal digits, float/double -> the binary64 bits as 16 hex digits, most significant first (exact), decimal -> plain digits with the
scale's fraction, string -> itself, bytes/fixed/uuid -> lowercase hex, date -> days since epoch,
time -> microseconds since midnight, timestamp/timestamptz -> microseconds since epoch, boolean ->
true/false.
"""

import datetime
import decimal
import hashlib
import json
import struct
import sys
import uuid

EPOCH = datetime.datetime(1970, 1, 1)
EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def canonical(value):
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return struct.pack(">d", value).hex()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return value.bytes.hex()
    if isinstance(value, datetime.datetime):
        delta = value - (EPOCH_UTC if value.tzinfo is not None else EPOCH)
        return str((delta.days * 86400 + delta.seconds) * 1000000 + delta.microseconds)
    if isinstance(value, datetime.date):
        return str((value - EPOCH.date()).days)
    if isinstance(value, datetime.time):
        return str(((value.hour * 60 + value.minute) * 60 + value.second) * 1000000 + value.microsecond)
    raise TypeError(f"no canonical form for {type(value).__name__}")


def canonical_rows(arrow_table):
    return [[canonical(v) for v in row.values()] for row in arrow_table.to_pylist()]


def row_encoding(row):
    parts = []
    for text in row:
        if text is None:
            parts.append(b"-")
        else:
            data = text.encode("utf-8")
            parts.append(str(len(data)).encode() + b":" + data)
    return b"".join(parts) + b"\n"


def emit(mode, arrow_table):
    rows = canonical_rows(arrow_table)
    if mode == "rows":
        print(json.dumps({"count": len(rows), "rows": rows}))
    else:
        digest = hashlib.sha256(b"".join(sorted(row_encoding(row) for row in rows))).hexdigest()
        print(json.dumps({"count": len(rows), "digest": digest}))


def main():
    mode = sys.argv[1] if len(sys.argv) >= 2 and sys.argv[1] in ("rows", "digest") else None
    reader = sys.argv[2] if mode and len(sys.argv) >= 3 else None
    if reader == "pyiceberg":
        from pyiceberg.catalog.sql import SqlCatalog
        uri, warehouse, identifier = sys.argv[3:6]
        catalog = SqlCatalog("binberg", uri=uri, warehouse=warehouse)
        emit(mode, catalog.load_table(identifier).scan().to_arrow())
    elif reader == "duckdb":
        import tempfile

        import duckdb
        from duckdb_extensions import import_extension
        # Install the pinned extension wheels into a throwaway directory, never from the network;
        # each copy is about 60 MB, so it goes when the read is done.
        with tempfile.TemporaryDirectory(prefix="binberg-duckdb-") as extensions:
            connection = duckdb.connect()
            connection.execute(f"SET extension_directory = '{extensions}'")
            connection.execute("SET autoinstall_known_extensions = false")
            for name in ("avro", "iceberg"):
                import_extension(name, con=connection)
                connection.execute(f"LOAD {name}")
            table = connection.execute("SELECT * FROM iceberg_scan(?)", [sys.argv[3]]).to_arrow_table()
            connection.close()
        emit(mode, table)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
