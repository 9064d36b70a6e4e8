#include "pipeline/table_mapping.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "core/error.h"

namespace binberg::pipeline {
namespace {

[[noreturn]] void unsupported(const TableSchema& table, const Column& column, const std::string& why) {
  throw ConfigError(
      fmt::format("table {} column {} ({}): {}", table.qualified_name(), column.name, to_string(column.type), why));
}

// "-123.45" (the source's canonical form: optional '-', digits, and '.' + exactly SCALE digits
// when SCALE > 0) as an unscaled integer. Anything else is an error, never a silently rescaled value.
// COLUMN names the column in messages (formatted only on failure: this runs for every value).
iceberg::Int128 unscaled_decimal(const std::string& digits, int scale, const std::string& column) {
  iceberg::Int128 value = 0;
  std::size_t count = 0;
  const bool negative = !digits.empty() && digits[0] == '-';
  const std::size_t dot = digits.find('.');
  const std::size_t fraction = dot == std::string::npos ? 0 : digits.size() - dot - 1;
  bool well_formed = digits.size() > (negative ? 1U : 0U) && fraction == static_cast<std::size_t>(scale) &&
                     dot != static_cast<std::size_t>(negative ? 1 : 0);
  for (std::size_t i = negative ? 1 : 0; well_formed && i < digits.size(); ++i) {
    const char c = digits[i];
    if (i == dot) continue;
    if (c < '0' || c > '9') {
      well_formed = false;
    } else {
      if (++count > 38) fail("column {}: decimal {} has more than 38 digits", column, digits);
      value = value * 10 + (c - '0');
    }
  }
  if (!well_formed) fail("column {}: '{}' is not a decimal with scale {}", column, digits, scale);
  return negative ? -value : value;
}

}  // namespace

iceberg::TypePtr iceberg_type(const TableSchema& table, const Column& column) {
  using iceberg::decimal_type;
  switch (column.type) {
    case SourceType::kTinyInt:
    case SourceType::kSmallInt:
    case SourceType::kMediumInt:
    case SourceType::kYear:
      return iceberg::int_type();
    case SourceType::kInt:
      return column.is_unsigned ? iceberg::long_type() : iceberg::int_type();
    case SourceType::kBigInt:
      return column.is_unsigned ? decimal_type(20, 0) : iceberg::long_type();
    case SourceType::kBit:
      return column.precision >= 64 ? decimal_type(20, 0) : iceberg::long_type();
    case SourceType::kFloat:
      return iceberg::float_type();
    case SourceType::kDouble:
      return iceberg::double_type();
    case SourceType::kDecimal:
      if (column.precision < 1 || column.precision > 38) {
        unsupported(table, column,
                    fmt::format("DECIMAL({},{}) exceeds Iceberg's 38 digits", column.precision, column.scale));
      }
      return decimal_type(static_cast<int>(column.precision), static_cast<int>(column.scale));
    case SourceType::kDate:
      return iceberg::date_type();
    case SourceType::kTime:
      return iceberg::long_type();
    case SourceType::kDateTime:
      return iceberg::timestamp_type();
    case SourceType::kTimestamp:
      return iceberg::timestamptz_type();
    case SourceType::kChar:
    case SourceType::kVarchar:
    case SourceType::kText:
    case SourceType::kEnum:
    case SourceType::kSet:
    case SourceType::kJson:
      return iceberg::string_type();
    case SourceType::kBinary:
    case SourceType::kVarbinary:
    case SourceType::kBlob:
    case SourceType::kGeometry:
      return iceberg::binary_type();
  }
  unsupported(table, column, "unknown source type");
}

iceberg::Schema current_state_schema(const TableSchema& table) {
  std::vector<iceberg::NestedField> fields;
  std::vector<std::int32_t> identifier_ids;
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    const Column& column = table.columns[i];
    const bool is_key = std::find(table.primary_key.begin(), table.primary_key.end(), i) != table.primary_key.end();
    const auto id = static_cast<std::int32_t>(i + 1);
    fields.push_back(
        iceberg::NestedField{id, column.name, is_key || !column.nullable, iceberg_type(table, column), std::nullopt});
  }
  for (std::size_t key_column : table.primary_key) identifier_ids.push_back(static_cast<std::int32_t>(key_column + 1));
  return iceberg::Schema(0, std::move(fields), std::move(identifier_ids));
}

