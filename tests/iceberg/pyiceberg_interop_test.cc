// Table metadata interop with an independent implementation, pyiceberg (tests/iceberg/
// pyiceberg_metadata.py, run with the project venv): pyiceberg parses what binberg writes, binberg
// parses what pyiceberg writes, and both describe the same table in the same terms.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "iceberg/metadata_file.h"
#include "sample_table.h"
#include "support/temp_dir.h"
#include "support/test_services.h"  // run_command

namespace binberg::iceberg {
namespace {

// Compared as unordered JSON: only the members matter, not their order.
using Description = nlohmann::json;

Description unordered(const Json& json) { return Description::parse(json.dump()); }

Json describe_field(const NestedField& field) {
  Json json{{"id", field.id}, {"name", field.name}, {"required", field.required}, {"type", type_to_json(*field.type)}};
  if (field.doc) json["doc"] = *field.doc;
  return json;
}

Json nullable(const auto& optional) { return optional ? Json(*optional) : Json(nullptr); }

// The C++ model in the terms of pyiceberg_metadata.py's describe(), built from the model, not from
// the JSON serialization, so that a serialization mistake shows up as a difference.
Description describe(const TableMetadata& metadata) {
  Json schemas = Json::array();
  for (const auto& schema : metadata.schemas) {
    Json fields = Json::array();
    for (const auto& field : schema.fields()) fields.push_back(describe_field(field));
    schemas.push_back({{"schema-id", schema.schema_id()},
                       {"identifier-field-ids", schema.identifier_field_ids()},
                       {"fields", fields}});
  }
  Json snapshots = Json::array();
  for (const auto& snapshot : metadata.snapshots) {
    Json summary = to_json(snapshot.summary);
    summary["operation"] = operation_name(snapshot.operation);
    snapshots.push_back({{"snapshot-id", snapshot.snapshot_id},
                         {"parent-snapshot-id", nullable(snapshot.parent_snapshot_id)},
                         {"sequence-number", snapshot.sequence_number},
                         {"timestamp-ms", snapshot.timestamp_ms},
                         {"manifest-list", snapshot.manifest_list},
                         {"summary", summary},
                         {"schema-id", nullable(snapshot.schema_id)}});
  }
  Json refs = Json::object();
  for (const auto& [name, ref] : metadata.refs) {
    refs[name] = {{"snapshot-id", ref.snapshot_id}, {"type", ref.type == RefType::kBranch ? "branch" : "tag"}};
  }
  const Json json = table_metadata_to_json(metadata);  // specs, orders and logs: already plain data
  return unordered(Json{{"format-version", kFormatVersion},
                        {"table-uuid", metadata.table_uuid.to_string()},
                        {"location", metadata.location},
                        {"last-sequence-number", metadata.last_sequence_number},
                        {"last-updated-ms", metadata.last_updated_ms},
                        {"last-column-id", metadata.last_column_id},
                        {"current-schema-id", metadata.current_schema_id},
                        {"schemas", schemas},
                        {"default-spec-id", metadata.default_spec_id},
                        {"last-partition-id", metadata.last_partition_id},
                        {"partition-specs", json["partition-specs"]},
                        {"default-sort-order-id", metadata.default_sort_order_id},
                        {"sort-orders", json["sort-orders"]},
                        {"properties", to_json(metadata.properties)},
                        {"current-snapshot-id", nullable(metadata.current_snapshot_id)},
                        {"snapshots", snapshots},
                        {"refs", refs},
                        {"snapshot-log", json["snapshot-log"]},
                        {"metadata-log", json["metadata-log"]}});
}

Description run_pyiceberg(const std::string& arguments) {
  const std::string script = std::string(BINBERG_ICEBERG_TEST_DIR) + "/pyiceberg_metadata.py";
  return Description::parse(
      binberg::testing::run_command(fmt::format("'{}' '{}' {}", BINBERG_PYTHON, script, arguments)));
}

TEST(PyicebergInteropTest, PyicebergReadsWhatBinbergWrites) {
  binberg::testing::TempDir dir;
  TableMetadata metadata = test_tables::sample_metadata("file://" + (dir.path() / "events").string());
  metadata.add_snapshot(test_tables::next_snapshot(metadata, 4101));  // manifest lists need not exist
  const std::string first_file = write_metadata_file(metadata, 1);
  metadata.record_previous_metadata_file(first_file, metadata.last_updated_ms);
  Snapshot second = test_tables::next_snapshot(metadata, 4202);
  second.operation = SnapshotOperation::kOverwrite;
  metadata.add_snapshot(second);
  metadata.refs["audit"] = SnapshotRef{4101, RefType::kTag, {}, {}, 86400000};
  const std::string file = write_metadata_file(metadata, 2);

  const Description seen_by_pyiceberg = run_pyiceberg(fmt::format("describe '{}'", local_path(file).string()));
  EXPECT_EQ(seen_by_pyiceberg, describe(metadata)) << seen_by_pyiceberg.dump(2);

  // Spot checks, so the comparison cannot pass by both sides missing the same thing.
  const auto& schema = seen_by_pyiceberg["schemas"][0];
  EXPECT_EQ(schema["identifier-field-ids"], Description::parse("[1, 8]"));
  EXPECT_EQ(schema["fields"][2]["type"], "decimal(10,2)");
  EXPECT_EQ(schema["fields"][4]["type"]["fields"][2]["id"], 8);
  EXPECT_EQ(schema["fields"][5]["type"]["element-id"], 10);
  EXPECT_EQ(schema["fields"][6]["type"]["value-required"], false);
  EXPECT_EQ(seen_by_pyiceberg["partition-specs"][0]["fields"][1]["transform"], "bucket[16]");
  EXPECT_EQ(seen_by_pyiceberg["snapshots"][1]["sequence-number"], 2);
  EXPECT_EQ(seen_by_pyiceberg["snapshots"][1]["summary"]["operation"], "overwrite");
  EXPECT_EQ(seen_by_pyiceberg["snapshots"][1]["summary"]["binberg.gtid"], "0-1-42");
  EXPECT_EQ(seen_by_pyiceberg["refs"]["main"]["snapshot-id"], 4202);
  EXPECT_EQ(seen_by_pyiceberg["refs"]["audit"]["type"], "tag");
  EXPECT_EQ(seen_by_pyiceberg["metadata-log"][0]["metadata-file"], first_file);
}

TEST(PyicebergInteropTest, PyicebergReadsNewTableWithoutSnapshots) {
  binberg::testing::TempDir dir;
  const TableMetadata metadata = test_tables::sample_metadata((dir.path() / "empty").string());
  const std::string file = write_metadata_file(metadata, 0);
  const Description seen_by_pyiceberg = run_pyiceberg(fmt::format("describe '{}'", file));
  EXPECT_EQ(seen_by_pyiceberg, describe(metadata)) << seen_by_pyiceberg.dump(2);
  EXPECT_TRUE(seen_by_pyiceberg["current-snapshot-id"].is_null());
}

TEST(PyicebergInteropTest, BinbergReadsWhatPyicebergWrites) {
  binberg::testing::TempDir dir;
  const std::string path = (dir.path() / "pyiceberg.metadata.json").string();
  const Description written_by_pyiceberg = run_pyiceberg(fmt::format("create '{}' 'file:///warehouse/py'", path));

  const TableMetadata metadata = read_metadata_file(path);
  EXPECT_EQ(describe(metadata), written_by_pyiceberg) << describe(metadata).dump(2);

  const Schema& schema = metadata.current_schema();
  EXPECT_EQ(schema.identifier_field_ids(), (std::vector<std::int32_t>{1, 15}));  // pyiceberg reassigns ids
  EXPECT_EQ(*schema.find_field("amount")->type, *decimal_type(12, 3));
  EXPECT_EQ(schema.find_field("point.x")->id, 15);
  EXPECT_EQ(schema.find_field("attrs.value")->type->kind(), TypeKind::kBinary);
  EXPECT_EQ(schema.find_field("id")->doc, "row key");
  EXPECT_EQ(metadata.default_spec().fields()[1].transform, Transform::bucket(8));
  EXPECT_EQ(metadata.default_sort_order().fields()[0].direction, SortDirection::kDesc);
  EXPECT_EQ(metadata.current_snapshot()->parent_snapshot_id, 7001);
  EXPECT_EQ(metadata.current_snapshot()->summary.at("added-records"), "20");
  EXPECT_EQ(metadata.refs.at("main").snapshot_id, 7002);
  EXPECT_EQ(metadata.metadata_log.size(), 2u);
  // What pyiceberg writes and binberg does not model survives a rewrite.
  EXPECT_TRUE(metadata.extra_fields.contains("statistics"));
  EXPECT_EQ(table_metadata_from_string(table_metadata_to_string(metadata)).extra_fields, metadata.extra_fields);
}

}  // namespace
}  // namespace binberg::iceberg
