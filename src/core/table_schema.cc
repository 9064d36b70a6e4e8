#include "core/table_schema.h"

#include <algorithm>

#include "core/error.h"

namespace binberg {

ValueShape value_shape(const Column& column) {
  switch (column.type) {
    case SourceType::kTinyInt:
    case SourceType::kSmallInt:
    case SourceType::kMediumInt:
    case SourceType::kYear:
      return ValueShape::kInt;
    case SourceType::kInt:
      return column.is_unsigned ? ValueShape::kLong : ValueShape::kInt;
    case SourceType::kBigInt:
      return column.is_unsigned ? ValueShape::kWideUnsigned : ValueShape::kLong;
    case SourceType::kBit:
      return column.precision >= 64 ? ValueShape::kWideUnsigned : ValueShape::kLong;
    case SourceType::kFloat:
      return ValueShape::kFloat;
    case SourceType::kDouble:
      return ValueShape::kDouble;
    case SourceType::kDecimal:
      return ValueShape::kDecimal;
    case SourceType::kDate:
      return ValueShape::kDate;
    case SourceType::kTime:
      return ValueShape::kTime;
    case SourceType::kDateTime:
      return ValueShape::kDateTime;
    case SourceType::kTimestamp:
      return ValueShape::kTimestamp;
    case SourceType::kChar:
    case SourceType::kVarchar:
    case SourceType::kText:
    case SourceType::kEnum:
    case SourceType::kSet:
    case SourceType::kJson:
      return ValueShape::kString;
    case SourceType::kBinary:
    case SourceType::kVarbinary:
    case SourceType::kBlob:
    case SourceType::kGeometry:
      return ValueShape::kBytes;
  }
  fail("column {}: unknown source type", column.name);
}

const char* to_string(SourceType type) {
  switch (type) {
    case SourceType::kTinyInt:
      return "TINYINT";
    case SourceType::kSmallInt:
      return "SMALLINT";
    case SourceType::kMediumInt:
      return "MEDIUMINT";
    case SourceType::kInt:
      return "INT";
    case SourceType::kBigInt:
      return "BIGINT";
    case SourceType::kFloat:
      return "FLOAT";
    case SourceType::kDouble:
      return "DOUBLE";
    case SourceType::kDecimal:
      return "DECIMAL";
    case SourceType::kBit:
      return "BIT";
    case SourceType::kYear:
      return "YEAR";
    case SourceType::kDate:
      return "DATE";
    case SourceType::kTime:
      return "TIME";
    case SourceType::kDateTime:
      return "DATETIME";
    case SourceType::kTimestamp:
      return "TIMESTAMP";
    case SourceType::kChar:
      return "CHAR";
    case SourceType::kVarchar:
      return "VARCHAR";
    case SourceType::kText:
      return "TEXT";
    case SourceType::kBinary:
      return "BINARY";
    case SourceType::kVarbinary:
      return "VARBINARY";
    case SourceType::kBlob:
      return "BLOB";
    case SourceType::kEnum:
      return "ENUM";
    case SourceType::kSet:
      return "SET";
    case SourceType::kJson:
      return "JSON";
    case SourceType::kGeometry:
      return "GEOMETRY";
  }
  return "?";
}

std::optional<std::size_t> TableSchema::column_index(std::string_view name) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == name) return i;
  }
  return std::nullopt;
}

std::optional<std::size_t> TableSchema::find_column(std::string_view name) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (same_column_name(columns[i].name, name)) return i;
  }
  return std::nullopt;
}

namespace {
char fold(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
}  // namespace

bool same_column_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return fold(x) == fold(y); });
}

bool ColumnNameLess::operator()(std::string_view a, std::string_view b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                      [](char x, char y) { return fold(x) < fold(y); });
}

}  // namespace binberg
