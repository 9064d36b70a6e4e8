"""pyiceberg's view of Iceberg table metadata, for binberg's interop tests.

  describe <metadata.json>  parse the file with pyiceberg and print what pyiceberg understood
  create <metadata.json>    write table metadata made by pyiceberg and print its description

Descriptions use the spec's JSON member names and type strings (decimal without the space pyiceberg
prints), so the C++ side can build the same description from its own model and compare.
"""

import json
import sys

from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import TableMetadataUtil, new_table_metadata
from pyiceberg.table.refs import SnapshotRefType
from pyiceberg.table.snapshots import Operation, Snapshot, Summary
from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder
from pyiceberg.table.update import AddSnapshotUpdate, SetSnapshotRefUpdate, update_table_metadata
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform, TruncateTransform
from pyiceberg.types import (
    BinaryType, BooleanType, DateType, DecimalType, DoubleType, FixedType, FloatType, IntegerType, ListType, LongType,
    MapType, NestedField, StringType, StructType, TimestampType, TimestamptzType, TimeType, UUIDType)


def type_json(t):
    if isinstance(t, StructType):
        return {"type": "struct", "fields": [field_json(f) for f in t.fields]}
    if isinstance(t, ListType):
        return {"type": "list", "element-id": t.element_id, "element-required": t.element_required,
                "element": type_json(t.element_type)}
    if isinstance(t, MapType):
        return {"type": "map", "key-id": t.key_id, "key": type_json(t.key_type), "value-id": t.value_id,
                "value-required": t.value_required, "value": type_json(t.value_type)}
    return str(t).replace(" ", "")


def field_json(f):
    described = {"id": f.field_id, "name": f.name, "required": f.required, "type": type_json(f.field_type)}
    if f.doc is not None:
        described["doc"] = f.doc
    return described


def describe(m):
    return {
        "format-version": m.format_version,
        "table-uuid": str(m.table_uuid),
        "location": m.location,
        "last-sequence-number": m.last_sequence_number,
        "last-updated-ms": m.last_updated_ms,
        "last-column-id": m.last_column_id,
        "current-schema-id": m.current_schema_id,
        "schemas": [{"schema-id": s.schema_id, "identifier-field-ids": list(s.identifier_field_ids),
                     "fields": [field_json(f) for f in s.fields]} for s in m.schemas],
        "default-spec-id": m.default_spec_id,
        "last-partition-id": m.last_partition_id,
        "partition-specs": [{"spec-id": p.spec_id, "fields": [
            {"source-id": f.source_id, "field-id": f.field_id, "name": f.name, "transform": str(f.transform)}
            for f in p.fields]} for p in m.partition_specs],
        "default-sort-order-id": m.default_sort_order_id,
        "sort-orders": [{"order-id": o.order_id, "fields": [
            {"transform": str(f.transform), "source-id": f.source_id, "direction": f.direction.value,
             "null-order": f.null_order.value} for f in o.fields]} for o in m.sort_orders],
        "properties": dict(m.properties),
        "current-snapshot-id": m.current_snapshot_id,
        "snapshots": [{"snapshot-id": s.snapshot_id, "parent-snapshot-id": s.parent_snapshot_id,
                       "sequence-number": s.sequence_number, "timestamp-ms": s.timestamp_ms,
                       "manifest-list": s.manifest_list,
                       "summary": {"operation": s.summary.operation.value, **s.summary.additional_properties},
                       "schema-id": s.schema_id} for s in m.snapshots],
        "refs": {name: {"snapshot-id": r.snapshot_id, "type": r.snapshot_ref_type.value} for name, r in m.refs.items()},
        "snapshot-log": [{"timestamp-ms": e.timestamp_ms, "snapshot-id": e.snapshot_id} for e in m.snapshot_log],
        "metadata-log": [{"timestamp-ms": e.timestamp_ms, "metadata-file": e.metadata_file} for e in m.metadata_log],
    }


def create(location):
    schema = Schema(
        NestedField(1, "id", LongType(), required=True, doc="row key"),
        NestedField(2, "amount", DecimalType(12, 3), required=False),
        NestedField(3, "created_at", TimestamptzType(), required=True),
        NestedField(4, "point", StructType(NestedField(5, "x", IntegerType(), required=True),
                                           NestedField(6, "label", StringType(), required=False)), required=True),
        NestedField(7, "tags", ListType(8, StringType(), element_required=False), required=False),
        NestedField(9, "attrs", MapType(10, StringType(), 11, BinaryType(), value_required=True), required=False),
        NestedField(12, "uid", UUIDType(), required=False),
        NestedField(13, "code", FixedType(8), required=False),
        NestedField(14, "day", DateType(), required=False),
        NestedField(15, "at", TimeType(), required=False),
        NestedField(16, "local", TimestampType(), required=False),
        NestedField(17, "flag", BooleanType(), required=False),
        NestedField(18, "f", FloatType(), required=False),
        NestedField(19, "d", DoubleType(), required=False),
        identifier_field_ids=[1, 5],
    )
    spec = PartitionSpec(PartitionField(3, 1000, DayTransform(), "created_day"),
                         PartitionField(1, 1001, BucketTransform(8), "id_bucket"),
                         PartitionField(6, 1002, TruncateTransform(2), "label_trunc"))
    order = SortOrder(SortField(1, IdentityTransform(), SortDirection.DESC, NullOrder.NULLS_LAST))
    metadata = new_table_metadata(schema, spec, order, location, {"owner": "pyiceberg"})
    parent = None
    for sequence_number, snapshot_id in ((1, 7001), (2, 7002)):
        snapshot = Snapshot(snapshot_id=snapshot_id, parent_snapshot_id=parent, sequence_number=sequence_number,
                            timestamp_ms=1700000000000 + sequence_number, manifest_list=f"{location}/metadata/snap-{snapshot_id}.avro",
                            summary=Summary(Operation.APPEND, **{"added-records": str(10 * sequence_number)}),
                            schema_id=0)
        metadata = update_table_metadata(metadata, (
            AddSnapshotUpdate(snapshot=snapshot),
            SetSnapshotRefUpdate(ref_name="main", type=SnapshotRefType.BRANCH, snapshot_id=snapshot_id)),
            metadata_location=f"{location}/metadata/0000{sequence_number - 1}-previous.metadata.json")
        parent = snapshot_id
    return metadata


def main():
    command, path = sys.argv[1], sys.argv[2]
    if command == "describe":
        with open(path) as f:
            metadata = TableMetadataUtil.parse_raw(f.read())
    else:
        metadata = create(sys.argv[3])
        with open(path, "w") as f:
            f.write(metadata.model_dump_json())
    print(json.dumps(describe(metadata), sort_keys=True))


if __name__ == "__main__":
    main()
