#include "tables/table_mapping.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>

#include "core/error.h"
#include "iceberg/schema_evolution.h"

namespace binberg::tables {
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
    if (kind == TypeKind::kDouble) return static_cast<double>(*f);  // exact: every float is a double
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
    const std::string name = std::string(kBeforeImagePrefix) + column.name;
    if (table.column_index(name)) {
      throw ConfigError(fmt::format("table {} column {}: the name is taken by the changelog's before image of {}",
                                    table.qualified_name(), name, column.name));
    }
    fields.push_back(NestedField{8 + columns + i, name, false, iceberg_type(table, column), std::nullopt});
  }
  return iceberg::Schema(0, std::move(fields));
}

RowMapping::RowMapping(std::shared_ptr<const TableSchema> source, const iceberg::Schema* state,
                       const iceberg::Schema* changelog)
    : source_(std::move(source)) {
  const TableSchema& table = *source_;
  // The slot of the field named NAME for COLUMN, checked; nullopt leaves the field unfed.
  const auto slot = [&](const iceberg::NestedField& field, std::size_t c, const char* which) {
    const Column& column = table.columns[c];
    const iceberg::TypePtr type = iceberg_type(table, column);
    if (!iceberg::is_valid_promotion(*type, *field.type)) {
      fail("table {} column {}: the {} table's field {} is {}, the source column maps to {}", table.qualified_name(),
           column.name, which, field.name, field.type->to_string(), type->to_string());
    }
    const bool is_key = std::find(table.primary_key.begin(), table.primary_key.end(), c) != table.primary_key.end();
    if (field.required && column.nullable && !is_key) {
      fail("table {} column {}: nullable at the source, required in the {} table", table.qualified_name(), column.name,
           which);
    }
    return Slot{c, field.type};
  };
  if (state != nullptr) {
    std::vector<bool> fed(table.columns.size());
    for (const iceberg::NestedField& field : state->fields()) {
      const std::optional<std::size_t> c = table.column_index(field.name);
      if (!c) {
        fail("table {}: the current-state table has column {} that the source table does not", table.qualified_name(),
             field.name);
      }
      state_.push_back(slot(field, *c, "current-state"));
      fed[*c] = true;
    }
    for (std::size_t c = 0; c < fed.size(); ++c) {
      if (!fed[c])
        fail("table {} column {}: the current-state table has no such column", table.qualified_name(),
             table.columns[c].name);
    }
    std::vector<std::string> keys, source_keys;
    for (std::int32_t id : state->identifier_field_ids()) keys.push_back(state->find_field(id)->name);
    for (std::size_t c : table.primary_key) source_keys.push_back(table.columns[c].name);
    if (keys != source_keys) {
      fail("table {}: the primary key ({}) is not the current-state table's identifier fields ({})",
           table.qualified_name(), fmt::join(source_keys, ", "), fmt::join(keys, ", "));
    }
  }
  if (changelog != nullptr) {
    const auto& fields = changelog->fields();
    if (fields.size() < kChangelogMetadataColumns || fields[0].name != "_event_id" || fields[1].name != "_op") {
      fail("table {}: the changelog table does not start with binberg's metadata columns", table.qualified_name());
    }
    changelog_after_.resize(fields.size());
    changelog_before_.resize(fields.size());
    std::vector<int> fed(table.columns.size());
    for (std::size_t f = kChangelogMetadataColumns; f < fields.size(); ++f) {
      const std::string& name = fields[f].name;
      if (const auto c = table.column_index(name)) {
        changelog_after_[f] = slot(fields[f], *c, "changelog");
        fed[*c] += 1;
      } else if (name.starts_with(kBeforeImagePrefix)) {
        if (const auto b = table.column_index(name.substr(kBeforeImagePrefix.size()))) {
          changelog_before_[f] = slot(fields[f], *b, "changelog");
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
