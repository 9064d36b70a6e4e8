"""Independent reader (fastavro, logical types on) of change envelopes that binberg wrote.

  envelope_reader.py AVRO_FILE -> JSON list of records: decimals as their decimal text, dates and
  timestamps in ISO 8601 (timestamp-micros with its UTC offset), bytes as "hex:<hex digits>".
"""

import datetime
import decimal
import json
import sys

import fastavro


def plain(value):
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return "hex:" + value.hex()
    return value


with open(sys.argv[1], "rb") as f:
    print(json.dumps([plain(record) for record in fastavro.reader(f)]))
