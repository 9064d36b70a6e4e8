"""pyiceberg's and fastavro's view of Iceberg manifests, for binberg's manifest interop tests.

  describe-list <manifest-list.avro>   read the list and every manifest with pyiceberg; print them
  fastavro <file.avro>                 read any Avro file with fastavro (logical types left raw);
                                       print the header metadata, writer schema and records
  make-table <dir>                     create a table with pyiceberg's SqlCatalog (SQLite under
                                       DIR), append and delete rows; print the current snapshot's
                                       manifest list and pyiceberg's description of it
  to-bytes <cases.json>                pyiceberg.conversions.to_bytes of [{"type", "value"}...]

Descriptions (shared with manifest_interop_test.cc): bytes are hex strings; partition values are
plain JSON with {"bytes": hex}, {"uuid": text} and {"unscaled": text, "scale": n} for binary,
uuid and decimal values; absent maps and lists describe as empty ones.
"""

import datetime
import decimal
import json
import sys
import uuid

import fastavro
import fastavro.logical_readers
import fastavro.read


def hex_or_none(value):
    return None if value is None else value.hex()


def partition_value(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, uuid.UUID):
        return {"uuid": str(value)}
    if isinstance(value, decimal.Decimal):
        sign, digits, exponent = value.as_tuple()
        unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
        return {"unscaled": str(unscaled), "scale": -exponent}
    if isinstance(value, datetime.datetime):  # not expected: pyiceberg keeps micros as int
        raise TypeError(f"unexpected datetime partition value {value!r}")
    if isinstance(value, datetime.date):
        return (value - datetime.date(1970, 1, 1)).days
    raise TypeError(f"unexpected partition value {value!r}")


def int_map(value, convert=lambda v: v):
    return {str(key): convert(item) for key, item in (value or {}).items()}


def describe_data_file(f):
    return {
        "content": int(f.content),
        "file_path": f.file_path,
        "file_format": str(f.file_format.value if hasattr(f.file_format, "value") else f.file_format),
        "partition": [partition_value(v) for v in f.partition],
        "record_count": f.record_count,
        "file_size_in_bytes": f.file_size_in_bytes,
        "column_sizes": int_map(f.column_sizes),
        "value_counts": int_map(f.value_counts),
        "null_value_counts": int_map(f.null_value_counts),
        "nan_value_counts": int_map(f.nan_value_counts),
        "lower_bounds": int_map(f.lower_bounds, bytes.hex),
        "upper_bounds": int_map(f.upper_bounds, bytes.hex),
        "key_metadata": hex_or_none(f.key_metadata),
        "split_offsets": list(f.split_offsets or []),
        "equality_ids": list(f.equality_ids or []),
        "sort_order_id": f.sort_order_id,
    }


def describe_manifest(m, io):
    return {
        "manifest_path": m.manifest_path,
        "manifest_length": m.manifest_length,
        "partition_spec_id": m.partition_spec_id,
        "content": int(m.content),
        "sequence_number": m.sequence_number,
        "min_sequence_number": m.min_sequence_number,
        "added_snapshot_id": m.added_snapshot_id,
        "added_files_count": m.added_files_count,
        "existing_files_count": m.existing_files_count,
        "deleted_files_count": m.deleted_files_count,
        "added_rows_count": m.added_rows_count,
        "existing_rows_count": m.existing_rows_count,
        "deleted_rows_count": m.deleted_rows_count,
        "partitions": [{"contains_null": p.contains_null, "contains_nan": p.contains_nan,
                        "lower_bound": hex_or_none(p.lower_bound), "upper_bound": hex_or_none(p.upper_bound)}
                       for p in (m.partitions or [])],
        "key_metadata": hex_or_none(m.key_metadata),
        "entries": [{
            "status": int(e.status),
            "snapshot_id": e.snapshot_id,
            "sequence_number": e.sequence_number,
            "file_sequence_number": e.file_sequence_number,
            "data_file": describe_data_file(e.data_file),
        } for e in m.fetch_manifest_entry(io, discard_deleted=False)],
    }


def describe_list(path):
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import read_manifest_list
    io = PyArrowFileIO()
    return [describe_manifest(m, io) for m in read_manifest_list(io.new_input(path))]