iceberg::Literal to_literal(const Column& column, const iceberg::Type& type, const Value& value) {
  using iceberg::TypeKind;
  if (is_null(value)) return std::monostate{};
  const std::string& what = column.name;  // in messages only
  const TypeKind kind = type.kind();
  if (const auto* i = std::get_if<std::int64_t>(&value)) {
    if (kind == TypeKind::kInt) {
      if (*i < INT32_MIN || *i > INT32_MAX) fail("column {}: {} does not fit an int", what, *i);
      return static_cast<std::int32_t>(*i);
    }
    if (kind == TypeKind::kLong) return *i;
  } else if (const auto* u = std::get_if<std::uint64_t>(&value)) {
    if (kind == TypeKind::kInt) {
      if (*u > INT32_MAX) fail("column {}: {} does not fit an int", what, *u);
      return static_cast<std::int32_t>(*u);
    }
    if (kind == TypeKind::kLong) {
      if (*u > static_cast<std::uint64_t>(INT64_MAX)) fail("column {}: {} does not fit a long", what, *u);
      return static_cast<std::int64_t>(*u);
    }
    if (kind == TypeKind::kDecimal && type.decimal_scale() == 0)
      return iceberg::Decimal{static_cast<iceberg::Int128>(*u)};
  } else if (const auto* f = std::get_if<float>(&value)) {
    if (kind == TypeKind::kFloat) return *f;
  } else if (const auto* d = std::get_if<double>(&value)) {
    if (kind == TypeKind::kDouble) return *d;
  } else if (const auto* decimal = std::get_if<Decimal>(&value)) {
    if (kind == TypeKind::kDecimal)
      return iceberg::Decimal{unscaled_decimal(decimal->digits, type.decimal_scale(), what)};
  } else if (const auto* text = std::get_if<Text>(&value)) {
    if (kind == TypeKind::kString) return text->utf8;
  } else if (const auto* bytes = std::get_if<Bytes>(&value)) {
    if (kind == TypeKind::kBinary) return iceberg::Bytes(bytes->data.begin(), bytes->data.end());
  } else if (const auto* date = std::get_if<Date>(&value)) {
    if (kind == TypeKind::kDate) return date->days;
  } else if (const auto* time = std::get_if<TimeOfDay>(&value)) {
    if (kind == TypeKind::kLong) return time->micros;
  } else if (const auto* datetime = std::get_if<DateTime>(&value)) {
    if (kind == TypeKind::kTimestamp) return datetime->micros;
  } else if (const auto* timestamp = std::get_if<Timestamp>(&value)) {
    if (kind == TypeKind::kTimestamptz) return timestamp->micros;
  }
  fail("column {}: a {} value cannot be stored as {}", what, to_display_string(value), type.to_string());
}

iceberg::Row to_row(const TableSchema& table, const iceberg::Schema& schema, const RowImage& image) {
  if (image.size() != table.columns.size()) {
    fail("table {}: a row image of {} values for {} columns", table.qualified_name(), image.size(),
         table.columns.size());
  }
  iceberg::Row row(schema.fields().size());
  for (std::size_t i = 0; i < image.size(); ++i) {
    row[i] = to_literal(table.columns[i], *schema.fields()[i].type, image[i]);
  }
  return row;
}

