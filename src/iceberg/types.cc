#include "iceberg/detail/types.h"

#include <fmt/format.h>

#include <array>
#include <limits>
#include <set>
#include <utility>

#include "core/error.h"
#include "iceberg/detail/text_parsing.h"

namespace binberg::iceberg {
namespace {

constexpr int kMaxDecimalPrecision = 38;

struct PrimitiveName {
  TypeKind kind;
  const char* name;
};

// The parameterless primitives and their JSON type strings.
constexpr std::array<PrimitiveName, 12> kPrimitiveNames{{
    {TypeKind::kBoolean, "boolean"},
    {TypeKind::kInt, "int"},
    {TypeKind::kLong, "long"},
    {TypeKind::kFloat, "float"},
    {TypeKind::kDouble, "double"},
    {TypeKind::kDate, "date"},
    {TypeKind::kTime, "time"},
    {TypeKind::kTimestamp, "timestamp"},
    {TypeKind::kTimestamptz, "timestamptz"},
    {TypeKind::kString, "string"},
    {TypeKind::kUuid, "uuid"},
    {TypeKind::kBinary, "binary"},
}};

const char* primitive_name(TypeKind kind) {
  for (const auto& entry : kPrimitiveNames) {
    if (entry.kind == kind) return entry.name;
  }
  return nullptr;
}

NestedField make_field(std::int32_t id, std::string name, bool required, TypePtr type) {
  return NestedField{id, std::move(name), required, std::move(type), std::nullopt};
}

std::string field_to_string(const NestedField& field) {
  return fmt::format("{}: {}: {} {}", field.id, field.name, field.required ? "required" : "optional",
                     field.type->to_string());
}

bool fits_int(std::int64_t value) {
  return value >= std::numeric_limits<int>::min() && value <= std::numeric_limits<int>::max();
}

TypePtr primitive_from_string(const std::string& text, const std::string& what) {
  for (const auto& entry : kPrimitiveNames) {
    if (text == entry.name) return primitive_type(entry.kind);
  }
  // The spec allows a space after the comma: both "decimal(9,2)" and "decimal(9, 2)".
  if (const auto inner = enclosed(text, "decimal(", ')')) {
    const std::size_t comma = inner->find(',');
    const auto precision = parse_integer(inner->substr(0, comma));
    const auto scale = comma == std::string_view::npos ? std::nullopt : parse_integer(inner->substr(comma + 1));
    if (!precision || !scale || !fits_int(*precision) || !fits_int(*scale)) fail("{}: invalid type \"{}\"", what, text);
    return with_context(what, [&] { return decimal_type(static_cast<int>(*precision), static_cast<int>(*scale)); });
  }
  if (const auto inner = enclosed(text, "fixed[", ']')) {
    const auto length = parse_integer(*inner);
    if (!length || !fits_int(*length)) fail("{}: invalid type \"{}\"", what, text);
    return with_context(what, [&] { return fixed_type(static_cast<int>(*length)); });
  }
  fail("{}: unknown Iceberg type \"{}\"", what, text);
}

}  // namespace

bool operator==(const NestedField& a, const NestedField& b) {
  return a.id == b.id && a.name == b.name && a.required == b.required && a.doc == b.doc && *a.type == *b.type;
}

bool operator==(const Type& a, const Type& b) {
  return a.kind_ == b.kind_ && a.precision_ == b.precision_ && a.scale_ == b.scale_ && a.length_ == b.length_ &&
         a.fields_ == b.fields_;
}

const NestedField& Type::list_element() const {
  if (kind_ != TypeKind::kList) fail("{} is not a list", to_string());
  return fields_[0];
}

const NestedField& Type::map_key() const {
  if (kind_ != TypeKind::kMap) fail("{} is not a map", to_string());
  return fields_[0];
}

const NestedField& Type::map_value() const {
  if (kind_ != TypeKind::kMap) fail("{} is not a map", to_string());
  return fields_[1];
}

std::string Type::to_string() const {
  switch (kind_) {
    case TypeKind::kDecimal:
      return fmt::format("decimal({},{})", precision_, scale_);
    case TypeKind::kFixed:
      return fmt::format("fixed[{}]", length_);
    case TypeKind::kStruct: {
      std::vector<std::string> parts;
      for (const auto& field : fields_) parts.push_back(field_to_string(field));
      return fmt::format("struct<{}>", fmt::join(parts, ", "));
    }
    case TypeKind::kList:
      return fmt::format("list<{}>", field_to_string(fields_[0]));
    case TypeKind::kMap:
      return fmt::format("map<{}, {}>", field_to_string(fields_[0]), field_to_string(fields_[1]));
    default:
      return primitive_name(kind_);
  }
}

TypePtr primitive_type(TypeKind kind) {
  if (primitive_name(kind) == nullptr) fail("type kind {} needs parameters", static_cast<int>(kind));
  return TypePtr(new Type(kind));
}

TypePtr boolean_type() { return primitive_type(TypeKind::kBoolean); }
TypePtr int_type() { return primitive_type(TypeKind::kInt); }
TypePtr long_type() { return primitive_type(TypeKind::kLong); }
TypePtr float_type() { return primitive_type(TypeKind::kFloat); }
TypePtr double_type() { return primitive_type(TypeKind::kDouble); }
TypePtr date_type() { return primitive_type(TypeKind::kDate); }
TypePtr time_type() { return primitive_type(TypeKind::kTime); }
TypePtr timestamp_type() { return primitive_type(TypeKind::kTimestamp); }
TypePtr timestamptz_type() { return primitive_type(TypeKind::kTimestamptz); }
TypePtr string_type() { return primitive_type(TypeKind::kString); }
TypePtr uuid_type() { return primitive_type(TypeKind::kUuid); }
TypePtr binary_type() { return primitive_type(TypeKind::kBinary); }

TypePtr decimal_type(int precision, int scale) {
  if (precision < 1 || precision > kMaxDecimalPrecision) {
    fail("decimal precision must be 1..{}, got decimal({},{})", kMaxDecimalPrecision, precision, scale);
  }
  if (scale < 0) fail("decimal scale must not be negative, got decimal({},{})", precision, scale);
  auto type = std::shared_ptr<Type>(new Type(TypeKind::kDecimal));
  type->precision_ = precision;
  type->scale_ = scale;
  return type;
}

TypePtr fixed_type(int length) {
  if (length < 1) fail("fixed length must be positive, got fixed[{}]", length);
  auto type = std::shared_ptr<Type>(new Type(TypeKind::kFixed));
  type->length_ = length;
  return type;
}

TypePtr struct_type(std::vector<NestedField> fields) {
  std::set<std::string> names;
  for (const auto& field : fields) {
    if (field.type == nullptr) fail("struct field {} (\"{}\") has no type", field.id, field.name);
    if (field.name.empty()) fail("struct field {} has an empty name", field.id);
    if (!names.insert(field.name).second) fail("struct has two fields named \"{}\"", field.name);
  }
  auto type = std::shared_ptr<Type>(new Type(TypeKind::kStruct));
  type->fields_ = std::move(fields);
  return type;
}

TypePtr list_type(std::int32_t element_id, bool element_required, TypePtr element) {
  if (element == nullptr) fail("list element {} has no type", element_id);
  auto type = std::shared_ptr<Type>(new Type(TypeKind::kList));
  type->fields_.push_back(make_field(element_id, "element", element_required, std::move(element)));
  return type;
}

TypePtr map_type(std::int32_t key_id, TypePtr key, std::int32_t value_id, bool value_required, TypePtr value) {
  if (key == nullptr || value == nullptr) fail("map key {} / value {} needs both types", key_id, value_id);
  auto type = std::shared_ptr<Type>(new Type(TypeKind::kMap));
  constexpr bool kKeysAreRequired = true;  // spec "Nested Types"
  type->fields_.push_back(make_field(key_id, "key", kKeysAreRequired, std::move(key)));
  type->fields_.push_back(make_field(value_id, "value", value_required, std::move(value)));
  return type;
}

Json type_to_json(const Type& type) {
  switch (type.kind()) {
    case TypeKind::kStruct:
      return Json{{"type", "struct"}, {"fields", struct_fields_to_json(type.fields())}};
    case TypeKind::kList: {
      const auto& element = type.list_element();
      return Json{{"type", "list"},
                  {"element-id", element.id},
                  {"element-required", element.required},
                  {"element", type_to_json(*element.type)}};
    }
    case TypeKind::kMap: {
      const auto& key = type.map_key();
      const auto& value = type.map_value();
      return Json{{"type", "map"},
                  {"key-id", key.id},
                  {"key", type_to_json(*key.type)},
                  {"value-id", value.id},
                  {"value-required", value.required},
                  {"value", type_to_json(*value.type)}};
    }
    default:
      return type.to_string();
  }
}

TypePtr type_from_json(const Json& json, const std::string& what) {
  if (json.is_string()) return primitive_from_string(json.get<std::string>(), what);
  const std::string kind = string_member(json, "type", what);
  if (kind == "struct") {
    auto fields = struct_fields_from_json(required_member(json, "fields", what), what);
    return with_context(what, [&] { return struct_type(std::move(fields)); });
  }
  if (kind == "list") {
    const std::int32_t element_id = int_member(json, "element-id", what);
    const bool element_required = bool_member(json, "element-required", what);
    TypePtr element = type_from_json(required_member(json, "element", what), fmt::format("{} element", what));
    return list_type(element_id, element_required, std::move(element));
  }
  if (kind == "map") {
    const std::int32_t key_id = int_member(json, "key-id", what);
    const std::int32_t value_id = int_member(json, "value-id", what);
    const bool value_required = bool_member(json, "value-required", what);
    TypePtr key = type_from_json(required_member(json, "key", what), fmt::format("{} key", what));
    TypePtr value = type_from_json(required_member(json, "value", what), fmt::format("{} value", what));
    return map_type(key_id, std::move(key), value_id, value_required, std::move(value));
  }
  fail("{}: unknown nested type \"{}\"", what, kind);
}

Json struct_fields_to_json(const std::vector<NestedField>& fields) {
  Json list = Json::array();
  for (const auto& field : fields) {
    Json object{
        {"id", field.id}, {"name", field.name}, {"required", field.required}, {"type", type_to_json(*field.type)}};
    if (field.doc) object["doc"] = *field.doc;
    list.push_back(std::move(object));
  }
  return list;
}

std::vector<NestedField> struct_fields_from_json(const Json& json, const std::string& what) {
  if (!json.is_array()) fail("{}: \"fields\" must be a JSON list, got {}", what, json.dump());
  std::vector<NestedField> fields;
  for (const auto& item : json) {
    const std::int32_t id = int_member(item, "id", fmt::format("{} field", what));
    const std::string field_what = fmt::format("{} field {}", what, id);
    NestedField field;
    field.id = id;
    field.name = string_member(item, "name", field_what);
    field.required = bool_member(item, "required", field_what);
    field.type = type_from_json(required_member(item, "type", field_what),
                                fmt::format("{} field {} (\"{}\")", what, id, field.name));
    field.doc = optional_string_member(item, "doc", field_what);
    fields.push_back(std::move(field));
  }
  return fields;
}

}  // namespace binberg::iceberg
