// Manifests and manifest lists (spec "Manifests", "Manifest Lists"): binberg write -> binberg read
// round trips, inheritance, partition summaries, the Avro layout, and corrupt input.

#include "iceberg/manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "avro/container.h"
#include "core/error.h"
#include "core/failpoint.h"
#include "iceberg/manifest_list.h"
#include "iceberg/single_value.h"
#include "sample_table.h"
#include "support/temp_dir.h"

namespace binberg::iceberg {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr std::int64_t kSnapshot = 7001;

using test_tables::all_types_schema;

PartitionSpec all_transforms_spec() { return test_tables::all_transforms_spec(3); }

std::vector<Literal> row(int variant) {
  if (variant == 0) {
    return {true,
            std::int32_t{7},
            std::int64_t{123456789012},
            1.5f,
            -2.25,
            Decimal{12345},
            std::int32_t{19000},
            std::int64_t{3600000000},
            std::int64_t{1700000000000000},
            std::int64_t{1700000000000001},
            std::string("hello"),
            Uuid::parse("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
            Bytes{1, 2, 3},
            Bytes{0, 255},
            Decimal{-(Int128{1} << 100)}};
  }
  if (variant == 1) {
    return {false,
            std::int32_t{-3},
            std::int64_t{-5},
            -0.0f,
            std::nan(""),
            Decimal{-1},
            std::int32_t{-1},
            std::int64_t{0},
            std::int64_t{-1},
            std::int64_t{0},
            std::string("\xC3\xA9t\xC3\xA9"),  // "été": above "hello" in unsigned byte order
            Uuid::parse("00000000-0000-0000-0000-000000000001"),
            Bytes{255, 0, 0},
            Bytes{},
            Decimal{(Int128{1} << 120)}};
  }
  return std::vector<Literal>(15, std::monostate{});
}

std::vector<Literal> partition_of(int variant) {
  const Schema schema = all_types_schema();
  const std::vector<Literal> values = row(variant);
  return all_transforms_spec().partition_values(schema, [&](std::int32_t id) { return values[id - 1]; });
}

DataFile data_file(const std::string& path, int variant) {
  DataFile file;
  file.file_path = path;
  file.partition = partition_of(variant);
  file.record_count = 10 + variant;
  file.file_size_in_bytes = 4096 + variant;
  test_tables::set_sample_statistics(file);
  return file;
}

std::vector<ManifestEntry> data_entries() {
  return {
      ManifestEntry{ManifestEntryStatus::kAdded, std::nullopt, std::nullopt, std::nullopt,
                    data_file("/d/a.parquet", 0)},
      ManifestEntry{ManifestEntryStatus::kExisting, 5001, 3, 2, data_file("/d/b.parquet", 1)},
      ManifestEntry{ManifestEntryStatus::kDeleted, kSnapshot, 4, 4, data_file("/d/c.parquet", 2)},
      ManifestEntry{ManifestEntryStatus::kAdded, kSnapshot, std::nullopt, std::nullopt, data_file("/d/d.parquet", 0)},
  };
}

std::string location(const testing::TempDir& dir, const std::string& name) {
  return (dir.path() / "metadata" / name).string();
}

// Entries as a reader sees them once MANIFEST is in a list with sequence number SEQUENCE.
std::vector<ManifestEntry> inherited(std::vector<ManifestEntry> entries, std::int64_t sequence) {
  for (auto& entry : entries) {
    if (!entry.snapshot_id) entry.snapshot_id = kSnapshot;
    if (entry.status == ManifestEntryStatus::kAdded) {
      if (!entry.sequence_number) entry.sequence_number = sequence;
      if (!entry.file_sequence_number) entry.file_sequence_number = sequence;
    }
  }
  return entries;
}

// NaN != NaN: compare partitions through their binary form.
void expect_same_entries(const std::vector<ManifestEntry>& actual, const std::vector<ManifestEntry>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    SCOPED_TRACE(i);
    ManifestEntry a = actual[i];
    ManifestEntry e = expected[i];
    ASSERT_EQ(a.data_file.partition.size(), e.data_file.partition.size());
    for (std::size_t p = 0; p < a.data_file.partition.size(); ++p) {
      auto& x = a.data_file.partition[p];
      auto& y = e.data_file.partition[p];
      if (const auto* d = std::get_if<double>(&x);
          d && std::isnan(*d) && std::holds_alternative<double>(y) && std::isnan(std::get<double>(y))) {
        x = y = std::monostate{};
      }
    }
    EXPECT_EQ(a.status, e.status);
    EXPECT_EQ(a.snapshot_id, e.snapshot_id);
    EXPECT_EQ(a.sequence_number, e.sequence_number);
    EXPECT_EQ(a.file_sequence_number, e.file_sequence_number);
    EXPECT_TRUE(a.data_file == e.data_file) << a.data_file.file_path;
  }
}

TEST(ManifestTest, RoundTripsDataManifestWithEveryPartitionType) {
  testing::TempDir dir;
  const std::string path = location(dir, "m0.avro");
  const auto entries = data_entries();
  ManifestFile manifest =
      write_manifest(path, all_types_schema(), all_transforms_spec(), ManifestContent::kData, kSnapshot, entries);
  EXPECT_EQ(manifest.manifest_path, path);
  EXPECT_EQ(manifest.manifest_length, static_cast<std::int64_t>(std::filesystem::file_size(path)));
  EXPECT_EQ(manifest.partition_spec_id, 3);
  EXPECT_EQ(manifest.content, ManifestContent::kData);
  EXPECT_EQ(manifest.added_snapshot_id, kSnapshot);
  EXPECT_EQ(manifest.added_files_count, 2);
  EXPECT_EQ(manifest.existing_files_count, 1);
  EXPECT_EQ(manifest.deleted_files_count, 1);
  EXPECT_EQ(manifest.added_rows_count, 20);
  EXPECT_EQ(manifest.existing_rows_count, 11);
  EXPECT_EQ(manifest.deleted_rows_count, 12);
  EXPECT_EQ(manifest.sequence_number, kUnassignedSequenceNumber);
  EXPECT_EQ(manifest.min_sequence_number, 3);  // the EXISTING entry's; the inheriting ones get more

  manifest.sequence_number = 9;
  manifest.min_sequence_number = 3;
  expect_same_entries(read_manifest(manifest), inherited(entries, 9));
}

TEST(ManifestTest, PartitionValuesKeepTheirTypes) {
  const auto partition = partition_of(0);
  ASSERT_EQ(partition.size(), 24u);
  // Fields 0-14 are identities of the 15 columns.
  EXPECT_TRUE(std::holds_alternative<std::int32_t>(partition[15]));    // bucket[8]
  EXPECT_EQ(partition[16], Literal(std::string("he")));                // truncate[2]
  EXPECT_EQ(partition[17], Literal(Decimal{12340}));                   // truncate[10] of a decimal
  EXPECT_TRUE(std::holds_alternative<std::int32_t>(partition[18]));    // year
  EXPECT_TRUE(std::holds_alternative<std::monostate>(partition[22]));  // void
}

TEST(ManifestTest, SummarizesPartitionValues) {
  testing::TempDir dir;
  const auto entries = data_entries();
  const ManifestFile manifest = write_manifest(location(dir, "m.avro"), all_types_schema(), all_transforms_spec(),
                                               ManifestContent::kData, kSnapshot, entries);
  ASSERT_EQ(manifest.partitions.size(), 24u);
  const auto bound = [](const Type& type, const Literal& value) { return to_single_value(type, value); };
  // Every field has a null (variant 2) and the bounds of variants 0 and 1.
  for (const auto& summary : manifest.partitions) EXPECT_TRUE(summary.contains_null);
  const auto& b = manifest.partitions[0];
  EXPECT_EQ(b.lower_bound, bound(*boolean_type(), false));
  EXPECT_EQ(b.upper_bound, bound(*boolean_type(), true));
  EXPECT_EQ(b.contains_nan, false);
  const auto& f = manifest.partitions[3];  // 1.5 and -0.0
  EXPECT_EQ(f.lower_bound, bound(*float_type(), -0.0f));
  EXPECT_EQ(f.upper_bound, bound(*float_type(), 1.5f));
  EXPECT_EQ(f.contains_nan, false);
  const auto& d = manifest.partitions[4];  // -2.25 and NaN: NaN is no bound
  EXPECT_EQ(d.contains_nan, true);
  EXPECT_EQ(d.lower_bound, bound(*double_type(), -2.25));
  EXPECT_EQ(d.upper_bound, bound(*double_type(), -2.25));
  const auto& dec = manifest.partitions[5];
  EXPECT_EQ(dec.lower_bound, bound(*decimal_type(9, 2), Decimal{-1}));
  EXPECT_EQ(dec.upper_bound, bound(*decimal_type(9, 2), Decimal{12345}));
  const auto& s = manifest.partitions[10];
  EXPECT_EQ(s.lower_bound, bound(*string_type(), std::string("hello")));
  EXPECT_EQ(s.upper_bound, bound(*string_type(), std::string("\xC3\xA9t\xC3\xA9")));
  const auto& u = manifest.partitions[11];
  EXPECT_EQ(u.lower_bound, bound(*uuid_type(), Uuid::parse("00000000-0000-0000-0000-000000000001")));
  const auto& fx = manifest.partitions[12];
  EXPECT_EQ(fx.lower_bound, (Bytes{1, 2, 3}));
  EXPECT_EQ(fx.upper_bound, (Bytes{255, 0, 0}));
  const auto& bin = manifest.partitions[13];
  EXPECT_EQ(bin.lower_bound, Bytes{});
  const auto& v = manifest.partitions[22];  // void: only nulls
  EXPECT_FALSE(v.lower_bound.has_value());
  EXPECT_FALSE(v.upper_bound.has_value());

  // Without nulls or NaN.
  std::vector<ManifestEntry> plain = {data_entries()[0]};
  const ManifestFile one = write_manifest(location(dir, "one.avro"), all_types_schema(), all_transforms_spec(),
                                          ManifestContent::kData, kSnapshot, plain);
  EXPECT_FALSE(one.partitions[0].contains_null);
  EXPECT_EQ(one.partitions[4].contains_nan, false);
  EXPECT_EQ(one.partitions[4].lower_bound, one.partitions[4].upper_bound);
}

TEST(ManifestTest, RoundTripsDeleteManifest) {
  testing::TempDir dir;
  DataFile positions = data_file("/d/pos-deletes.parquet", 0);
  positions.content = FileContent::kPositionDeletes;
  positions.sort_order_id.reset();
  positions.key_metadata.reset();
  DataFile equality = data_file("/d/eq-deletes.parquet", 1);
  equality.content = FileContent::kEqualityDeletes;
  equality.equality_ids = {1, 3};
  equality.column_sizes.clear();
  equality.lower_bounds.clear();
  equality.split_offsets.clear();
  const std::vector<ManifestEntry> entries = {
      ManifestEntry{ManifestEntryStatus::kAdded, kSnapshot, std::nullopt, std::nullopt, positions},
      ManifestEntry{ManifestEntryStatus::kAdded, kSnapshot, std::nullopt, std::nullopt, equality}};
  ManifestFile manifest = write_manifest(location(dir, "d.avro"), all_types_schema(), all_transforms_spec(),
                                         ManifestContent::kDeletes, kSnapshot, entries);
  EXPECT_EQ(manifest.content, ManifestContent::kDeletes);
  EXPECT_EQ(manifest.min_sequence_number, kUnassignedSequenceNumber);
  // Read before a list assigned a sequence number: nothing to inherit yet.
  const auto unassigned = read_manifest(manifest);
  ASSERT_EQ(unassigned.size(), 2u);
  EXPECT_EQ(unassigned[0].sequence_number, std::nullopt);
  manifest.sequence_number = manifest.min_sequence_number = 5;
  expect_same_entries(read_manifest(manifest), inherited(entries, 5));

  std::ifstream in(manifest.manifest_path, std::ios::binary);
  avro::ContainerReader reader(in);
  EXPECT_EQ(reader.metadata().at("content"), "deletes");
  EXPECT_EQ(reader.metadata().at("format-version"), "2");
  EXPECT_EQ(reader.metadata().at("partition-spec-id"), "3");
  EXPECT_EQ(reader.metadata().at("schema-id"), "0");
  EXPECT_EQ(reader.codec(), avro::Codec::kDeflate);
  EXPECT_EQ(Json::parse(reader.metadata().at("partition-spec")),
            partition_spec_to_json(all_transforms_spec())["fields"]);
  EXPECT_EQ(schema_from_json(Json::parse(reader.metadata().at("schema"))), all_types_schema());
}

TEST(ManifestTest, WritesTheSpecFieldIds) {
  testing::TempDir dir;
  const ManifestFile manifest = write_manifest(location(dir, "m.avro"), all_types_schema(), all_transforms_spec(),
                                               ManifestContent::kData, kSnapshot, data_entries());
  std::ifstream in(manifest.manifest_path, std::ios::binary);
  avro::ContainerReader reader(in);
  const avro::Node& root = reader.writer_schema().root();
  EXPECT_EQ(root.name, "manifest_entry");
  const auto id_of = [](const avro::Node& record, std::string_view name) {
    const avro::Field* field = record.find_field(name);
    return field == nullptr ? -1 : field->properties.value("field-id", -1);
  };
  EXPECT_EQ(id_of(root, "status"), 0);
  EXPECT_EQ(id_of(root, "snapshot_id"), 1);
  EXPECT_EQ(id_of(root, "sequence_number"), 3);
  EXPECT_EQ(id_of(root, "file_sequence_number"), 4);
  EXPECT_EQ(id_of(root, "data_file"), 2);
  const avro::Node& data_file = *root.find_field("data_file")->type;
  EXPECT_EQ(data_file.name, "r2");
  const std::vector<std::pair<std::string, int>> ids = {
      {"content", 134},           {"file_path", 100},          {"file_format", 101},  {"partition", 102},
      {"record_count", 103},      {"file_size_in_bytes", 104}, {"column_sizes", 108}, {"value_counts", 109},
      {"null_value_counts", 110}, {"nan_value_counts", 137},   {"lower_bounds", 125}, {"upper_bounds", 128},
      {"key_metadata", 131},      {"split_offsets", 132},      {"equality_ids", 135}, {"sort_order_id", 140}};
  for (const auto& [name, id] : ids) EXPECT_EQ(id_of(data_file, name), id) << name;
  const avro::Node& partition = *data_file.find_field("partition")->type;
  EXPECT_EQ(partition.name, "r102");
  ASSERT_EQ(partition.fields.size(), 24u);
  EXPECT_EQ(partition.fields[23].name, "name_x20with_x2Ddash");
  for (std::size_t i = 0; i < partition.fields.size(); ++i) {
    EXPECT_EQ(partition.fields[i].properties["field-id"], 1000 + static_cast<int>(i));
  }
  // Logical types of partition fields (optional: ["null", T]).
  const auto branch = [&](std::size_t i) { return partition.fields[i].type->branches.at(1); };
  EXPECT_EQ(branch(5)->logical_type, avro::LogicalType::kDecimal);
  EXPECT_EQ(branch(5)->fixed_size, 4u);
  EXPECT_EQ(branch(14)->fixed_size, 16u);
  EXPECT_EQ(branch(6)->logical_type, avro::LogicalType::kDate);
  EXPECT_EQ(branch(7)->logical_type, avro::LogicalType::kTimeMicros);
  EXPECT_EQ(branch(8)->properties["adjust-to-utc"], false);
  EXPECT_EQ(branch(9)->properties["adjust-to-utc"], true);
  EXPECT_EQ(branch(11)->logical_type, avro::LogicalType::kUuid);
  EXPECT_EQ(branch(12)->fixed_size, 3u);
  const avro::Node& sizes = *data_file.find_field("column_sizes")->type->branches.at(1);
  EXPECT_EQ(sizes.type, avro::Type::kArray);
  EXPECT_EQ(sizes.properties["logicalType"], "map");
  EXPECT_EQ(sizes.items->name, "k117_v118");
  EXPECT_EQ(id_of(*sizes.items, "key"), 117);
  EXPECT_EQ(id_of(*sizes.items, "value"), 118);
  EXPECT_EQ(data_file.find_field("split_offsets")->type->branches.at(1)->properties["element-id"], 133);
  EXPECT_EQ(data_file.find_field("equality_ids")->type->branches.at(1)->properties["element-id"], 136);
}

TEST(ManifestTest, UnpartitionedManifestHasAnEmptyPartitionRecord) {
  testing::TempDir dir;
  DataFile file = data_file("/d/x.parquet", 0);
  file.partition.clear();
  file.column_sizes.clear();
  file.key_metadata.reset();
  ManifestFile manifest =
      write_manifest(location(dir, "u.avro"), all_types_schema(), PartitionSpec::unpartitioned(),
                     ManifestContent::kData, kSnapshot, {ManifestEntry{ManifestEntryStatus::kAdded, {}, {}, {}, file}});
  EXPECT_TRUE(manifest.partitions.empty());
  manifest.sequence_number = manifest.min_sequence_number = 1;
  const auto entries = read_manifest(manifest);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].data_file, file);
  EXPECT_EQ(entries[0].snapshot_id, kSnapshot);
  EXPECT_EQ(entries[0].sequence_number, 1);
}