iceberg::Schema changelog_schema(const TableSchema& table) {
  using iceberg::NestedField;
  std::vector<NestedField> fields = {
      NestedField{1, "_event_id", true, iceberg::string_type(), std::nullopt},
      NestedField{2, "_op", true, iceberg::string_type(), std::nullopt},
      NestedField{3, "_gtid", false, iceberg::string_type(), std::nullopt},
      NestedField{4, "_binlog_file", false, iceberg::string_type(), std::nullopt},
      NestedField{5, "_binlog_pos", false, iceberg::long_type(), std::nullopt},
      NestedField{6, "_row_index", false, iceberg::int_type(), std::nullopt},
      NestedField{7, "_commit_ts", false, iceberg::timestamptz_type(), std::nullopt},
  };
  const auto columns = static_cast<std::int32_t>(table.columns.size());
  for (std::int32_t i = 0; i < columns; ++i) {
    const Column& column = table.columns[static_cast<std::size_t>(i)];
    if (column.name.starts_with("_")) {
      for (const auto& field : fields) {
        if (field.name == column.name) {
          throw ConfigError(fmt::format("table {} column {}: the name is taken by the changelog's own column",
                                        table.qualified_name(), column.name));
        }
      }
    }
    fields.push_back(NestedField{8 + i, column.name, false, iceberg_type(table, column), std::nullopt});
  }
  for (std::int32_t i = 0; i < columns; ++i) {
    const Column& column = table.columns[static_cast<std::size_t>(i)];
    const std::string name = "_before_" + column.name;
    if (table.column_index(name)) {
      throw ConfigError(fmt::format("table {} column {}: the name is taken by the changelog's before image of {}",
                                    table.qualified_name(), name, column.name));
    }
    fields.push_back(NestedField{8 + columns + i, name, false, iceberg_type(table, column), std::nullopt});
  }
  return iceberg::Schema(0, std::move(fields));
}

iceberg::Row changelog_row(const iceberg::Schema& schema, const ChangeEvent& event) {
  const TableSchema& table = *event.schema;
  const std::size_t columns = table.columns.size();
  if (schema.fields().size() != kChangelogMetadataColumns + 2 * columns) {
    fail("table {}: the changelog has {} columns, the event's table {}", table.qualified_name(), schema.fields().size(),
         columns);
  }
  iceberg::Row row(schema.fields().size());
  row[0] = event.event_id;
  row[1] = std::string(1, static_cast<char>(event.op));
  if (!event.source.gtid.empty()) row[2] = event.source.gtid;
  if (!event.source.file.empty()) row[3] = event.source.file;
  row[4] = static_cast<std::int64_t>(event.source.end_pos);
  row[5] = static_cast<std::int32_t>(event.source.row_index);
  row[6] = event.source.commit_ts_ms * 1000;
  const auto put = [&](const std::optional<RowImage>& image, std::size_t first) {
    if (!image) return;
    if (image->size() != columns)
      fail("table {}: a row image of {} values for {} columns", table.qualified_name(), image->size(), columns);
    for (std::size_t c = 0; c < columns; ++c) {
      row[first + c] = to_literal(table.columns[c], *schema.fields()[first + c].type, (*image)[c]);
    }
  };
  put(event.after, kChangelogMetadataColumns);
  put(event.before, kChangelogMetadataColumns + columns);
  return row;
}

bool schema_matches(const iceberg::Schema& schema, const iceberg::Schema& mapped) {
  if (schema.fields().size() != mapped.fields().size()) return false;
  for (std::size_t i = 0; i < schema.fields().size(); ++i) {
    const auto& a = schema.fields()[i];
    const auto& b = mapped.fields()[i];
    if (a.name != b.name || a.required != b.required || a.type->to_string() != b.type->to_string()) return false;
  }
  std::vector<std::string> keys, mapped_keys;
  for (std::int32_t id : schema.identifier_field_ids()) keys.push_back(schema.find_field(id)->name);
  for (std::int32_t id : mapped.identifier_field_ids()) mapped_keys.push_back(mapped.find_field(id)->name);
  return keys == mapped_keys;
}

}  // namespace binberg::pipeline
