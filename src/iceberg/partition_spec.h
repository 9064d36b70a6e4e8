#pragma once

// Partition specs (spec "Partitioning", JSON form in Appendix C) and the partition values they
// derive from a row.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "iceberg/detail/json_fields.h"
#include "iceberg/detail/literal.h"
#include "iceberg/schema.h"
#include "iceberg/transform.h"

namespace binberg::iceberg {

// Partition field ids start here, so they never collide with small schema field ids.
inline constexpr std::int32_t kFirstPartitionFieldId = 1000;

struct PartitionField {
  std::int32_t source_id = 0;
  std::int32_t field_id = 0;
  std::string name;
  Transform transform = Transform::identity();

  friend bool operator==(const PartitionField&, const PartitionField&) = default;
};

class PartitionSpec {
 public:
  // Throws Error on duplicate field ids or names, or an empty name.
  PartitionSpec(std::int32_t spec_id, std::vector<PartitionField> fields);
  static PartitionSpec unpartitioned() { return PartitionSpec(0, {}); }

  std::int32_t spec_id() const { return spec_id_; }
  const std::vector<PartitionField>& fields() const { return fields_; }
  bool is_unpartitioned() const { return fields_.empty(); }
  // The highest field id, or kFirstPartitionFieldId - 1 without fields (a table's
  // last-partition-id before any partition field exists).
  std::int32_t last_assigned_field_id() const;
  bool has_unknown_transform() const;

  // Throws Error unless every source field exists in SCHEMA, is a primitive outside lists and
  // maps and suits its transform, and no field name shadows a schema column other than its own
  // identity source. Fields with unknown transforms are only checked for their source.
  void validate_against(const Schema& schema) const;

  // The partition tuple, in field order. SOURCE_VALUE gives a row's value of a source field id.
  std::vector<Literal> partition_values(const Schema& schema,
                                        const std::function<Literal(std::int32_t source_id)>& source_value) const;

  friend bool operator==(const PartitionSpec&, const PartitionSpec&) = default;

 private:
  std::int32_t spec_id_;
  std::vector<PartitionField> fields_;
};

// {"spec-id": 0, "fields": [{"source-id": 4, "field-id": 1000, "name": "ts_day", "transform": "day"}]}
Json partition_spec_to_json(const PartitionSpec& spec);
PartitionSpec partition_spec_from_json(const Json& json);

}  // namespace binberg::iceberg
