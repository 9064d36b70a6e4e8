#pragma once

// The shape of a captured source table, as the source reports it. Shared by every change event of
// the table (events hold a shared_ptr), replaced as a whole when DDL changes the table.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace binberg {

// Source column types, named after MySQL's; the decoder maps each to one Value kind.
enum class SourceType : std::uint8_t {
  kTinyInt,
  kSmallInt,
  kMediumInt,
  kInt,
  kBigInt,
  kFloat,
  kDouble,
  kDecimal,
  kBit,
  kYear,
  kDate,
  kTime,
  kDateTime,
  kTimestamp,
  kChar,
  kVarchar,
  kText,  // TEXT family and MariaDB JSON (LONGTEXT)
  kBinary,
  kVarbinary,
  kBlob,
  kEnum,
  kSet,
  kJson,  // MySQL binary JSON
  kGeometry,
};

const char* to_string(SourceType type);

struct Column {
  std::string name;
  SourceType type = SourceType::kInt;
  bool nullable = true;
  bool is_unsigned = false;
  std::uint32_t precision = 0;       // DECIMAL digits, BIT width, fractional-second digits
  std::uint32_t scale = 0;           // DECIMAL scale
  std::uint32_t max_bytes = 0;       // CHAR/VARCHAR/BINARY byte length, BLOB length-prefix bytes
  std::string charset;               // e.g. utf8mb4, latin1, binary; empty for non-character types
  std::vector<std::string> symbols;  // ENUM and SET values, in declaration order

  bool operator==(const Column&) const = default;
};

// What a column's values are, whatever the format that carries them: the one classification of
// the source types the Iceberg schema (tables/table_mapping.h) and the Avro envelope
// (envelope/column_codec.h) both follow, so the two paths type a column alike. Unsigned integers
// that do not fit the next signed type, and BIT(64), are kWideUnsigned (a decimal of 20 digits).
enum class ValueShape {
  kInt,
  kLong,
  kWideUnsigned,
  kFloat,
  kDouble,
  kDecimal,
  kDate,
  kTime,
  kDateTime,
  kTimestamp,
  kString,
  kBytes
};
ValueShape value_shape(const Column& column);

struct TableSchema {
  std::string database;
  std::string table;
  std::vector<Column> columns;
  std::vector<std::size_t> primary_key;  // column indexes, in key order; empty: no primary key

  bool operator==(const TableSchema&) const = default;

  std::string qualified_name() const { return database + "." + table; }
  // The column called exactly NAME (names binberg took from the server or its own records).
  std::optional<std::size_t> column_index(std::string_view name) const;
  // The column NAME names in any case, as the server resolves a name a statement spells (DDL).
  std::optional<std::size_t> find_column(std::string_view name) const;
};

// Column names are the same regardless of case, as MySQL and MariaDB compare them (DDL may spell a
// column differently from its definition). ASCII letters only fold.
bool same_column_name(std::string_view a, std::string_view b);
// Orders column names as same_column_name compares them (for maps keyed by column name).
struct ColumnNameLess {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const;
};

}  // namespace binberg
