#pragma once

// How one source column travels in Avro: its Avro type, its value, and the column's description
// (a "binberg.column" property on the field) from which a consumer rebuilds the source shape.
// Every mapping is exact, in both directions, and mirrors the Iceberg mapping (table_mapping.h):
//
//   TINYINT..MEDIUMINT (signed or not), INT, YEAR   int     (INT UNSIGNED: long)
//   BIGINT                                          long    (BIGINT UNSIGNED: bytes decimal(20,0))
//   BIT(n)                                          long    (BIT(64): bytes decimal(20,0))
//   FLOAT, DOUBLE                                   float, double
//   DECIMAL(p,s)                                    bytes decimal(p,s)
//   DATE                                            int date
//   TIME (a signed duration up to 838 h)            long, microseconds (io.debezium.time.MicroTime)
//   DATETIME                                        long local-timestamp-micros
//   TIMESTAMP                                       long timestamp-micros (UTC)
//   CHAR, VARCHAR, TEXT, ENUM, SET, JSON            string
//   BINARY, VARBINARY, BLOB, GEOMETRY               bytes

#include <string>
#include <string_view>

#include "avro/schema.h"
#include "avro/value.h"
#include "core/table_schema.h"
#include "core/value.h"

namespace binberg::envelope {

// The Avro type (JSON) of COLUMN's non-null values.
avro::Json column_avro_type(const Column& column);

// COLUMN's description: source type, sign, precision, scale, length, charset, symbols, name.
avro::Json column_description(const Column& column);
// The column a description gives back; throws Error naming WHERE when it is incomplete.
Column column_from_description(const avro::Json& description, std::string_view where);

// An Avro name for a column name: letters, digits and '_' kept, anything else '_', and a leading
// '_' before a digit. The original name travels in the description.
std::string avro_field_name(std::string_view column_name);

// A non-null VALUE of COLUMN as a datum of column_avro_type(COLUMN); throws Error naming the column
// when the value is not of the column's kind.
avro::Value to_avro(const Column& column, const Value& value);
// Back from such a datum, to exactly the value the source reader produced.
Value from_avro(const Column& column, const avro::Value& datum);

// Decimal digits ("-12.50") as the two's-complement big-endian bytes of the unscaled value, and
// back with SCALE digits after the point (Avro's decimal logical type). Any precision.
avro::Bytes decimal_to_bytes(std::string_view digits);
std::string decimal_from_bytes(const avro::Bytes& bytes, unsigned scale);

}  // namespace binberg::envelope