TEST(ManifestTest, RejectsEntriesTheSpecForbids) {
  testing::TempDir dir;
  const Schema schema = all_types_schema();
  const PartitionSpec spec = all_transforms_spec();
  int n = 0;
  const auto write_one = [&](ManifestEntry entry, ManifestContent content = ManifestContent::kData) {
    write_manifest(location(dir, fmt::format("bad{}.avro", n++)), schema, spec, content, kSnapshot, {entry});
  };
  const DataFile file = data_file("/d/a.parquet", 0);
  EXPECT_THAT(
      [&] {
        write_one({ManifestEntryStatus::kAdded, 42, {}, {}, file});
      },
      ThrowsMessage<Error>(HasSubstr("cannot inherit the sequence number")));
  EXPECT_THAT(
      [&] {
        write_one({ManifestEntryStatus::kExisting, {}, 1, 1, file});
      },
      ThrowsMessage<Error>(HasSubstr("snapshot_id: required for EXISTING")));
  EXPECT_THAT(
      [&] {
        write_one({ManifestEntryStatus::kDeleted, kSnapshot, {}, 1, file});
      },
      ThrowsMessage<Error>(HasSubstr("sequence_number: required")));
  EXPECT_THAT(
      [&] {
        write_one({ManifestEntryStatus::kAdded, {}, {}, {}, file}, ManifestContent::kDeletes);
      },
      ThrowsMessage<Error>(HasSubstr("a data file cannot be in a deletes manifest")));
  DataFile short_partition = file;
  short_partition.partition.pop_back();
  EXPECT_THAT(
      [&] {
        write_one({ManifestEntryStatus::kAdded, {}, {}, {}, short_partition});
      },
      ThrowsMessage<Error>(HasSubstr("the spec has 24 fields, the tuple 23")));
  DataFile wrong_type = file;
  wrong_type.partition[0] = std::int32_t{1};
  EXPECT_THAT(
      [&] {
        write_one({ManifestEntryStatus::kAdded, {}, {}, {}, wrong_type});
      },
      ThrowsMessage<Error>(HasSubstr("data_file.partition[0]")));
  DataFile negative = file;
  negative.record_count = -1;
  EXPECT_THAT(
      [&] {
        write_one({ManifestEntryStatus::kAdded, {}, {}, {}, negative});
      },
      ThrowsMessage<Error>(HasSubstr("iceberg manifest")));
  DataFile equality = file;
  equality.content = FileContent::kEqualityDeletes;
  EXPECT_THAT(
      [&] {
        write_one({ManifestEntryStatus::kAdded, {}, {}, {}, equality}, ManifestContent::kDeletes);
      },
      ThrowsMessage<Error>(HasSubstr("equality_ids: required")));
  // Nothing was left behind by the failures.
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "metadata") && !std::filesystem::is_empty(dir.path() / "metadata"));
}

