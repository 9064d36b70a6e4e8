#include "iceberg/schema_evolution.h"

#include "core/error.h"

namespace binberg::iceberg {

bool is_valid_promotion(const Type& from, const Type& to) {
  if (from == to) return true;
  if (from.kind() == TypeKind::kInt && to.kind() == TypeKind::kLong) return true;
  if (from.kind() == TypeKind::kFloat && to.kind() == TypeKind::kDouble) return true;
  return from.kind() == TypeKind::kDecimal && to.kind() == TypeKind::kDecimal &&
         from.decimal_scale() == to.decimal_scale() && to.decimal_precision() >= from.decimal_precision();
}

namespace {

// A new field may be required only under a new parent (a new struct brings its own fields).
enum class Parent { kExisting, kNew };

void validate_field(const Schema& current, const Schema& next, const NestedField& field, Parent parent,
                    std::int32_t last_column_id) {
  const std::string what =
      fmt::format("schema {} field {} (\"{}\")", next.schema_id(), field.id, next.full_name(field.id));
  const NestedField* old = current.find_field(field.id);
  if (old == nullptr) {
    if (field.id <= last_column_id) {
      fail("{} is new but its id is not above last-column-id {}", what, last_column_id);
    }
    if (field.required && parent == Parent::kExisting)
      fail("{} is new and required; new fields must be optional", what);
  } else {
    const bool both_primitive = old->type->is_primitive() && field.type->is_primitive();
    if (both_primitive ? !is_valid_promotion(*old->type, *field.type) : old->type->kind() != field.type->kind()) {
      fail("{} cannot change type from {} to {}", what, old->type->to_string(), field.type->to_string());
    }
    if (field.required && !old->required) fail("{} cannot change from optional to required", what);
  }
  const Parent children_parent = old == nullptr ? Parent::kNew : Parent::kExisting;
  for (const auto& child : field.type->fields()) validate_field(current, next, child, children_parent, last_column_id);
}

}  // namespace

void validate_schema_evolution(const Schema& current, const Schema& next, std::int32_t last_column_id) {
  for (const auto& field : next.fields()) validate_field(current, next, field, Parent::kExisting, last_column_id);
}

}  // namespace binberg::iceberg
