#include "iceberg/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include "core/error.h"

namespace binberg::iceberg {

Schema::Schema(std::int32_t schema_id, std::vector<NestedField> fields, std::vector<std::int32_t> identifier_field_ids)
    : Schema(schema_id, std::move(fields), std::move(identifier_field_ids), kMaxTableFieldId) {}

Schema Schema::of_metadata_columns(std::vector<NestedField> fields) {
  return Schema(0, std::move(fields), {}, std::numeric_limits<std::int32_t>::max());
}

Schema::Schema(std::int32_t schema_id, std::vector<NestedField> fields, std::vector<std::int32_t> identifier_field_ids,
               std::int32_t max_field_id)
    : schema_id_(schema_id), identifier_field_ids_(std::move(identifier_field_ids)), max_field_id_(max_field_id) {
  with_context([&] { return fmt::format("schema {}", schema_id); },
               [&] {
                 struct_ = struct_type(std::move(fields));
                 for (const auto& field : struct_->fields()) index(field, Ancestry{});
                 validate_identifier_fields();
               });
}

void Schema::index(const NestedField& field, const Ancestry& ancestry) {
  const auto& [parent_name, in_list_or_map, has_optional_ancestor] = ancestry;
  if (field.id < 0 || field.id > max_field_id_) {
    fail("field \"{}\" has id {}, outside 0..{}", field.name, field.id, max_field_id_);
  }
  std::string full_name = parent_name.empty() ? field.name : fmt::format("{}.{}", parent_name, field.name);
  if (by_id_.contains(field.id)) {
    fail("field id {} is used by both \"{}\" and \"{}\"", field.id, by_id_.at(field.id).full_name, full_name);
  }
  if (!id_by_name_.emplace(full_name, field.id).second) fail("two fields have the full name \"{}\"", full_name);
  by_id_.emplace(field.id, IndexEntry{&field, full_name, in_list_or_map, has_optional_ancestor});
  highest_field_id_ = std::max(highest_field_id_, field.id);

  const Type& type = *field.type;
  const bool children_in_list_or_map =
      in_list_or_map || type.kind() == TypeKind::kList || type.kind() == TypeKind::kMap;
  for (const auto& child : type.fields()) {
    index(child, Ancestry{full_name, children_in_list_or_map, has_optional_ancestor || !field.required});
  }
}

void Schema::validate_identifier_fields() const {
  std::set<std::int32_t> seen;
  for (const std::int32_t id : identifier_field_ids_) {
    const auto it = by_id_.find(id);
    if (it == by_id_.end()) fail("identifier field {} does not exist", id);
    const IndexEntry& entry = it->second;
    const NestedField& field = *entry.field;
    const std::string what = fmt::format("identifier field {} (\"{}\")", id, entry.full_name);
    if (!seen.insert(id).second) fail("{} is listed twice", what);
    if (!field.type->is_primitive()) fail("{} must be a primitive, not {}", what, field.type->to_string());
    if (field.type->kind() == TypeKind::kFloat || field.type->kind() == TypeKind::kDouble) {
      fail("{} must not be a {}", what, field.type->to_string());
    }
    if (!field.required) fail("{} must be required", what);
    if (entry.in_list_or_map) fail("{} must not be nested in a list or map", what);
    if (entry.has_optional_ancestor) fail("{} must not be nested in an optional struct", what);
  }
}

const NestedField* Schema::find_field(std::int32_t id) const {
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second.field;
}

const NestedField* Schema::find_field(std::string_view full_name) const {
  const auto it = id_by_name_.find(std::string(full_name));
  return it == id_by_name_.end() ? nullptr : find_field(it->second);
}

const std::string& Schema::full_name(std::int32_t id) const {
  const auto it = by_id_.find(id);
  if (it == by_id_.end()) fail("schema {} has no field with id {}", schema_id_, id);
  return it->second.full_name;
}

bool Schema::is_in_list_or_map(std::int32_t id) const {
  const auto it = by_id_.find(id);
  return it != by_id_.end() && it->second.in_list_or_map;
}

Schema Schema::with_schema_id(std::int32_t schema_id) const {
  Schema copy = *this;
  copy.schema_id_ = schema_id;
  return copy;
}

bool Schema::same_structure(const Schema& other) const {
  return *struct_ == *other.struct_ && identifier_field_ids_ == other.identifier_field_ids_;
}

Json schema_to_json(const Schema& schema) {
  Json json{{"type", "struct"}, {"schema-id", schema.schema_id()}};
  if (!schema.identifier_field_ids().empty()) json["identifier-field-ids"] = schema.identifier_field_ids();
  json["fields"] = struct_fields_to_json(schema.fields());
  return json;
}

Schema schema_from_json(const Json& json) {
  const std::int32_t schema_id = int_member(json, "schema-id", "schema");
  const std::string what = fmt::format("schema {}", schema_id);
  if (const auto type = string_member(json, "type", what); type != "struct") {
    fail("{} must have type \"struct\", got \"{}\"", what, type);
  }
  std::vector<std::int32_t> identifier_field_ids;
  if (const auto it = json.find("identifier-field-ids"); it != json.end() && !it->is_null()) {
    if (!it->is_array()) fail("{} \"identifier-field-ids\" must be a list, got {}", what, it->dump());
    for (const auto& id : *it) identifier_field_ids.push_back(as_int(id, fmt::format("{} identifier field id", what)));
  }
  return Schema(schema_id, struct_fields_from_json(required_member(json, "fields", what), what),
                std::move(identifier_field_ids));
}

}  // namespace binberg::iceberg