TEST(ManifestTest, NeverReplacesAFileAndNeverLeavesAHalfWrittenOne) {
  testing::TempDir dir;
  const std::string path = location(dir, "m.avro");
  write_manifest(path, all_types_schema(), all_transforms_spec(), ManifestContent::kData, kSnapshot, data_entries());
  const auto size = std::filesystem::file_size(path);
  EXPECT_THAT(
      [&] {
        write_manifest(path, all_types_schema(), PartitionSpec::unpartitioned(), ManifestContent::kData, kSnapshot, {});
      },
      ThrowsMessage<Error>(HasSubstr("already exists")));
  EXPECT_EQ(std::filesystem::file_size(path), size);

  failpoint::arm("iceberg.manifest.before_close", failpoint::Trigger{failpoint::Action::kError});
  const std::string other = location(dir, "other.avro");
  EXPECT_THROW(write_manifest(other, all_types_schema(), all_transforms_spec(), ManifestContent::kData, kSnapshot,
                              data_entries()),
               failpoint::FailpointError);
  failpoint::disarm_all();
  failpoint::arm("iceberg.manifest_list.before_close", failpoint::Trigger{failpoint::Action::kError});
  EXPECT_THROW(write_manifest_list(location(dir, "list.avro"), kSnapshot, std::nullopt, 1, {}),
               failpoint::FailpointError);
  failpoint::disarm_all();
  // Only the first manifest exists: no temporary files, no partial files.
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path() / "metadata")) {
    names.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{"m.avro"});
}

