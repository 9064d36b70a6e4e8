"""Damages a binberg changelog table the way a faulty writer could, through pyiceberg (a writer
independent of binberg's own), for reconcile's audit tests.

  append-again <catalog-uri> <warehouse> <namespace.table>
      appends again the first row of the table that is not an initial-copy row (`_op` other than
      'r'), in a new snapshot that carries the current snapshot's binberg.* summary (its source
      position and, for a sink, its offsets), so reconcile compares it as the table's state at
      that position. Prints {"event_id": ..., "snapshot_id": ...}.
"""

import json
import sys


def append_again(uri, warehouse, identifier):
    import pyarrow.compute as pc
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("binberg", uri=uri, warehouse=warehouse)
    table = catalog.load_table(identifier)
    rows = table.scan().to_arrow()
    streamed = rows.filter(pc.not_equal(rows["_op"], "r"))
    if streamed.num_rows == 0:
        sys.exit(f"{identifier}: no row other than the initial copy's to append again")
    summary = table.current_snapshot().summary
    carried = {key: value for key, value in summary.additional_properties.items() if key.startswith("binberg.")}
    table.append(streamed.slice(0, 1), snapshot_properties=carried)
    table = catalog.load_table(identifier)
    print(json.dumps({"event_id": streamed["_event_id"][0].as_py(), "snapshot_id": table.current_snapshot().snapshot_id}))


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "append-again":
        append_again(*sys.argv[2:5])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
