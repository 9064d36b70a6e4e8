#pragma once

// An Iceberg table schema (spec "Schemas and Data Types"): a struct whose fields, at any depth, carry
// ids unique in the schema, plus the identifier fields that identify a row. The constructor
// validates; a Schema that exists is valid.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "iceberg/detail/json_fields.h"
#include "iceberg/detail/types.h"

namespace binberg::iceberg {

// Ids above this are reserved for metadata columns such as _file and _pos (spec "Reserved Field IDs").
inline constexpr std::int32_t kMaxTableFieldId = 2147483447;

class Schema {
 public:
  Schema(std::int32_t schema_id, std::vector<NestedField> fields, std::vector<std::int32_t> identifier_field_ids = {});
  // The schema of a file made of reserved metadata columns (a position delete file's file_path
  // and pos), whose ids lie above kMaxTableFieldId. Never a table schema.
  static Schema of_metadata_columns(std::vector<NestedField> fields);

  std::int32_t schema_id() const { return schema_id_; }
  const std::vector<NestedField>& fields() const { return struct_->fields(); }
  const Type& as_struct() const { return *struct_; }
  const std::vector<std::int32_t>& identifier_field_ids() const { return identifier_field_ids_; }
  // 0 for a schema without fields.
  std::int32_t highest_field_id() const { return highest_field_id_; }

  // Null when absent. Fields at any depth; list elements and map keys/values included.
  const NestedField* find_field(std::int32_t id) const;
  // By full dotted name: "id", "location.lat", "tags.element", "attrs.key", "attrs.value".
  const NestedField* find_field(std::string_view full_name) const;
  // The full dotted name of field ID; throws Error if absent.
  const std::string& full_name(std::int32_t id) const;
  // True for fields inside a list element or a map key/value, which cannot be partition or
  // identifier sources.
  bool is_in_list_or_map(std::int32_t id) const;

  Schema with_schema_id(std::int32_t schema_id) const;
  // Same fields and identifier fields, whatever the schema ids.
  bool same_structure(const Schema& other) const;
  friend bool operator==(const Schema& a, const Schema& b) {
    return a.schema_id_ == b.schema_id_ && a.same_structure(b);
  }

 private:
  struct IndexEntry {
    const NestedField* field;
    std::string full_name;
    bool in_list_or_map;
    bool has_optional_ancestor;
  };

  Schema(std::int32_t schema_id, std::vector<NestedField> fields, std::vector<std::int32_t> identifier_field_ids,
         std::int32_t max_field_id);
  // Where a field sits: its parent's full name ("" at the top), and whether a list or map, or an
  // optional field, is above it.
  struct Ancestry {
    std::string parent_name;
    bool in_list_or_map = false;
    bool has_optional_ancestor = false;
  };
  void index(const NestedField& field, const Ancestry& ancestry);
  void validate_identifier_fields() const;

  std::int32_t schema_id_;
  TypePtr struct_;
  std::vector<std::int32_t> identifier_field_ids_;
  std::int32_t highest_field_id_ = 0;
  std::int32_t max_field_id_ = kMaxTableFieldId;
  std::unordered_map<std::int32_t, IndexEntry> by_id_;
  std::unordered_map<std::string, std::int32_t> id_by_name_;
};

// Spec Appendix C: {"type": "struct", "schema-id": .., "identifier-field-ids": [..], "fields": [..]}.
Json schema_to_json(const Schema& schema);
Schema schema_from_json(const Json& json);

}  // namespace binberg::iceberg
