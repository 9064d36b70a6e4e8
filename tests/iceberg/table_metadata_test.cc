// Table metadata v2: JSON round trips, the writer operations and the invariants of spec "Table
// Metadata".

#include "iceberg/table_metadata.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "sample_table.h"

namespace binberg::iceberg {
namespace {

using test_tables::next_snapshot;
using test_tables::sample_metadata;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr const char* kLocation = "/tmp/warehouse/db/events";

TableMetadata with_two_snapshots() {
  TableMetadata metadata = sample_metadata(kLocation);
  metadata.add_snapshot(next_snapshot(metadata, 101));
  Snapshot second = next_snapshot(metadata, 202);
  second.operation = SnapshotOperation::kOverwrite;
  metadata.add_snapshot(second);
  return metadata;
}

// Parses, changes one member of, and re-parses the JSON of valid metadata.
template <typename Change>
TableMetadata parse_changed(Change change) {
  Json json = table_metadata_to_json(with_two_snapshots());
  change(json);
  return table_metadata_from_json(json);
}

TEST(TableMetadataTest, CreateSetsEveryRequiredField) {
  const TableMetadata metadata = sample_metadata(kLocation + std::string("/"));
  EXPECT_EQ(metadata.location, kLocation);
  EXPECT_EQ(metadata.last_column_id, 22);
  EXPECT_EQ(metadata.last_partition_id, 1002);
  EXPECT_EQ(metadata.last_sequence_number, 0);
  EXPECT_EQ(metadata.last_updated_ms, 1700000000000);
  EXPECT_EQ(metadata.current_snapshot(), nullptr);
  EXPECT_NE(metadata.table_uuid, sample_metadata(kLocation).table_uuid);

  const Json json = table_metadata_to_json(metadata);
  for (const char* key :
       {"format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms", "last-column-id",
        "schemas", "current-schema-id", "partition-specs", "default-spec-id", "last-partition-id", "sort-orders",
        "default-sort-order-id", "properties", "refs", "snapshots", "snapshot-log", "metadata-log"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_EQ(json["format-version"], 2);
  EXPECT_EQ(json["current-snapshot-id"], -1);
  EXPECT_EQ(json["refs"], Json::object());
}

TEST(TableMetadataTest, AddSnapshotAdvancesSequenceMainRefAndLogs) {
  const TableMetadata metadata = with_two_snapshots();
  EXPECT_EQ(metadata.last_sequence_number, 2);
  EXPECT_EQ(metadata.current_snapshot_id, 202);
  EXPECT_EQ(metadata.current_snapshot()->parent_snapshot_id, 101);
  EXPECT_EQ(metadata.current_snapshot()->schema_id, 0);
  EXPECT_EQ(metadata.refs.at("main"), (SnapshotRef{202, RefType::kBranch, {}, {}, {}}));
  EXPECT_EQ(metadata.snapshot_log, (std::vector<SnapshotLogEntry>{{1700000001000, 101}, {1700000002000, 202}}));
  EXPECT_EQ(metadata.last_updated_ms, 1700000002000);
}

TEST(TableMetadataTest, JsonRoundTripKeepsEverything) {
  TableMetadata metadata = with_two_snapshots();
  metadata.refs.at("main").min_snapshots_to_keep = 5;
  metadata.refs["audit"] = SnapshotRef{101, RefType::kTag, {}, {}, 86400000};
  metadata.record_previous_metadata_file(kLocation + std::string("/metadata/00001-x.metadata.json"), 1700000001500);
  metadata.extra_fields["statistics"] = Json::array();

  const std::string text = table_metadata_to_string(metadata);
  const TableMetadata parsed = table_metadata_from_string(text);
  EXPECT_EQ(table_metadata_to_string(parsed), text);
  EXPECT_EQ(parsed.table_uuid, metadata.table_uuid);
  EXPECT_EQ(parsed.schemas, metadata.schemas);
  EXPECT_EQ(parsed.partition_specs, metadata.partition_specs);
  EXPECT_EQ(parsed.sort_orders, metadata.sort_orders);
  EXPECT_EQ(parsed.snapshots, metadata.snapshots);
  EXPECT_EQ(parsed.refs, metadata.refs);
  EXPECT_EQ(parsed.metadata_log, metadata.metadata_log);
  EXPECT_EQ(parsed.properties, metadata.properties);
  EXPECT_EQ(parsed.extra_fields, metadata.extra_fields);
}

TEST(TableMetadataTest, SnapshotJsonHasTheSpecFields) {
  const Json snapshot = table_metadata_to_json(with_two_snapshots())["snapshots"][1];
  EXPECT_EQ(snapshot.dump(),
            R"({"snapshot-id":202,"parent-snapshot-id":101,"sequence-number":2,"timestamp-ms":1700000002000,)"
            R"("manifest-list":"/tmp/warehouse/db/events/metadata/snap-202.avro",)"
            R"("summary":{"operation":"overwrite","added-data-files":"2","binberg.gtid":"0-1-42"},"schema-id":0})");
}

TEST(TableMetadataTest, KeepsUnknownMembersAndDropsV1Duplicates) {
  const TableMetadata parsed = parse_changed([](Json& json) {
    json["statistics"] = Json::parse(R"([{"snapshot-id":101,"statistics-path":"/s.puffin"}])");
    json["snapshots"][0]["first-row-id"] = 7;
    json["schema"] = json["schemas"][0];
  });
  EXPECT_EQ(parsed.extra_fields.dump(), R"({"statistics":[{"snapshot-id":101,"statistics-path":"/s.puffin"}]})");
  EXPECT_EQ(parsed.snapshots[0].extra_fields.dump(), R"({"first-row-id":7})");
  const Json written = table_metadata_to_json(parsed);
  EXPECT_FALSE(written.contains("schema"));
  EXPECT_EQ(written["snapshots"][0]["first-row-id"], 7);
}

TEST(TableMetadataTest, ReadsNoCurrentSnapshotAsMinusOneNullOrAbsent) {
  const TableMetadata empty = sample_metadata(kLocation);
  for (const Json& value : {Json(-1), Json(nullptr)}) {
    Json json = table_metadata_to_json(empty);
    json["current-snapshot-id"] = value;
    EXPECT_FALSE(table_metadata_from_json(json).current_snapshot_id) << value;
  }
  Json json = table_metadata_to_json(empty);
  json.erase("current-snapshot-id");
  EXPECT_FALSE(table_metadata_from_json(json).current_snapshot_id);
}

TEST(TableMetadataTest, DerivesTheMainBranchWhenRefsAreMissing) {
  const TableMetadata parsed = parse_changed([](Json& json) { json.erase("refs"); });
  EXPECT_EQ(parsed.refs.at("main").snapshot_id, 202);
}

TEST(TableMetadataTest, RejectsOtherFormatVersionsAndMissingFields) {
  EXPECT_THAT([] { parse_changed([](Json& json) { json["format-version"] = 3; }); },
              ThrowsMessage<Error>(HasSubstr("format-version 3 is not supported")));
  EXPECT_THAT([] { parse_changed([](Json& json) { json["format-version"] = 1; }); },
              ThrowsMessage<Error>(HasSubstr("format-version 1 is not supported")));
  for (const char* key : {"table-uuid", "location", "last-sequence-number", "last-updated-ms", "last-column-id",
                          "schemas", "current-schema-id", "partition-specs", "default-spec-id", "last-partition-id",
                          "sort-orders", "default-sort-order-id"}) {
    EXPECT_THAT([&] { parse_changed([&](Json& json) { json.erase(key); }); },
                ThrowsMessage<Error>(HasSubstr(fmt::format("missing required field \"{}\"", key))))
        << key;
  }
  EXPECT_THAT([] { parse_changed([](Json& json) { json["table-uuid"] = "not-a-uuid"; }); },
              ThrowsMessage<Error>(HasSubstr("invalid UUID \"not-a-uuid\"")));
  EXPECT_THAT([] { table_metadata_from_string("{\"format-version\": 2,"); },
              ThrowsMessage<Error>(HasSubstr("table metadata is not valid JSON")));
}

TEST(TableMetadataTest, RejectsBrokenInvariantsWithClearMessages) {
  const std::vector<std::pair<std::function<void(Json&)>, std::string>> cases = {
      {[](Json& j) { j["current-schema-id"] = 7; }, "current-schema-id 7 is not among the schemas (0)"},
      {[](Json& j) { j["default-spec-id"] = 4; }, "default-spec-id 4 is not among the partition specs (0)"},
      {[](Json& j) { j["default-sort-order-id"] = 9; }, "default-sort-order-id 9 is not among the sort orders (1)"},
      {[](Json& j) { j["last-column-id"] = 5; }, "schema 0 has field id 22 above last-column-id 5"},
      {[](Json& j) { j["last-partition-id"] = 1000; },
       "partition spec 0 field id 1001 is above last-partition-id 1000"},
      {[](Json& j) { j["last-sequence-number"] = 1; },
       "snapshot 202 has sequence number 2 above last-sequence-number 1"},
      {[](Json& j) { j["snapshots"][1]["schema-id"] = 7; }, "snapshot 202 references unknown schema id 7"},
      {[](Json& j) { j["snapshots"][1]["snapshot-id"] = 101; }, "snapshot id 101 is used twice"},
      {[](Json& j) { j["snapshots"][1]["sequence-number"] = 1; },
       "snapshot 202 has sequence number 1, not above its parent 101's 1"},
      {[](Json& j) { j["current-snapshot-id"] = 101; }, "the main branch must reference current-snapshot-id 101"},
      {[](Json& j) { j["current-snapshot-id"] = 303; }, "current-snapshot-id 303 is not among the snapshots"},
      {[](Json& j) {
         j["refs"]["old"] = Json{{"snapshot-id", 5}, {"type", "tag"}};
       },
       "ref \"old\" references unknown snapshot 5"},
      {[](Json& j) {
         j["refs"]["old"] = Json{{"snapshot-id", 101}, {"type", "label"}};
       },
       "ref \"old\": type must be \"branch\" or \"tag\""},
      {[](Json& j) { j["snapshots"][0]["summary"].erase("operation"); },
       "snapshot 101 summary is missing required field \"operation\""},
      {[](Json& j) { j["snapshots"][0]["summary"]["operation"] = "merge"; },
       "snapshot 101: unknown operation \"merge\""},
      {[](Json& j) { j["snapshots"][0]["summary"]["added-data-files"] = 1; },
       "snapshot 101 summary value of \"added-data-files\" must be a string"},
      {[](Json& j) { j["snapshots"][0].erase("manifest-list"); },
       "snapshot 101 is missing required field \"manifest-list\""},
      {[](Json& j) { j["properties"]["retries"] = 4; }, "table properties value of \"retries\" must be a string"},
      {[](Json& j) { j["partition-specs"][0]["fields"][0]["source-id"] = 99; }, "source field 99 is not in schema 0"},
      {[](Json& j) { j["sort-orders"][0]["fields"][0]["source-id"] = 99; },
       "sort order 1: source field 99 is not in schema 0"},
      {[](Json& j) { j["last-column-id"] = "22"; }, "table metadata \"last-column-id\" must be an integer, got \"22\""},
  };
  for (const auto& [change, message] : cases) {
    EXPECT_THAT([&] { parse_changed(change); }, ThrowsMessage<Error>(HasSubstr(message))) << message;
  }
}

TEST(TableMetadataTest, AddSnapshotEnforcesItsRules) {
  TableMetadata metadata = with_two_snapshots();
  Snapshot snapshot = next_snapshot(metadata, 303);
  const auto add = [&](const std::function<void(Snapshot&)>& change) {
    TableMetadata copy = metadata;
    Snapshot changed = snapshot;
    change(changed);
    copy.add_snapshot(changed);
  };
  EXPECT_THAT(
      [&] { add([](Snapshot& s) { s.snapshot_id = 101; }); },
      ThrowsMessage<Error>(HasSubstr("cannot add snapshot 101: the table already has a snapshot with that id")));
  EXPECT_THAT([&] { add([](Snapshot& s) { s.snapshot_id = -1; }); },
              ThrowsMessage<Error>(HasSubstr("must be positive")));
  EXPECT_THAT([&] { add([](Snapshot& s) { s.sequence_number = 2; }); },
              ThrowsMessage<Error>(
                  HasSubstr("cannot add snapshot 303: sequence number 2 is not above last-sequence-number 2")));
  EXPECT_THAT(
      [&] { add([](Snapshot& s) { s.parent_snapshot_id = 101; }); },
      ThrowsMessage<Error>(HasSubstr("cannot add snapshot 303: its parent 101 is not the current snapshot 202")));
  EXPECT_THAT([&] { add([](Snapshot& s) { s.parent_snapshot_id.reset(); }); },
              ThrowsMessage<Error>(HasSubstr("its parent (none) is not the current snapshot 202")));
  EXPECT_THAT([&] { add([](Snapshot& s) { s.schema_id = 3; }); },
              ThrowsMessage<Error>(HasSubstr("snapshot 303 references unknown schema id 3")));
  EXPECT_THAT([&] { add([](Snapshot& s) { s.summary["operation"] = "append"; }); },
              ThrowsMessage<Error>(HasSubstr("must not hold \"operation\"")));
  // A failed add leaves the metadata unchanged.
  EXPECT_EQ(metadata.snapshots.size(), 2u);
  EXPECT_EQ(metadata.current_snapshot_id, 202);

  metadata.partition_specs.push_back(PartitionSpec(1, {{1, 1003, "z", Transform::parse("zorder")}}));
  metadata.last_partition_id = 1003;
  metadata.default_spec_id = 1;
  EXPECT_THAT([&] { metadata.add_snapshot(snapshot); },
              ThrowsMessage<Error>(HasSubstr("partition spec 1 has a transform this writer does not know")));
}

TEST(TableMetadataTest, NewSnapshotIdsArePositiveAndUnused) {
  const TableMetadata metadata = with_two_snapshots();
  for (int i = 0; i < 100; ++i) {
    const std::int64_t id = metadata.new_snapshot_id();
    EXPECT_GT(id, 0);
    EXPECT_EQ(metadata.find_snapshot(id), nullptr);
  }
}

TEST(TableMetadataTest, SchemaEvolutionAssignsIdsAndChecksTheRules) {
  TableMetadata metadata = with_two_snapshots();
  std::vector<NestedField> fields = metadata.current_schema().fields();
  fields.erase(fields.begin() + 11);                                    // drop "alarm" (id 18)
  fields.push_back(NestedField{23, "note", false, string_type(), {}});  // new optional column
  fields.back().doc = "added later";
  fields[fields.size() - 2].type = long_type();  // "count": int -> long
  const Schema evolved(0, fields, {1, 8});

  EXPECT_EQ(metadata.add_schema(evolved), 1);
  EXPECT_EQ(metadata.add_schema(evolved.with_schema_id(5)), 1);  // same structure: same schema
  EXPECT_EQ(metadata.last_column_id, 23);
  metadata.set_current_schema(1);
  EXPECT_EQ(metadata.current_schema().find_field("note")->id, 23);
  EXPECT_EQ(table_metadata_from_json(table_metadata_to_json(metadata)).schemas.size(), 2u);

  const auto add_with = [&](NestedField field) {
    std::vector<NestedField> changed = metadata.current_schema().fields();
    changed.push_back(std::move(field));
    TableMetadata copy = metadata;
    copy.add_schema(Schema(0, changed));
  };
  EXPECT_THAT(
      [&] {
        add_with(NestedField{18, "alarm_again", false, time_type(), {}});
      },
      ThrowsMessage<Error>(HasSubstr("field 18 (\"alarm_again\") is new but its id is not above last-column-id 23")));
  EXPECT_THAT(
      [&] {
        add_with(NestedField{24, "must", true, string_type(), {}});
      },
      ThrowsMessage<Error>(HasSubstr("field 24 (\"must\") is new and required; new fields must be optional")));
  EXPECT_NO_THROW(
      add_with(NestedField{24, "pair", false, struct_type({NestedField{25, "left", true, int_type(), {}}}), {}}));

  std::vector<NestedField> narrowed = metadata.current_schema().fields();
  narrowed[0].type = int_type();
  EXPECT_THAT(
      [&] {
        TableMetadata(metadata).add_schema(Schema(0, narrowed, {1, 8}));
      },
      ThrowsMessage<Error>(HasSubstr("field 1 (\"id\") cannot change type from long to int")));
  std::vector<NestedField> tightened = metadata.current_schema().fields();
  tightened[1].required = true;
  EXPECT_THAT(
      [&] {
        TableMetadata(metadata).add_schema(Schema(0, tightened, {1, 8}));
      },
      ThrowsMessage<Error>(HasSubstr("field 2 (\"name\") cannot change from optional to required")));
  EXPECT_THAT([&] { metadata.set_current_schema(4); }, ThrowsMessage<Error>(HasSubstr("cannot set current schema 4")));
}

TEST(TableMetadataTest, SetCurrentSchemaKeepsTheDefaultSpecBound) {
  TableMetadata metadata = with_two_snapshots();
  std::vector<NestedField> fields = metadata.current_schema().fields();
  fields.erase(fields.begin());  // drop "id", the bucket source and an identifier field
  const std::int32_t id = metadata.add_schema(Schema(0, fields, {8}));
  EXPECT_THAT([&] { metadata.set_current_schema(id); },
              ThrowsMessage<Error>(HasSubstr("source field 1 is not in schema 1")));
  EXPECT_EQ(metadata.current_schema_id, 0);
}

TEST(TableMetadataTest, MetadataLogIsBoundedByTheTableProperty) {
  TableMetadata metadata = sample_metadata(kLocation);
  metadata.properties[kPreviousVersionsMaxProperty] = "2";
  for (int version = 0; version < 4; ++version) {
    metadata.record_previous_metadata_file(fmt::format("{}/metadata/{:05d}-x.metadata.json", kLocation, version),
                                           version);
  }
  ASSERT_EQ(metadata.metadata_log.size(), 2u);
  EXPECT_EQ(metadata.metadata_log[0].timestamp_ms, 2);
  EXPECT_EQ(metadata.metadata_log[1].metadata_file, std::string(kLocation) + "/metadata/00003-x.metadata.json");
  metadata.properties[kPreviousVersionsMaxProperty] = "lots";
  EXPECT_THAT(
      [&] { metadata.validate(); },
      ThrowsMessage<Error>(HasSubstr("write.metadata.previous-versions-max must be a positive integer, got \"lots\"")));
}

}  // namespace
}  // namespace binberg::iceberg
