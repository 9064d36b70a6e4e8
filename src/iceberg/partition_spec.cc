#include "iceberg/partition_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "core/error.h"

namespace binberg::iceberg {
namespace {

std::string describe(const PartitionSpec& spec, const PartitionField& field) {
  return fmt::format("partition spec {} field {} (\"{}\")", spec.spec_id(), field.field_id, field.name);
}

}  // namespace

PartitionSpec::PartitionSpec(std::int32_t spec_id, std::vector<PartitionField> fields)
    : spec_id_(spec_id), fields_(std::move(fields)) {
  std::set<std::int32_t> ids;
  std::set<std::string> names;
  for (const auto& field : fields_) {
    if (field.name.empty()) fail("partition spec {} field {} has an empty name", spec_id_, field.field_id);
    if (!ids.insert(field.field_id).second) fail("partition spec {} has field id {} twice", spec_id_, field.field_id);
    if (!names.insert(field.name).second) fail("partition spec {} has two fields named \"{}\"", spec_id_, field.name);
  }
}

std::int32_t PartitionSpec::last_assigned_field_id() const {
  std::int32_t highest = kFirstPartitionFieldId - 1;
  for (const auto& field : fields_) highest = std::max(highest, field.field_id);
  return highest;
}

bool PartitionSpec::has_unknown_transform() const {
  return std::any_of(fields_.begin(), fields_.end(), [](const auto& field) { return !field.transform.is_known(); });
}

void PartitionSpec::validate_against(const Schema& schema) const {
  for (const auto& field : fields_) {
    const NestedField* source = schema.find_field(field.source_id);
    if (source == nullptr) {
      fail("{}: source field {} is not in schema {}", describe(*this, field), field.source_id, schema.schema_id());
    }
    if (!source->type->is_primitive()) {
      fail("{}: source field {} is a {}, not a primitive", describe(*this, field), field.source_id,
           source->type->to_string());
    }
    if (schema.is_in_list_or_map(field.source_id)) {
      fail("{}: source field {} is nested in a list or map", describe(*this, field), field.source_id);
    }
    if (field.transform.is_known() && !field.transform.can_transform(*source->type)) {
      fail("{}: transform {} cannot apply to source field {} of type {}", describe(*this, field),
           field.transform.to_string(), field.source_id, source->type->to_string());
    }
    // A partition name equal to a column name would make that name ambiguous in queries, unless
    // the partition is the column itself.
    if (const NestedField* same_name = schema.find_field(field.name);
        same_name != nullptr &&
        (field.transform.kind() != Transform::Kind::kIdentity || same_name->id != field.source_id)) {
      fail("{}: name conflicts with schema field {}", describe(*this, field), same_name->id);
    }
  }
}

std::vector<Literal> PartitionSpec::partition_values(
    const Schema& schema, const std::function<Literal(std::int32_t source_id)>& source_value) const {
  std::vector<Literal> values;
  values.reserve(fields_.size());
  for (const auto& field : fields_) {
    const NestedField* source = schema.find_field(field.source_id);
    if (source == nullptr) {
      fail("{}: source field {} is not in schema {}", describe(*this, field), field.source_id, schema.schema_id());
    }
    values.push_back(with_context([&] { return describe(*this, field); },
                                  [&] { return field.transform.apply(*source->type, source_value(field.source_id)); }));
  }
  return values;
}

Json partition_spec_to_json(const PartitionSpec& spec) {
  Json fields = Json::array();
  for (const auto& field : spec.fields()) {
    fields.push_back(Json{{"source-id", field.source_id},
                          {"field-id", field.field_id},
                          {"name", field.name},
                          {"transform", field.transform.to_string()}});
  }
  return Json{{"spec-id", spec.spec_id()}, {"fields", std::move(fields)}};
}

PartitionSpec partition_spec_from_json(const Json& json) {
  const std::int32_t spec_id = int_member(json, "spec-id", "partition spec");
  const std::string what = fmt::format("partition spec {}", spec_id);
  const std::string field_what = fmt::format("{} field", what);
  std::vector<PartitionField> fields;
  for (const auto& item : array_member(json, "fields", what)) {
    PartitionField field;
    field.source_id = int_member(item, "source-id", field_what);
    field.field_id = int_member(item, "field-id", field_what);
    field.name = string_member(item, "name", field_what);
    field.transform = with_context(fmt::format("{} {}", what, field.field_id),
                                   [&] { return Transform::parse(string_member(item, "transform", field_what)); });
    fields.push_back(std::move(field));
  }
  return PartitionSpec(spec_id, std::move(fields));
}

}  // namespace binberg::iceberg