def to_plain(value):
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, dict):
        return {key: to_plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [to_plain(item) for item in value]
    return value


def read_fastavro(path):
    # Raw values: no conversion to datetime/Decimal/UUID, so both sides compare what is encoded.
    for logical in (fastavro.read.LOGICAL_READERS, fastavro.logical_readers.LOGICAL_READERS):
        logical.clear()
    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        return {
            "metadata": {k: v for k, v in reader.metadata.items() if not k.startswith("avro.")},
            "codec": reader.metadata.get("avro.codec"),
            "writer_schema": reader.writer_schema,
            "records": [to_plain(record) for record in reader],
        }


def make_table(directory):
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.expressions import LessThan
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DateType, DoubleType, LongType, NestedField, StringType

    catalog = SqlCatalog("interop", uri=f"sqlite:///{directory}/catalog.db", warehouse=f"file://{directory}/warehouse")
    catalog.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "region", StringType(), required=False),
        NestedField(3, "day", DateType(), required=False),
        NestedField(4, "amount", DoubleType(), required=False),
    )
    spec = PartitionSpec(
        PartitionField(2, 1000, IdentityTransform(), "region"),
        PartitionField(3, 1001, IdentityTransform(), "day"),
    )
    # Only identity: pyiceberg needs pyiceberg-core (not in the venv) to write with other transforms.
    table = catalog.create_table("db.events", schema=schema, partition_spec=spec)
    arrow_schema = pa.schema([("id", pa.int64()), ("region", pa.string()), ("day", pa.date32()),
                              ("amount", pa.float64())])
    day = datetime.date.fromordinal
    epoch = datetime.date(1970, 1, 1).toordinal()
    table.append(pa.Table.from_pylist([
        {"id": 1, "region": "eu", "day": day(epoch + 19_000), "amount": 1.5},
        {"id": 2, "region": "eu", "day": day(epoch + 19_000), "amount": -2.25},
        {"id": 3, "region": "us", "day": day(epoch + 19_001), "amount": None},
        {"id": 4, "region": None, "day": None, "amount": 4.0},
    ], schema=arrow_schema))
    table.append(pa.Table.from_pylist([
        {"id": 5, "region": "apac", "day": day(epoch + 19_002), "amount": 5.5},
        {"id": 6, "region": "us", "day": day(epoch + 19_001), "amount": 6.0},
    ], schema=arrow_schema))
    table.delete(LessThan("id", 2))  # rewrites the file holding ids 1 and 2: DELETED + ADDED entries
    table = catalog.load_table("db.events")
    snapshot = table.current_snapshot()
    return {
        "manifest_list": snapshot.manifest_list,
        "snapshot_id": snapshot.snapshot_id,
        "sequence_number": snapshot.sequence_number,
        "manifests": describe_list(snapshot.manifest_list),
    }


def to_bytes_cases(path):
    from pyiceberg.conversions import to_bytes
    from pyiceberg.types import (
        BinaryType, BooleanType, DateType, DecimalType, DoubleType, FixedType, FloatType, IntegerType, LongType,
        StringType, TimestampType, TimestamptzType, TimeType, UUIDType)
    simple = {"boolean": BooleanType(), "int": IntegerType(), "long": LongType(), "float": FloatType(),
              "double": DoubleType(), "date": DateType(), "time": TimeType(), "timestamp": TimestampType(),
              "timestamptz": TimestamptzType(), "string": StringType(), "uuid": UUIDType(), "binary": BinaryType()}
    with open(path) as f:
        cases = json.load(f)
    results = []
    for case in cases:
        name, value = case["type"], case["value"]
        if name.startswith("decimal("):
            precision, scale = map(int, name[len("decimal("):-1].split(","))
            iceberg_type, python_value = DecimalType(precision, scale), decimal.Decimal(value)
        elif name.startswith("fixed["):
            iceberg_type, python_value = FixedType(int(name[len("fixed["):-1])), bytes.fromhex(value)
        else:
            iceberg_type = simple[name]
            python_value = value
            if name == "uuid":
                python_value = uuid.UUID(value)
            elif name == "binary":
                python_value = bytes.fromhex(value)
            elif name == "float":
                python_value = float(value)
        results.append(to_bytes(iceberg_type, python_value).hex())
    return results


if __name__ == "__main__":
    command, argument = sys.argv[1:]
    result = {"describe-list": describe_list, "fastavro": read_fastavro, "make-table": make_table,
              "to-bytes": to_bytes_cases}[command](argument)
    print(json.dumps(result))