TEST(ManifestListTest, AssignsSequenceNumbersToNewManifestsAndRoundTrips) {
  testing::TempDir dir;
  ManifestFile fresh = write_manifest(location(dir, "new.avro"), all_types_schema(), all_transforms_spec(),
                                      ManifestContent::kData, kSnapshot, data_entries());
  ManifestFile older;
  older.manifest_path = "file:///elsewhere/old.avro";
  older.manifest_length = 999;
  older.partition_spec_id = 1;
  older.content = ManifestContent::kDeletes;
  older.sequence_number = 4;
  older.min_sequence_number = 2;
  older.added_snapshot_id = 5001;
  older.added_files_count = 3;
  older.existing_files_count = 4;
  older.deleted_files_count = 5;
  older.added_rows_count = 6;
  older.existing_rows_count = 7;
  older.deleted_rows_count = 8;
  older.partitions = {PartitionFieldSummary{true, std::nullopt, std::nullopt, std::nullopt},
                      PartitionFieldSummary{false, true, Bytes{1}, Bytes{2, 3}}};
  older.key_metadata = Bytes{9};
  ManifestFile empty_summaries = older;
  empty_summaries.manifest_path = "/elsewhere/unpartitioned.avro";
  empty_summaries.partitions.clear();
  empty_summaries.key_metadata.reset();

  const std::string list = location(dir, "snap-1.avro");
  write_manifest_list(list, kSnapshot, 5001, 9, {fresh, older, empty_summaries});
  const auto manifests = read_manifest_list(list);
  ASSERT_EQ(manifests.size(), 3u);
  ManifestFile expected = fresh;
  expected.sequence_number = 9;
  expected.min_sequence_number = 3;  // the explicit minimum stays
  EXPECT_EQ(manifests[0], expected);
  EXPECT_EQ(manifests[1], older);
  EXPECT_EQ(manifests[2], empty_summaries);
  expect_same_entries(read_manifest(manifests[0]), inherited(data_entries(), 9));

  std::ifstream in(list, std::ios::binary);
  avro::ContainerReader reader(in);
  EXPECT_EQ(reader.writer_schema().root().name, "manifest_file");
  EXPECT_EQ(reader.metadata().at("snapshot-id"), "7001");
  EXPECT_EQ(reader.metadata().at("parent-snapshot-id"), "5001");
  EXPECT_EQ(reader.metadata().at("sequence-number"), "9");
  EXPECT_EQ(reader.metadata().at("format-version"), "2");

  // A first snapshot: no parent; an all-inheriting manifest gets the commit's number as its minimum.
  ManifestFile inheriting =
      write_manifest(location(dir, "first.avro"), all_types_schema(), all_transforms_spec(), ManifestContent::kData,
                     kSnapshot, {ManifestEntry{ManifestEntryStatus::kAdded, {}, {}, {}, data_file("/d/a.parquet", 0)}});
  const std::string first = location(dir, "snap-0.avro");
  write_manifest_list(first, kSnapshot, std::nullopt, 1, {inheriting});
  std::ifstream first_in(first, std::ios::binary);
  EXPECT_EQ(avro::ContainerReader(first_in).metadata().at("parent-snapshot-id"), "null");
  const auto first_manifests = read_manifest_list(first);
  ASSERT_EQ(first_manifests.size(), 1u);
  EXPECT_EQ(first_manifests[0].sequence_number, 1);
  EXPECT_EQ(first_manifests[0].min_sequence_number, 1);
}

