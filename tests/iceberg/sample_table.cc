#include "sample_table.h"

namespace binberg::iceberg::test_tables {
namespace {

constexpr std::int64_t kCreatedMs = 1700000000000;

NestedField field(std::int32_t id, std::string name, bool required, TypePtr type) {
  return NestedField{id, std::move(name), required, std::move(type), std::nullopt};
}

}  // namespace

Schema sample_schema() {
  NestedField name = field(2, "name", false, string_type());
  name.doc = "display name";
  return Schema(0,
                {field(1, "id", true, long_type()), name, field(3, "price", false, decimal_type(10, 2)),
                 field(4, "created_at", true, timestamptz_type()),
                 field(5, "location", true,
                       struct_type({field(6, "lat", true, double_type()), field(7, "lon", true, double_type()),
                                    field(8, "zip", true, string_type())})),
                 field(9, "tags", false, list_type(10, true, string_type())),
                 field(11, "attrs", false, map_type(12, string_type(), 13, false, long_type())),
                 field(14, "payload", false, binary_type()), field(15, "uid", false, uuid_type()),
                 field(16, "code", false, fixed_type(4)), field(17, "birthday", false, date_type()),
                 field(18, "alarm", false, time_type()), field(19, "active", false, boolean_type()),
                 field(20, "ratio", false, float_type()), field(21, "local_ts", false, timestamp_type()),
                 field(22, "count", false, int_type())},
                {1, 8});
}

PartitionSpec sample_spec() {
  return PartitionSpec(0, {{4, 1000, "created_at_day", Transform::day()},
                           {1, 1001, "id_bucket", Transform::bucket(16)},
                           {2, 1002, "name_trunc", Transform::truncate(4)}});
}

SortOrder sample_sort_order() {
  return SortOrder(1, {{Transform::identity(), 1, SortDirection::kAsc, NullOrder::kNullsFirst},
                       {Transform::day(), 4, SortDirection::kDesc, NullOrder::kNullsLast}});
}

TableMetadata sample_metadata(const std::string& location) {
  return TableMetadata::create(location, sample_schema(), sample_spec(), sample_sort_order(),
                               {{"owner", "binberg"}, {"write.format.default", "parquet"}}, kCreatedMs);
}

Snapshot next_snapshot(const TableMetadata& metadata, std::int64_t snapshot_id) {
  Snapshot snapshot;
  snapshot.snapshot_id = snapshot_id;
  snapshot.parent_snapshot_id = metadata.current_snapshot_id;
  snapshot.sequence_number = metadata.next_sequence_number();
  snapshot.timestamp_ms = kCreatedMs + 1000 * snapshot.sequence_number;
  snapshot.manifest_list = metadata.location + "/metadata/snap-" + std::to_string(snapshot_id) + ".avro";
  snapshot.summary = {{"added-data-files", std::to_string(snapshot.sequence_number)}, {"binberg.gtid", "0-1-42"}};
  return snapshot;
}

}  // namespace binberg::iceberg::test_tables
