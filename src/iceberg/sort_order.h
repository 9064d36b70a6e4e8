#pragma once

// Sort orders (spec "Sorting", JSON form in Appendix C). Order id 0 is reserved for the unsorted
// order, which has no fields.

#include <cstdint>
#include <vector>

#include "iceberg/detail/json_fields.h"
#include "iceberg/schema.h"
#include "iceberg/transform.h"

namespace binberg::iceberg {

enum class SortDirection { kAsc, kDesc };
enum class NullOrder { kNullsFirst, kNullsLast };

struct SortField {
  Transform transform = Transform::identity();
  std::int32_t source_id = 0;
  SortDirection direction = SortDirection::kAsc;
  NullOrder null_order = NullOrder::kNullsFirst;

  friend bool operator==(const SortField&, const SortField&) = default;
};

class SortOrder {
 public:
  // Throws Error unless ORDER_ID is 0 exactly when there are no fields.
  SortOrder(std::int32_t order_id, std::vector<SortField> fields);
  static SortOrder unsorted() { return SortOrder(0, {}); }

  std::int32_t order_id() const { return order_id_; }
  const std::vector<SortField>& fields() const { return fields_; }
  bool is_unsorted() const { return fields_.empty(); }

  // Throws Error unless every source field exists in SCHEMA and suits its (known) transform.
  void validate_against(const Schema& schema) const;

  friend bool operator==(const SortOrder&, const SortOrder&) = default;

 private:
  std::int32_t order_id_;
  std::vector<SortField> fields_;
};

// {"order-id": 1, "fields": [{"transform": "identity", "source-id": 2, "direction": "asc",
//  "null-order": "nulls-first"}]}
Json sort_order_to_json(const SortOrder& order);
SortOrder sort_order_from_json(const Json& json);

}  // namespace binberg::iceberg