TEST(ManifestListTest, RejectsUnassignedManifestsOfOtherSnapshots) {
  testing::TempDir dir;
  ManifestFile manifest;
  manifest.manifest_path = "/x/m.avro";
  manifest.added_snapshot_id = 1;
  EXPECT_THAT([&] { write_manifest_list(location(dir, "l.avro"), kSnapshot, std::nullopt, 3, {manifest}); },
              ThrowsMessage<Error>(HasSubstr("a manifest added by snapshot 1 has no sequence number")));
  manifest.sequence_number = 2;
  manifest.min_sequence_number = 3;
  EXPECT_THAT([&] { write_manifest_list(location(dir, "l2.avro"), kSnapshot, std::nullopt, 3, {manifest}); },
              ThrowsMessage<Error>(HasSubstr("min_sequence_number 3 is above sequence_number 2")));
}

// Writes VALUES with SCHEMA_JSON as a container file with METADATA.
std::string write_avro(const testing::TempDir& dir, const std::string& name, const std::string& schema_json,
                       const std::vector<avro::Value>& values, std::map<std::string, std::string> metadata = {}) {
  const std::string path = (dir.path() / name).string();
  std::ofstream out(path, std::ios::binary);
  avro::ContainerWriterOptions options;
  options.metadata = std::move(metadata);
  avro::ContainerWriter writer(out, avro::Schema::parse(schema_json), options);
  for (const auto& value : values) writer.append(value);
  writer.close();
  return path;
}

