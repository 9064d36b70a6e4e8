#include "iceberg/sort_order.h"

#include <fmt/format.h>

#include <utility>

#include "core/error.h"

namespace binberg::iceberg {
namespace {

const char* direction_name(SortDirection direction) { return direction == SortDirection::kAsc ? "asc" : "desc"; }

const char* null_order_name(NullOrder order) { return order == NullOrder::kNullsFirst ? "nulls-first" : "nulls-last"; }

SortDirection parse_direction(const std::string& text, const std::string& what) {
  if (text == "asc") return SortDirection::kAsc;
  if (text == "desc") return SortDirection::kDesc;
  fail("{}: direction must be \"asc\" or \"desc\", got \"{}\"", what, text);
}

NullOrder parse_null_order(const std::string& text, const std::string& what) {
  if (text == "nulls-first") return NullOrder::kNullsFirst;
  if (text == "nulls-last") return NullOrder::kNullsLast;
  fail("{}: null-order must be \"nulls-first\" or \"nulls-last\", got \"{}\"", what, text);
}

}  // namespace

SortOrder::SortOrder(std::int32_t order_id, std::vector<SortField> fields)
    : order_id_(order_id), fields_(std::move(fields)) {
  if (fields_.empty() && order_id_ != 0) fail("sort order {} has no fields; only order 0 may be unsorted", order_id_);
  if (!fields_.empty() && order_id_ == 0) fail("sort order id 0 is reserved for the unsorted order");
}

void SortOrder::validate_against(const Schema& schema) const {
  for (const auto& field : fields_) {
    const NestedField* source = schema.find_field(field.source_id);
    if (source == nullptr) {
      fail("sort order {}: source field {} is not in schema {}", order_id_, field.source_id, schema.schema_id());
    }
    if (field.transform.is_known() && !field.transform.can_transform(*source->type)) {
      fail("sort order {}: transform {} cannot apply to source field {} of type {}", order_id_,
           field.transform.to_string(), field.source_id, source->type->to_string());
    }
  }
}

Json sort_order_to_json(const SortOrder& order) {
  Json fields = Json::array();
  for (const auto& field : order.fields()) {
    fields.push_back(Json{{"transform", field.transform.to_string()},
                          {"source-id", field.source_id},
                          {"direction", direction_name(field.direction)},
                          {"null-order", null_order_name(field.null_order)}});
  }
  return Json{{"order-id", order.order_id()}, {"fields", std::move(fields)}};
}

SortOrder sort_order_from_json(const Json& json) {
  const std::int32_t order_id = int_member(json, "order-id", "sort order");
  const std::string what = fmt::format("sort order {}", order_id);
  const std::string field_what = fmt::format("{} field", what);
  std::vector<SortField> fields;
  for (const auto& item : array_member(json, "fields", what)) {
    SortField field;
    field.source_id = int_member(item, "source-id", field_what);
    field.transform =
        with_context(field_what, [&] { return Transform::parse(string_member(item, "transform", field_what)); });
    field.direction = parse_direction(string_member(item, "direction", field_what), field_what);
    field.null_order = parse_null_order(string_member(item, "null-order", field_what), field_what);
    fields.push_back(std::move(field));
  }
  return SortOrder(order_id, std::move(fields));
}

}  // namespace binberg::iceberg
