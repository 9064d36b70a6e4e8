#pragma once

// Iceberg data types (spec "Schemas and Data Types", v2 set) and their JSON form (spec Appendix C).
// Types are immutable and shared: nested types hold their child fields, so a field found anywhere in
// a schema stays valid as long as any copy of the schema lives.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iceberg/detail/json_fields.h"

namespace binberg::iceberg {

enum class TypeKind {
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kDecimal,
  kDate,
  kTime,
  kTimestamp,    // microseconds, without zone
  kTimestamptz,  // microseconds, stored as UTC
  kString,
  kUuid,
  kFixed,
  kBinary,
  kStruct,
  kList,
  kMap,
};

class Type;
using TypePtr = std::shared_ptr<const Type>;

struct NestedField {
  std::int32_t id = 0;
  std::string name;
  bool required = false;
  TypePtr type;
  std::optional<std::string> doc;

  friend bool operator==(const NestedField& a, const NestedField& b);
};

class Type {
 public:
  TypeKind kind() const { return kind_; }
  bool is_primitive() const {
    return kind_ != TypeKind::kStruct && kind_ != TypeKind::kList && kind_ != TypeKind::kMap;
  }
  int decimal_precision() const { return precision_; }
  int decimal_scale() const { return scale_; }
  int fixed_length() const { return length_; }

  // Struct: its fields. List: {element}. Map: {key, value}. Primitive: empty.
  const std::vector<NestedField>& fields() const { return fields_; }
  const NestedField& list_element() const;
  const NestedField& map_key() const;
  const NestedField& map_value() const;

  // Primitives: the spec's type string ("decimal(10,2)", "fixed[16]"); nested: "struct<...>" etc.
  std::string to_string() const;

  friend bool operator==(const Type& a, const Type& b);

 private:
  friend TypePtr primitive_type(TypeKind kind);
  friend TypePtr decimal_type(int precision, int scale);
  friend TypePtr fixed_type(int length);
  friend TypePtr struct_type(std::vector<NestedField> fields);
  friend TypePtr list_type(std::int32_t element_id, bool element_required, TypePtr element);
  friend TypePtr map_type(std::int32_t key_id, TypePtr key, std::int32_t value_id, bool value_required, TypePtr value);

  explicit Type(TypeKind kind) : kind_(kind) {}

  TypeKind kind_;
  int precision_ = 0;
  int scale_ = 0;
  int length_ = 0;
  std::vector<NestedField> fields_;
};

// Any primitive kind except decimal and fixed, which take parameters.
TypePtr primitive_type(TypeKind kind);
TypePtr boolean_type();
TypePtr int_type();
TypePtr long_type();
TypePtr float_type();
TypePtr double_type();
TypePtr date_type();
TypePtr time_type();
TypePtr timestamp_type();
TypePtr timestamptz_type();
TypePtr string_type();
TypePtr uuid_type();
TypePtr binary_type();
TypePtr decimal_type(int precision, int scale);  // precision 1..38, scale >= 0
TypePtr fixed_type(int length);                  // length >= 1
TypePtr struct_type(std::vector<NestedField> fields);
TypePtr list_type(std::int32_t element_id, bool element_required, TypePtr element);
TypePtr map_type(std::int32_t key_id, TypePtr key, std::int32_t value_id, bool value_required, TypePtr value);

Json type_to_json(const Type& type);
// WHAT names the place being read for error messages, e.g. "schema 0 field 3 (\"tags\")".
TypePtr type_from_json(const Json& json, const std::string& what);

Json struct_fields_to_json(const std::vector<NestedField>& fields);
std::vector<NestedField> struct_fields_from_json(const Json& json, const std::string& what);

}  // namespace binberg::iceberg