ManifestFile listed(const std::string& path, std::int64_t sequence) {
  ManifestFile manifest;
  manifest.manifest_path = path;
  manifest.sequence_number = manifest.min_sequence_number = sequence;
  manifest.added_snapshot_id = 77;
  return manifest;
}

TEST(ManifestTest, ReadsOtherWritersLayouts) {
  testing::TempDir dir;
  // Fields reordered, unknown extra fields, v2-only fields (content, sequence numbers) absent,
  // no partition-spec header: a v1 manifest as Java writes it, with ids to match on.
  const std::string schema = R"({"type":"record","name":"manifest_entry","fields":[
    {"name":"data_file","field-id":2,"type":{"type":"record","name":"r2","fields":[
      {"name":"record_count","type":"long","field-id":103},
      {"name":"file_path","type":"string","field-id":100},
      {"name":"block_size_in_bytes","type":"long","field-id":105},
      {"name":"file_format","type":"string","field-id":101},
      {"name":"partition","field-id":102,"type":{"type":"record","name":"r102","fields":[
        {"name":"d","type":["null",{"type":"int","logicalType":"date"}],"field-id":1000},
        {"name":"u","type":["null",{"type":"fixed","name":"uuid_fixed","size":16,"logicalType":"uuid"}],"field-id":1001},
        {"name":"m","type":["null",{"type":"bytes","logicalType":"decimal","precision":5,"scale":1}],"field-id":1002}]}},
      {"name":"file_size_in_bytes","type":"long","field-id":104},
      {"name":"value_counts","field-id":109,"type":["null",{"type":"map","values":"long"}]},
      {"name":"equality_ids","field-id":135,"type":["null",{"type":"array","items":"long","element-id":136}]}]}},
    {"name":"status","type":"int","field-id":0},
    {"name":"extra","type":"string"},
    {"name":"snapshot_id","type":"long","field-id":1}]})";
  const Uuid uuid = Uuid::parse("f79c3e09-677c-4bbd-a479-3f349cb785e7");
  const avro::Value value = avro::Record{{
      avro::Record{{std::int64_t{5}, "s3://b/f.orc", std::int64_t{64}, "orc",
                    avro::Record{{avro::Union(1, std::int32_t{19000}),
                                  avro::Union(1, avro::Bytes(uuid.bytes.begin(), uuid.bytes.end())),
                                  avro::Union(1, avro::Bytes{0xFF, 0x85})}},
                    std::int64_t{100}, avro::Union(1, avro::Map{{"1", std::int64_t{5}}}),
                    avro::Union(1, avro::Array{std::int64_t{1}})}},
      std::int32_t{0},
      "ignored",
      std::int64_t{33},
  }};
  const std::string path = write_avro(dir, "java.avro", schema, {value});
  const auto entries = read_manifest(listed(path, 0));  // a v1 manifest in a v2 table: sequence 0
  ASSERT_EQ(entries.size(), 1u);
  const ManifestEntry& entry = entries[0];
  EXPECT_EQ(entry.status, ManifestEntryStatus::kExisting);
  EXPECT_EQ(entry.snapshot_id, 33);
  EXPECT_EQ(entry.sequence_number, 0);  // v1: EXISTING entries inherit 0 too
  EXPECT_EQ(entry.file_sequence_number, 0);
  EXPECT_EQ(entry.data_file.content, FileContent::kData);
  EXPECT_EQ(entry.data_file.file_path, "s3://b/f.orc");
  EXPECT_EQ(entry.data_file.file_format, "ORC");
  EXPECT_EQ(entry.data_file.record_count, 5);
  EXPECT_EQ(entry.data_file.file_size_in_bytes, 100);
  EXPECT_EQ(entry.data_file.partition, (std::vector<Literal>{std::int32_t{19000}, uuid, Decimal{-123}}));
  EXPECT_EQ(entry.data_file.value_counts, (std::map<std::int32_t, std::int64_t>{{1, 5}}));
  EXPECT_EQ(entry.data_file.equality_ids, std::vector<std::int32_t>{1});

  // The same v1 list (no content, sequence numbers or v2 count names).
  const std::string list_schema = R"({"type":"record","name":"manifest_file","fields":[
    {"name":"manifest_path","type":"string","field-id":500},
    {"name":"manifest_length","type":"long","field-id":501},
    {"name":"partition_spec_id","type":"int","field-id":502},
    {"name":"added_snapshot_id","type":["null","long"],"default":null,"field-id":503},
    {"name":"added_data_files_count","type":["null","int"],"default":null,"field-id":504},
    {"name":"partitions","type":["null",{"type":"array","element-id":508,"items":{"type":"record","name":"r508",
      "fields":[{"name":"contains_null","type":"boolean","field-id":509}]}}],"default":null,"field-id":507}]})";
  const std::string list =
      write_avro(dir, "list-v1.avro", list_schema,
                 {avro::Record{{"/m.avro", std::int64_t{10}, std::int32_t{0}, avro::Union(1, std::int64_t{33}),
                                avro::Union(1, std::int32_t{2}), avro::Union(1, avro::Array{avro::Record{{true}}})}}});
  const auto manifests = read_manifest_list(list);
  ASSERT_EQ(manifests.size(), 1u);
  EXPECT_EQ(manifests[0].content, ManifestContent::kData);
  EXPECT_EQ(manifests[0].sequence_number, 0);
  EXPECT_EQ(manifests[0].min_sequence_number, 0);
  EXPECT_EQ(manifests[0].added_snapshot_id, 33);
  EXPECT_EQ(manifests[0].added_files_count, 2);
  ASSERT_EQ(manifests[0].partitions.size(), 1u);
  EXPECT_TRUE(manifests[0].partitions[0].contains_null);
  EXPECT_EQ(manifests[0].partitions[0].contains_nan, std::nullopt);
}

