#include "sample_table.h"

#include "iceberg/single_value.h"

namespace binberg::iceberg::test_tables {
namespace {

constexpr std::int64_t kCreatedMs = 1700000000000;

NestedField field(std::int32_t id, std::string name, bool required, TypePtr type) {
  return NestedField{id, std::move(name), required, std::move(type), std::nullopt};
}

}  // namespace

Schema all_types_schema() {
  return Schema(
      0, {NestedField{1, "b", false, boolean_type(), {}}, NestedField{2, "i", false, int_type(), {}},
          NestedField{3, "l", false, long_type(), {}}, NestedField{4, "f", false, float_type(), {}},
          NestedField{5, "d", false, double_type(), {}}, NestedField{6, "dec", false, decimal_type(9, 2), {}},
          NestedField{7, "dt", false, date_type(), {}}, NestedField{8, "tm", false, time_type(), {}},
          NestedField{9, "ts", false, timestamp_type(), {}}, NestedField{10, "tstz", false, timestamptz_type(), {}},
          NestedField{11, "s", false, string_type(), {}}, NestedField{12, "u", false, uuid_type(), {}},
          NestedField{13, "fx", false, fixed_type(3), {}}, NestedField{14, "bin", false, binary_type(), {}},
          NestedField{15, "big", false, decimal_type(38, 10), {}}});
}

PartitionSpec all_transforms_spec(std::int32_t spec_id, const std::string& identity_suffix) {
  std::vector<PartitionField> fields;
  for (const auto& column : all_types_schema().fields()) {
    fields.push_back({column.id, 1000 + column.id - 1, column.name + identity_suffix, Transform::identity()});
  }
  fields.push_back({3, 1015, "l_bucket", Transform::bucket(8)});
  fields.push_back({11, 1016, "s_trunc", Transform::truncate(2)});
  fields.push_back({6, 1017, "dec_trunc", Transform::truncate(10)});
  fields.push_back({7, 1018, "dt_year", Transform::year()});
  fields.push_back({9, 1019, "ts_month", Transform::month()});
  fields.push_back({10, 1020, "tstz_day", Transform::day()});
  fields.push_back({9, 1021, "ts_hour", Transform::hour()});
  fields.push_back({2, 1022, "i_void", Transform::always_null()});
  fields.push_back({11, 1023, "name with-dash", Transform::identity()});
  return PartitionSpec(spec_id, fields);
}

void set_sample_statistics(DataFile& file) {
  file.column_sizes = {{1, 100}, {2, 200}};
  file.value_counts = {{1, 10}, {2, 10}};
  file.null_value_counts = {{1, 0}, {2, 3}};
  file.nan_value_counts = {{5, 1}};
  file.lower_bounds = {{2, to_single_value(*int_type(), std::int32_t{-3})}, {11, Bytes{'a'}}};
  file.upper_bounds = {{2, to_single_value(*int_type(), std::int32_t{7})}, {11, Bytes{'z', 'z'}}};
  file.key_metadata = Bytes{0xDE, 0xAD};
  file.split_offsets = {4, 1024};
  file.sort_order_id = 0;
}

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
