"""Independent Avro reference (fastavro) for binberg's avro tests.

Values cross the process boundary as "plain JSON": records are objects keyed by field name, unions are
the branch's value, enums their symbol, bytes and fixed "hex:<hex digits>". Logical types stay in their
underlying representation so both sides compare the encoded values themselves.

  fastavro_tool.py canonical SCHEMA_FILE             -> {"canonical": ..., "crc64": hex, "sha256": hex}
  fastavro_tool.py read AVRO_FILE OUT_JSON           -> {"metadata": {...}, "writer_schema": ..., "records": [...]}
  fastavro_tool.py write SCHEMA_FILE RECORDS_JSON CODEC OUT_AVRO [METADATA_JSON]
"""

import json
import sys

import fastavro
import fastavro._read_py
import fastavro._write_py
import fastavro.logical_readers
import fastavro.logical_writers
import fastavro.read
import fastavro.write
from fastavro.schema import fingerprint, to_parsing_canonical_form

# Compare raw encodings: no conversion to datetime/Decimal/UUID in either direction.
for logical in (fastavro.read.LOGICAL_READERS, fastavro.write.LOGICAL_WRITERS,
                fastavro.logical_readers.LOGICAL_READERS, fastavro.logical_writers.LOGICAL_WRITERS):
    logical.clear()

try:
    import cramjam  # noqa: F401  (fastavro's own snappy dependency)

    snappy_reader, snappy_writer = fastavro.reader, fastavro.writer
except ImportError:
    # Without cramjam, pyarrow's snappy (Google's library) stands in, plugged into fastavro's pure-Python
    # reader and writer, which keep doing the container framing and the CRC.
    import pyarrow

    def _snappy_decompress(data):
        length, shift = 0, 0
        for byte in data:  # the raw snappy preamble: uncompressed length as a varint
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        return pyarrow.decompress(data, length, codec="snappy", asbytes=True)

    fastavro._read_py.snappy_decompress = _snappy_decompress
    fastavro._read_py.BLOCK_READERS["snappy"] = fastavro._read_py.snappy_read_block
    fastavro._write_py.snappy_compress = lambda data: pyarrow.compress(data, codec="snappy", asbytes=True)
    fastavro._write_py.BLOCK_WRITERS["snappy"] = fastavro._write_py.snappy_write_block
    snappy_reader, snappy_writer = fastavro._read_py.reader, fastavro._write_py.writer


def to_plain(value):
    if isinstance(value, bytes):
        return "hex:" + value.hex()
    if isinstance(value, dict):
        return {key: to_plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [to_plain(item) for item in value]
    return value


def from_plain(value):
    if isinstance(value, str) and value.startswith("hex:"):
        return bytes.fromhex(value[4:])
    if isinstance(value, dict):
        return {key: from_plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [from_plain(item) for item in value]
    return value


def canonical(schema_file):
    with open(schema_file) as f:
        schema = json.load(f)
    form = to_parsing_canonical_form(schema)
    print(json.dumps({
        "canonical": form,
        "crc64": fingerprint(form, "CRC-64-AVRO"),
        "sha256": fingerprint(form, "SHA-256"),
    }))


def read(avro_file, out_json):
    with open(avro_file, "rb") as f:
        codec = fastavro.reader(f).metadata.get("avro.codec")
        f.seek(0)
        reader = (snappy_reader if codec == "snappy" else fastavro.reader)(f)
        result = {
            "metadata": reader.metadata,
            "writer_schema": reader.writer_schema,
            "records": [to_plain(record) for record in reader],
        }
    with open(out_json, "w") as f:
        json.dump(result, f)


def write(schema_file, records_json, codec, out_avro, metadata_json=None):
    with open(schema_file) as f:
        schema = fastavro.parse_schema(json.load(f))
    with open(records_json) as f:
        records = [from_plain(record) for record in json.load(f)]
    metadata = None
    if metadata_json:
        with open(metadata_json) as f:
            metadata = json.load(f)
    with open(out_avro, "wb") as f:
        # A small sync interval makes fastavro write several blocks.
        write = snappy_writer if codec == "snappy" else fastavro.writer
        write(f, schema, records, codec=codec, sync_interval=256, metadata=metadata)


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    {"canonical": canonical, "read": read, "write": write}[command](*args)
