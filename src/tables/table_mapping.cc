#include "tables/table_mapping.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>

#include "core/error.h"
#include "iceberg/schema_evolution.h"

namespace binberg::tables {
namespace {

// COLUMN's type as its definition spells it, for messages ("DECIMAL(50,10)", "FLOAT").
std::string type_text(const Column& column) {
  if (column.type == SourceType::kDecimal) return fmt::format("DECIMAL({},{})", column.precision, column.scale);
  return to_string(column.type);
}

[[noreturn]] void unmappable(const TableSchema& table, const Column& column, const std::string& why) {
  throw UnmappableTable(
      fmt::format("table {} column {} ({}): {}", table.qualified_name(), column.name, type_text(column), why));
}

constexpr const char* kLeaveOut = "or leave the table out with [capture] exclude (docs/configuration.md, [types])";

// A decimal in the source's canonical form: optional '-', digits, and '.' + exactly SCALE digits
// when SCALE > 0 (core/value.h; leading zeros are tolerated). The views point into the text.
struct DecimalParts {
  bool negative = false;
  std::string_view integer, fraction;
};

// DIGITS split into its parts; anything else is an error, never a silently rescaled value.
// COLUMN names the column in messages (formatted only on failure: this runs for every value).
DecimalParts decimal_parts(const std::string& digits, std::uint32_t scale, const std::string& column) {
  DecimalParts parts;
  std::string_view text = digits;
  parts.negative = text.starts_with('-');
  if (parts.negative) text.remove_prefix(1);
  const std::size_t dot = text.find('.');
  parts.integer = text.substr(0, dot);
  if (dot != std::string_view::npos) parts.fraction = text.substr(dot + 1);
  const auto all_digits = [](std::string_view part) {
    return std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (parts.integer.empty() || !all_digits(parts.integer) || !all_digits(parts.fraction) ||
      parts.fraction.size() != scale || (dot != std::string_view::npos && scale == 0)) {
    fail("column {}: '{}' is not a decimal with scale {}", column, digits, scale);
  }
  return parts;
}

// PARTS (of DIGITS) as an unscaled integer.
iceberg::Int128 unscaled_decimal(const DecimalParts& parts, const std::string& digits, const std::string& column) {
  if (parts.integer.size() + parts.fraction.size() > 38) {
    fail("column {}: decimal {} has more than 38 digits", column, digits);
  }
  iceberg::Int128 value = 0;
  for (const std::string_view part : {parts.integer, parts.fraction}) {
    for (const char c : part) value = value * 10 + (c - '0');
  }
  return parts.negative ? -value : value;
}

// PARTS as the one text of their value, as MariaDB prints it: no leading zeros, no sign on zero.
// Equal values give equal texts, so the text can key a table.
std::string decimal_text(const DecimalParts& parts) {
  const std::string_view integer =
      parts.integer.substr(std::min(parts.integer.find_first_not_of('0'), parts.integer.size() - 1));
  const bool zero = integer == "0" && parts.fraction.find_first_not_of('0') == std::string_view::npos;
  std::string text = parts.negative && !zero ? "-" : "";
  text += integer;
  if (!parts.fraction.empty()) text += "." + std::string(parts.fraction);
  return text;
}

bool is_primary_key(const TableSchema& table, std::size_t column) {
  return std::find(table.primary_key.begin(), table.primary_key.end(), column) != table.primary_key.end();
}

}  // namespace

iceberg::TypePtr iceberg_type(const TableSchema& table, const Column& column, const TypeMapping& types) {
  using iceberg::decimal_type;
  switch (value_shape(column)) {
    case ValueShape::kInt:
      return iceberg::int_type();
    case ValueShape::kLong:
    case ValueShape::kTime:
      return iceberg::long_type();
    case ValueShape::kWideUnsigned:
      return decimal_type(20, 0);
    case ValueShape::kFloat:
      return iceberg::float_type();
    case ValueShape::kDouble:
      return iceberg::double_type();
    case ValueShape::kDecimal:
      if (column.precision >= 1 && column.precision <= 38) {
        return decimal_type(static_cast<int>(column.precision), static_cast<int>(column.scale));
      }
      if (column.precision < 1) unmappable(table, column, "a DECIMAL without digits");
      if (types.wide_decimal == WideDecimal::kString) return iceberg::string_type();
      unmappable(table, column,
                 fmt::format("Iceberg decimals hold at most 38 digits. Set [types] wide_decimal = \"string\" to keep "
                             "its values as their exact decimal text in a string column, {}",
                             kLeaveOut));
    case ValueShape::kDate:
      return iceberg::date_type();
    case ValueShape::kDateTime:
      return iceberg::timestamp_type();
    case ValueShape::kTimestamp:
      return iceberg::timestamptz_type();
    case ValueShape::kString:
      return iceberg::string_type();
    case ValueShape::kBytes:
      return iceberg::binary_type();
  }
  unmappable(table, column, "unknown source type");
}

TypeMapping mapping_held(const Column& column, const iceberg::Type& field_type, const TypeMapping& types) {
  TypeMapping held = types;
  if (column.type == SourceType::kDecimal && field_type.kind() == iceberg::TypeKind::kString) {
    held.wide_decimal = WideDecimal::kString;
  }
  return held;
}

void check_mappable(const TableSchema& table, const TypeMapping& types) {
  changelog_schema(table, types);
  if (!table.primary_key.empty()) current_state_schema(table, types);
}

iceberg::Schema current_state_schema(const TableSchema& table, const TypeMapping& types) {
  std::vector<iceberg::NestedField> fields;
  std::vector<std::int32_t> identifier_ids;
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    const Column& column = table.columns[i];
    const bool is_key = is_primary_key(table, i);
    if (is_key && (column.type == SourceType::kFloat || column.type == SourceType::kDouble)) {
      unmappable(table, column,
                 fmt::format("a floating-point primary-key column: Iceberg forbids floating-point identifier fields, "
                             "which key the current-state table. Give the table a primary key of another type, {}",
                             kLeaveOut));
    }
    const auto id = static_cast<std::int32_t>(i + 1);
    fields.push_back(iceberg::NestedField{id, column.name, is_key || !column.nullable,
                                          iceberg_type(table, column, types), std::nullopt});
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
    if (kind == TypeKind::kDouble) return static_cast<double>(*f);  // exact: every float is a double
  } else if (const auto* d = std::get_if<double>(&value)) {
    if (kind == TypeKind::kDouble) return *d;
  } else if (const auto* decimal = std::get_if<Decimal>(&value)) {
    if (kind == TypeKind::kDecimal) {
      const auto scale = static_cast<std::uint32_t>(type.decimal_scale());
      return iceberg::Decimal{unscaled_decimal(decimal_parts(decimal->digits, scale, what), decimal->digits, what)};
    }
    if (kind == TypeKind::kString) return decimal_text(decimal_parts(decimal->digits, column.scale, what));
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

namespace {

// The changelog's own columns, before the source's.
std::vector<iceberg::NestedField> changelog_metadata_fields() {
  using iceberg::NestedField;
  return {
      NestedField{1, "_event_id", true, iceberg::string_type(), std::nullopt},
      NestedField{2, "_op", true, iceberg::string_type(), std::nullopt},
      NestedField{3, "_gtid", false, iceberg::string_type(), std::nullopt},
      NestedField{4, "_binlog_file", false, iceberg::string_type(), std::nullopt},
      NestedField{5, "_binlog_pos", false, iceberg::long_type(), std::nullopt},
      NestedField{6, "_row_index", false, iceberg::int_type(), std::nullopt},
      NestedField{7, "_commit_ts", false, iceberg::timestamptz_type(), std::nullopt},
  };
}

}  // namespace

void check_changelog_names(const TableSchema& table) {
  const std::vector<iceberg::NestedField> own = changelog_metadata_fields();
  for (const Column& column : table.columns) {
    if (std::any_of(own.begin(), own.end(), [&](const auto& field) { return field.name == column.name; })) {
      unmappable(table, column,
                 fmt::format("the name is taken by the changelog's own column. Rename the column, {}", kLeaveOut));
    }
    const std::string imaged = column.name.substr(std::min(column.name.size(), kBeforeImagePrefix.size()));
    if (column.name.starts_with(kBeforeImagePrefix) && table.column_index(imaged)) {
      unmappable(table, column,
                 fmt::format("the name is taken by the changelog's before image of {}. Rename the column, {}", imaged,
                             kLeaveOut));
    }
  }
}

iceberg::Schema changelog_schema(const TableSchema& table, const TypeMapping& types) {
  check_changelog_names(table);
  std::vector<iceberg::NestedField> fields = changelog_metadata_fields();
  // The after image, then the before image; ids follow the field order.
  for (const std::string_view prefix : {std::string_view(), kBeforeImagePrefix}) {
    for (const Column& column : table.columns) {
      fields.push_back(iceberg::NestedField{static_cast<std::int32_t>(fields.size()) + 1,
                                            std::string(prefix) + column.name, false,
                                            iceberg_type(table, column, types), std::nullopt});
    }
  }
  return iceberg::Schema(0, std::move(fields));
}

RowMapping::RowMapping(std::shared_ptr<const TableSchema> source, const iceberg::Schema* state,
                       const iceberg::Schema* changelog)
    : source_(std::move(source)) {
  if (state != nullptr) map_state(*state);
  if (changelog != nullptr) map_changelog(*changelog);
}

// The slot of FIELD (of the WHICH table) for source column C, once the column is checked to fit it.
RowMapping::Slot RowMapping::checked_slot(const iceberg::NestedField& field, std::size_t c, const char* which) const {
  const TableSchema& table = *source_;
  const Column& column = table.columns[c];
  const iceberg::TypePtr type = iceberg_type(table, column, mapping_held(column, *field.type, TypeMapping{}));
  if (!iceberg::is_valid_promotion(*type, *field.type)) {
    fail("table {} column {}: the {} table's field {} is {}, the source column maps to {}", table.qualified_name(),
         column.name, which, field.name, field.type->to_string(), type->to_string());
  }
  if (field.required && column.nullable && !is_primary_key(table, c)) {
    fail("table {} column {}: nullable at the source, required in the {} table", table.qualified_name(), column.name,
         which);
  }
  return Slot{c, field.type};
}

void RowMapping::map_state(const iceberg::Schema& state) {
  const TableSchema& table = *source_;
  std::vector<bool> fed(table.columns.size());
  for (const iceberg::NestedField& field : state.fields()) {
    const std::optional<std::size_t> c = table.column_index(field.name);
    if (!c) {
      fail("table {}: the current-state table has column {} that the source table does not", table.qualified_name(),
           field.name);
    }
    state_.push_back(checked_slot(field, *c, "current-state"));
    fed[*c] = true;
  }
  for (std::size_t c = 0; c < fed.size(); ++c) {
    if (!fed[c])
      fail("table {} column {}: the current-state table has no such column", table.qualified_name(),
           table.columns[c].name);
  }
  std::vector<std::string> keys, source_keys;
  for (std::int32_t id : state.identifier_field_ids()) keys.push_back(state.find_field(id)->name);
  for (std::size_t c : table.primary_key) source_keys.push_back(table.columns[c].name);
  if (keys != source_keys) {
    fail("table {}: the primary key ({}) is not the current-state table's identifier fields ({})",
         table.qualified_name(), fmt::join(source_keys, ", "), fmt::join(keys, ", "));
  }
}

void RowMapping::map_changelog(const iceberg::Schema& changelog) {
  const TableSchema& table = *source_;
  const auto& fields = changelog.fields();
  if (fields.size() < kChangelogMetadataColumns || fields[0].name != "_event_id" || fields[1].name != "_op") {
    fail("table {}: the changelog table does not start with binberg's metadata columns", table.qualified_name());
  }
  changelog_after_.resize(fields.size());
  changelog_before_.resize(fields.size());
  std::vector<int> fed(table.columns.size());
  for (std::size_t f = kChangelogMetadataColumns; f < fields.size(); ++f) {
    const std::string& name = fields[f].name;
    if (const auto c = table.column_index(name)) {
      changelog_after_[f] = checked_slot(fields[f], *c, "changelog");
      fed[*c] += 1;
    } else if (name.starts_with(kBeforeImagePrefix)) {
      if (const auto b = table.column_index(name.substr(kBeforeImagePrefix.size()))) {
        changelog_before_[f] = checked_slot(fields[f], *b, "changelog");
        fed[*b] += 2;
      }
    }
  }
  for (std::size_t c = 0; c < fed.size(); ++c) {
    if (fed[c] != 3) {
      fail("table {} column {}: the changelog table lacks its {}", table.qualified_name(), table.columns[c].name,
           fed[c] == 1   ? "before image"
           : fed[c] == 2 ? "after image"
                         : "columns");
    }
  }
}

void RowMapping::check_image(const RowImage& image) const {
  if (image.size() != source_->columns.size()) {
    fail("table {}: a row image of {} values for {} columns", source_->qualified_name(), image.size(),
         source_->columns.size());
  }
}

iceberg::Row RowMapping::state_row(const RowImage& image) const {
  check_image(image);
  iceberg::Row row(state_.size());
  for (std::size_t f = 0; f < state_.size(); ++f) {
    const Slot& s = *state_[f];
    row[f] = to_literal(source_->columns[s.column], *s.type, image[s.column]);
  }
  return row;
}

iceberg::Row RowMapping::changelog_row(const ChangeEvent& event) const {
  iceberg::Row row(changelog_after_.size());
  row[0] = event.event_id;
  row[1] = std::string(1, static_cast<char>(event.op));
  if (!event.source.gtid.empty()) row[2] = event.source.gtid;
  if (!event.source.file.empty()) row[3] = event.source.file;
  row[4] = static_cast<std::int64_t>(event.source.end_pos);
  row[5] = static_cast<std::int32_t>(event.source.row_index);
  row[6] = event.source.commit_ts_ms * 1000;
  const auto put = [&](const std::optional<RowImage>& image, const Slots& slots) {
    if (!image) return;
    check_image(*image);
    for (std::size_t f = kChangelogMetadataColumns; f < slots.size(); ++f) {
      if (const auto& s = slots[f]) row[f] = to_literal(source_->columns[s->column], *s->type, (*image)[s->column]);
    }
  };
  put(event.after, changelog_after_);
  put(event.before, changelog_before_);
  return row;
}

}  // namespace binberg::tables
