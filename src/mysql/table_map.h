#pragma once

// TABLE_MAP events: the binlog's description of a table for the rows events that follow.
// With binlog_row_metadata=FULL it carries column names, signedness, charsets, ENUM/SET values and
// the primary key, so binberg builds the table's schema from the binlog alone, never from a
// later (possibly different) SHOW CREATE TABLE.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/table_schema.h"
#include "mysql/charset.h"

namespace binberg::mysql {

// Binlog column type codes (MySQL enum_field_types) the decoder knows.
namespace binlog_type {
inline constexpr std::uint8_t kDecimal = 0, kTiny = 1, kShort = 2, kLong = 3, kFloat = 4, kDouble = 5, kNull = 6,
                              kTimestamp = 7, kLongLong = 8, kInt24 = 9, kDate = 10, kTime = 11, kDateTime = 12,
                              kYear = 13, kNewDate = 14, kVarchar = 15, kBit = 16, kTimestamp2 = 17, kDateTime2 = 18,
                              kTime2 = 19, kJson = 245, kNewDecimal = 246, kEnum = 247, kSet = 248, kTinyBlob = 249,
                              kMediumBlob = 250, kLongBlob = 251, kBlob = 252, kVarString = 253, kString = 254,
                              kGeometry = 255;
}

// How one column's values are laid out in rows events.
struct ColumnLayout {
  std::uint8_t type = 0;      // binlog type (for STRING: the real type, e.g. ENUM)
  std::uint32_t length = 0;   // bytes per value (ENUM/SET/BIT/BINARY), max length (strings), length-prefix bytes (BLOB)
  std::uint8_t decimals = 0;  // fractional-second digits (TIME2/DATETIME2/TIMESTAMP2), DECIMAL scale
  std::uint8_t precision = 0;  // DECIMAL precision
  bool is_binary = false;      // charset `binary`: bytes, not text
};

// The raw parts of a TABLE_MAP event body.
struct TableMapEventData {
  std::uint64_t table_id = 0;
  std::string database;
  std::string table;
  std::string column_types;       // one type byte per column
  std::string column_metadata;    // the type-specific metadata block
  std::string null_bitmap;        // (columns + 7) / 8 bytes
  std::string optional_metadata;  // the TLV block after the null bitmap
};

struct TableMap {
  std::uint64_t table_id = 0;
  std::shared_ptr<const TableSchema> schema;
  std::vector<ColumnLayout> layout;
};

// Builds the schema and layouts; throws Error naming table and column for anything it cannot
// represent exactly (missing FULL metadata, unknown type, unknown charset).
TableMap parse_table_map(const TableMapEventData& event, const CharsetNames& charsets);

}  // namespace binberg::mysql