TEST(ManifestTest, ReportsBadFieldsByName) {
  testing::TempDir dir;
  const auto schema_with = [](const std::string& data_file_fields) {
    return R"({"type":"record","name":"manifest_entry","fields":[{"name":"status","type":"int","field-id":0},
      {"name":"data_file","field-id":2,"type":{"type":"record","name":"r2","fields":[)" +
           data_file_fields + "]}}]}";
  };
  const std::string common = R"({"name":"file_path","type":"string","field-id":100},
      {"name":"file_format","type":"string","field-id":101},
      {"name":"partition","field-id":102,"type":{"type":"record","name":"r102","fields":[]}},
      {"name":"file_size_in_bytes","type":"long","field-id":104})";
  const auto entry = [](std::int32_t status, avro::Value last) {
    return avro::Value(avro::Record{
        {status, avro::Record{{"/f.parquet", "PARQUET", avro::Record{}, std::int64_t{1}, std::move(last)}}}});
  };
  const auto read = [&](const std::string& name, const std::string& fields, const avro::Value& value) {
    read_manifest(listed(write_avro(dir, name, schema_with(fields), {value}), 1));
  };
  const std::string record_count_string = common + R"(,{"name":"record_count","type":"string","field-id":103})";
  EXPECT_THAT([&] { read("a.avro", record_count_string, entry(1, "many")); },
              ThrowsMessage<Error>(HasSubstr("a.avro: entry 0: data_file.record_count: expected a long")));
  const std::string record_count = common + R"(,{"name":"record_count","type":"long","field-id":103})";
  EXPECT_THAT([&] { read("b.avro", record_count, entry(7, std::int64_t{1})); },
              ThrowsMessage<Error>(HasSubstr("b.avro: entry 0: status: invalid value 7")));
  EXPECT_THAT([&] { read("c.avro", record_count, entry(1, std::int64_t{-1})); },
              ThrowsMessage<Error>(HasSubstr("data_file.record_count: negative")));
  const std::string without_path = common + R"(,{"name":"record_count","type":"long","field-id":103})";
  std::string renamed = without_path;
  renamed.replace(renamed.find("\"field-id\":100"), 14, "\"field-id\":999");
  EXPECT_THAT([&] { read("d.avro", renamed, entry(1, std::int64_t{1})); },
              ThrowsMessage<Error>(HasSubstr("data_file.file_path: required field file_path (id 100) is missing")));
  // An EXISTING entry must carry its sequence number in a v2 manifest.
  EXPECT_THAT([&] { read("e.avro", record_count, entry(0, std::int64_t{1})); },
              ThrowsMessage<Error>(HasSubstr("an EXISTING entry must have one")));
  // A partition field the header's spec names must exist.
  const std::string path = write_avro(dir, "f.avro", schema_with(record_count), {entry(1, std::int64_t{1})},
                                      {{"partition-spec", R"([{"source-id":1,"field-id":1000,"name":"x",
                                        "transform":"identity"}])"}});
  EXPECT_THAT([&] { read_manifest(listed(path, 1)); },
              ThrowsMessage<Error>(HasSubstr("data_file.partition: no field with id 1000")));
}

TEST(ManifestTest, CorruptFilesAreErrorsNeverCrashes) {
  testing::TempDir dir;
  ManifestFile manifest = write_manifest(location(dir, "m.avro"), all_types_schema(), all_transforms_spec(),
                                         ManifestContent::kData, kSnapshot, data_entries());
  manifest.sequence_number = manifest.min_sequence_number = 3;
  const std::string list = location(dir, "l.avro");
  write_manifest_list(list, kSnapshot, std::nullopt, 3, {manifest});
  for (const std::string& path : {manifest.manifest_path, list}) {
    const std::string original = read_file(path);
    const auto check = [&](const std::string& contents) {
      {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << contents;
      }
      try {
        if (path == list) {
          read_manifest_list(list);
        } else {
          read_manifest(manifest);
        }
      } catch (const Error& error) {
        EXPECT_THAT(error.what(), HasSubstr(path));
      }
    };
    // Truncations and flipped bytes at every third position (every position takes minutes under
    // ASan; the fuzz targets cover the rest); every failure is an Error naming the file.
    for (std::size_t size = 0; size < original.size(); size += 7) check(original.substr(0, size));
    for (std::size_t i = 0; i < original.size(); i += 3) {
      std::string flipped = original;
      flipped[i] = static_cast<char>(flipped[i] ^ 0x5A);
      check(flipped);
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << "not avro at all";
    EXPECT_THROW(path == list ? (void)read_manifest_list(list) : (void)read_manifest(manifest), Error);
  }
  EXPECT_THAT([&] { read_manifest_list(location(dir, "missing.avro")); },
              ThrowsMessage<Error>(HasSubstr("iceberg manifest list")));
  // A valid Avro file of the wrong records.
  const std::string other = write_avro(dir, "other.avro", R"({"type":"record","name":"x","fields":[
      {"name":"a","type":"int"}]})",
                                       {avro::Record{{std::int32_t{1}}}});
  EXPECT_THAT([&] { read_manifest(listed(other, 1)); }, ThrowsMessage<Error>(HasSubstr("status")));
  EXPECT_THAT([&] { read_manifest_list(other); }, ThrowsMessage<Error>(HasSubstr("manifest_path")));
}

}  // namespace
}  // namespace binberg::iceberg
