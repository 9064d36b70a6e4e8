#include "iceberg/arrow_rows.h"

#include <arrow/api.h>

#include <cstring>
#include <optional>

#include "core/error.h"

namespace binberg::iceberg {
namespace {

constexpr const char* kFieldIdKey = "PARQUET:field_id";

void check(const arrow::Status& status, const std::string& what) {
  if (!status.ok()) fail("{}: {}", what, status.ToString());
}

Int128 to_int128(const arrow::Decimal128& value) {
  return static_cast<Int128>((static_cast<UInt128>(static_cast<std::uint64_t>(value.high_bits())) << 64) |
                             value.low_bits());
}

arrow::Decimal128 to_decimal128(Int128 value) {
  const auto bits = static_cast<UInt128>(value);
  return arrow::Decimal128(static_cast<std::int64_t>(bits >> 64), static_cast<std::uint64_t>(bits));
}

void append_value(arrow::ArrayBuilder& builder, const Type& type, const Literal& value) {
  if (std::holds_alternative<std::monostate>(value)) {
    check(builder.AppendNull(), "append null");
    return;
  }
  arrow::Status status;
  switch (type.kind()) {
    case TypeKind::kBoolean:
      status = static_cast<arrow::BooleanBuilder&>(builder).Append(std::get<bool>(value));
      break;
    case TypeKind::kInt:
      status = static_cast<arrow::Int32Builder&>(builder).Append(std::get<std::int32_t>(value));
      break;
    case TypeKind::kDate:
      status = static_cast<arrow::Date32Builder&>(builder).Append(std::get<std::int32_t>(value));
      break;
    case TypeKind::kLong:
      status = static_cast<arrow::Int64Builder&>(builder).Append(std::get<std::int64_t>(value));
      break;
    case TypeKind::kTime:
      status = static_cast<arrow::Time64Builder&>(builder).Append(std::get<std::int64_t>(value));
      break;
    case TypeKind::kTimestamp:
    case TypeKind::kTimestamptz:
      status = static_cast<arrow::TimestampBuilder&>(builder).Append(std::get<std::int64_t>(value));
      break;
    case TypeKind::kFloat:
      status = static_cast<arrow::FloatBuilder&>(builder).Append(std::get<float>(value));
      break;
    case TypeKind::kDouble:
      status = static_cast<arrow::DoubleBuilder&>(builder).Append(std::get<double>(value));
      break;
    case TypeKind::kString:
      status = static_cast<arrow::StringBuilder&>(builder).Append(std::get<std::string>(value));
      break;
    case TypeKind::kUuid:
      status = static_cast<arrow::FixedSizeBinaryBuilder&>(builder).Append(std::get<Uuid>(value).bytes.data());
      break;
    case TypeKind::kFixed:
      status = static_cast<arrow::FixedSizeBinaryBuilder&>(builder).Append(std::get<Bytes>(value).data());
      break;
    case TypeKind::kBinary: {
      const auto& bytes = std::get<Bytes>(value);
      status =
          static_cast<arrow::BinaryBuilder&>(builder).Append(bytes.data(), static_cast<std::int32_t>(bytes.size()));
      break;
    }
    case TypeKind::kDecimal:
      status = static_cast<arrow::Decimal128Builder&>(builder).Append(to_decimal128(std::get<Decimal>(value).unscaled));
      break;
    case TypeKind::kStruct:
    case TypeKind::kList:
    case TypeKind::kMap:
      fail("{} columns are not supported in rows", type.to_string());
  }
  check(status, "append value");
}

std::optional<int> column_with_field_id(const arrow::Schema& schema, std::int32_t field_id) {
  const std::string wanted = std::to_string(field_id);
  for (int i = 0; i < schema.num_fields(); ++i) {
    const auto& metadata = schema.field(i)->metadata();
    if (metadata == nullptr) continue;
    auto id = metadata->Get(kFieldIdKey);
    if (id.ok() && *id == wanted) return i;
  }
  return std::nullopt;
}

// read_value for booleans, integers, dates and times; nullopt when ARRAY holds none of them as TYPE.
std::optional<Literal> read_integral(const arrow::Array& array, std::int64_t row, const Type& type) {
  switch (array.type_id()) {
    case arrow::Type::BOOL:
      if (type.kind() == TypeKind::kBoolean) return static_cast<const arrow::BooleanArray&>(array).Value(row);
      break;
    case arrow::Type::INT32: {
      const std::int32_t value = static_cast<const arrow::Int32Array&>(array).Value(row);
      if (type.kind() == TypeKind::kInt) return value;
      if (type.kind() == TypeKind::kLong) return std::int64_t{value};
      break;
    }
    case arrow::Type::DATE32:
      if (type.kind() == TypeKind::kDate) return static_cast<const arrow::Date32Array&>(array).Value(row);
      break;
    case arrow::Type::INT64:
      if (type.kind() == TypeKind::kLong) return static_cast<const arrow::Int64Array&>(array).Value(row);
      break;
    case arrow::Type::TIME64:
      if (type.kind() == TypeKind::kTime) return static_cast<const arrow::Time64Array&>(array).Value(row);
      break;
    case arrow::Type::TIMESTAMP:
      if (type.kind() == TypeKind::kTimestamp || type.kind() == TypeKind::kTimestamptz) {
        return static_cast<const arrow::TimestampArray&>(array).Value(row);
      }
      break;
    default:
      break;
  }
  return std::nullopt;
}

// read_value for floating point numbers and decimals; nullopt when ARRAY holds none of them as TYPE.
std::optional<Literal> read_fractional(const arrow::Array& array, std::int64_t row, const Type& type) {
  switch (array.type_id()) {
    case arrow::Type::FLOAT: {
      const float value = static_cast<const arrow::FloatArray&>(array).Value(row);
      if (type.kind() == TypeKind::kFloat) return value;
      if (type.kind() == TypeKind::kDouble) return double{value};
      break;
    }
    case arrow::Type::DOUBLE:
      if (type.kind() == TypeKind::kDouble) return static_cast<const arrow::DoubleArray&>(array).Value(row);
      break;
    case arrow::Type::DECIMAL128: {
      const auto& decimal_type = static_cast<const arrow::Decimal128Type&>(*array.type());
      if (type.kind() == TypeKind::kDecimal && decimal_type.scale() == type.decimal_scale() &&
          decimal_type.precision() <= type.decimal_precision()) {
        return Decimal{to_int128(arrow::Decimal128(static_cast<const arrow::Decimal128Array&>(array).GetValue(row)))};
      }
      break;
    }
    default:
      break;
  }
  return std::nullopt;
}

// read_value for strings, binary, fixed and uuid; nullopt when ARRAY holds none of them as TYPE.
std::optional<Literal> read_text_or_bytes(const arrow::Array& array, std::int64_t row, const Type& type) {
  switch (array.type_id()) {
    case arrow::Type::STRING:
      if (type.kind() == TypeKind::kString)
        return std::string(static_cast<const arrow::StringArray&>(array).GetView(row));
      break;
    case arrow::Type::LARGE_STRING:
      if (type.kind() == TypeKind::kString) {
        return std::string(static_cast<const arrow::LargeStringArray&>(array).GetView(row));
      }
      break;
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY: {
      if (type.kind() != TypeKind::kBinary) break;
      const std::string_view view = array.type_id() == arrow::Type::BINARY
                                        ? static_cast<const arrow::BinaryArray&>(array).GetView(row)
                                        : static_cast<const arrow::LargeBinaryArray&>(array).GetView(row);
      return Bytes(view.begin(), view.end());
    }
    case arrow::Type::FIXED_SIZE_BINARY: {
      const std::string_view view = static_cast<const arrow::FixedSizeBinaryArray&>(array).GetView(row);
      if (type.kind() == TypeKind::kUuid && view.size() == 16) {
        Uuid uuid;
        std::memcpy(uuid.bytes.data(), view.data(), 16);
        return uuid;
      }
      if (type.kind() == TypeKind::kFixed && view.size() == static_cast<std::size_t>(type.fixed_length())) {
        return Bytes(view.begin(), view.end());
      }
      break;
    }
    default:
      break;
  }
  return std::nullopt;
}

// The value at ROW of ARRAY, as the alternative TYPE holds. Accepts the Arrow types of the
// promotions Iceberg allows (int -> long, float -> double, decimal precision widening).
Literal read_value(const arrow::Array& array, std::int64_t row, const Type& type) {
  if (array.IsNull(row)) return std::monostate{};
  if (std::optional<Literal> value = read_integral(array, row, type)) return std::move(*value);
  if (std::optional<Literal> value = read_fractional(array, row, type)) return std::move(*value);
  if (std::optional<Literal> value = read_text_or_bytes(array, row, type)) return std::move(*value);
  fail("a {} column cannot be read as {}", array.type()->ToString(), type.to_string());
}

}  // namespace

std::shared_ptr<arrow::DataType> arrow_type(const Type& type) {
  switch (type.kind()) {
    case TypeKind::kBoolean:
      return arrow::boolean();
    case TypeKind::kInt:
      return arrow::int32();
    case TypeKind::kLong:
      return arrow::int64();
    case TypeKind::kFloat:
      return arrow::float32();
    case TypeKind::kDouble:
      return arrow::float64();
    case TypeKind::kDecimal:
      return arrow::decimal128(type.decimal_precision(), type.decimal_scale());
    case TypeKind::kDate:
      return arrow::date32();
    case TypeKind::kTime:
      return arrow::time64(arrow::TimeUnit::MICRO);
    case TypeKind::kTimestamp:
      return arrow::timestamp(arrow::TimeUnit::MICRO);
    case TypeKind::kTimestamptz:
      return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
    case TypeKind::kString:
      return arrow::utf8();
    case TypeKind::kUuid:
      return arrow::fixed_size_binary(16);
    case TypeKind::kFixed:
      return arrow::fixed_size_binary(type.fixed_length());
    case TypeKind::kBinary:
      return arrow::binary();
    case TypeKind::kStruct:
    case TypeKind::kList:
    case TypeKind::kMap:
      break;
  }
  fail("{} columns are not supported in rows", type.to_string());
}

std::shared_ptr<arrow::Schema> arrow_schema(const Schema& schema) {
  arrow::FieldVector fields;
  for (const auto& field : schema.fields()) {
    fields.push_back(arrow::field(field.name, arrow_type(*field.type), !field.required,
                                  arrow::key_value_metadata({kFieldIdKey}, {std::to_string(field.id)})));
  }
  return arrow::schema(std::move(fields));
}

std::shared_ptr<arrow::Table> rows_to_arrow(const Schema& schema, RowView rows) {
  const auto& fields = schema.fields();
  std::vector<std::unique_ptr<arrow::ArrayBuilder>> builders;
  for (const auto& field : fields) {
    std::unique_ptr<arrow::ArrayBuilder> builder;
    check(arrow::MakeBuilder(arrow::default_memory_pool(), arrow_type(*field.type), &builder), "make builder");
    check(builder->Reserve(static_cast<std::int64_t>(rows.size())), "reserve");
    builders.push_back(std::move(builder));
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    if (row.size() != fields.size()) fail("row {} has {} values, the schema {} columns", r, row.size(), fields.size());
    for (std::size_t c = 0; c < fields.size(); ++c) {
      const NestedField& field = fields[c];
      // Messages are formatted only on failure: this runs for every value written.
      with_context([&] { return fmt::format("row {} column '{}'", r, field.name); },
                   [&] { check_literal_type(*field.type, row[c], "the value"); });
      if (field.required && std::holds_alternative<std::monostate>(row[c])) {
        fail("row {} column '{}': null in a required column", r, field.name);
      }
      append_value(*builders[c], *field.type, row[c]);
    }
  }
  arrow::ArrayVector columns;
  for (auto& builder : builders) {
    std::shared_ptr<arrow::Array> column;
    check(builder->Finish(&column), "finish column");
    columns.push_back(std::move(column));
  }
  return arrow::Table::Make(arrow_schema(schema), columns, static_cast<std::int64_t>(rows.size()));
}

std::vector<Row> rows_from_arrow(const Schema& schema, const arrow::Table& table, const std::string& source) {
  const auto& fields = schema.fields();
  std::vector<Row> rows(static_cast<std::size_t>(table.num_rows()), Row(fields.size()));
  for (std::size_t c = 0; c < fields.size(); ++c) {
    const NestedField& field = fields[c];
    const std::optional<int> column = column_with_field_id(*table.schema(), field.id);
    if (!column) {
      if (field.required && table.num_rows() > 0) {
        fail("{}: required column '{}' (field id {}) is missing", source, field.name, field.id);
      }
      continue;  // added after this data was written: null
    }
    std::size_t r = 0;
    for (const auto& chunk : table.column(*column)->chunks()) {
      for (std::int64_t i = 0; i < chunk->length(); ++i, ++r) {
        rows[r][c] = with_context(
            [&] { return fmt::format("{}: row {} column '{}' (field id {})", source, r, field.name, field.id); },
            [&] { return read_value(*chunk, i, *field.type); });
      }
    }
  }
  return rows;
}

}  // namespace binberg::iceberg
