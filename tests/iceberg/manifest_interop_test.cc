// Manifest interop with independent implementations (tests/iceberg/manifest_tool.py, run with the
// project venv): pyiceberg and fastavro read the manifests and manifest lists binberg writes,
// binberg reads those of a real pyiceberg table, and Appendix D bounds match pyiceberg's to_bytes.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include "iceberg/manifest.h"
#include "iceberg/manifest_list.h"
#include "iceberg/metadata_file.h"
#include "iceberg/single_value.h"
#include "sample_table.h"
#include "support/temp_dir.h"
#include "support/test_services.h"  // run_command

namespace binberg::iceberg {
namespace {

// Compared as unordered JSON: only the members matter, not their order.
using Description = nlohmann::json;

constexpr std::int64_t kSnapshot = 8123456789012345678;

Description run_tool(const std::string& command, const std::string& argument) {
  const std::string script = std::string(BINBERG_ICEBERG_TEST_DIR) + "/manifest_tool.py";
  return Description::parse(
      binberg::testing::run_command(fmt::format("'{}' '{}' {} '{}'", BINBERG_PYTHON, script, command, argument)));
}

std::string hex(const Bytes& bytes) {
  std::string text;
  for (std::uint8_t byte : bytes) text += fmt::format("{:02x}", byte);
  return text;
}

std::string int128_string(Int128 value) {
  if (value == 0) return "0";
  const bool negative = value < 0;
  UInt128 magnitude = negative ? UInt128(0) - static_cast<UInt128>(value) : static_cast<UInt128>(value);
  std::string digits;
  for (; magnitude != 0; magnitude /= 10) digits.push_back(static_cast<char>('0' + static_cast<int>(magnitude % 10)));
  if (negative) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

// "-123.45" for unscaled -12345 at scale 2.
std::string decimal_text(Int128 unscaled, int scale) {
  std::string digits = int128_string(unscaled < 0 ? -unscaled : unscaled);
  const std::string sign = unscaled < 0 ? "-" : "";
  if (scale <= 0) return sign + digits;
  const auto fraction = static_cast<std::size_t>(scale);
  if (digits.size() <= fraction) digits = std::string(fraction + 1 - digits.size(), '0') + digits;
  return sign + digits.substr(0, digits.size() - fraction) + "." + digits.substr(digits.size() - fraction);
}

Description nullable_hex(const std::optional<Bytes>& bytes) { return bytes ? Description(hex(*bytes)) : Description(); }

// A partition value as manifest_tool.py describes what pyiceberg read; RAW gives the encoded Avro
// value instead (as fastavro reads it with logical types off).
Description describe_value(const Type& type, const Literal& value, bool raw = false) {
  return std::visit(
      [&](const auto& held) -> Description {
        using T = std::decay_t<decltype(held)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, Uuid>) {
          if (raw) return {{"bytes", hex(Bytes(held.bytes.begin(), held.bytes.end()))}};
          return {{"uuid", held.to_string()}};
        } else if constexpr (std::is_same_v<T, Bytes>) {
          return {{"bytes", hex(held)}};
        } else if constexpr (std::is_same_v<T, Decimal>) {
          if (raw) {
            Bytes minimal = min_big_endian_bytes(held);
            UInt128 limit = 1;
            for (int i = 0; i < type.decimal_precision(); ++i) limit *= 10;
            std::size_t size = 1;
            while ((UInt128{1} << (8 * size - 1)) < limit) ++size;
            Bytes bytes(size - minimal.size(), (minimal[0] & 0x80) != 0 ? 0xFF : 0x00);
            bytes.insert(bytes.end(), minimal.begin(), minimal.end());
            return {{"bytes", hex(bytes)}};
          }
          return {{"unscaled", int128_string(held.unscaled)}, {"scale", type.decimal_scale()}};
        } else if constexpr (std::is_same_v<T, float>) {
          return static_cast<double>(held);
        } else {
          return held;
        }
      },
      value);
}

template <typename V>
Description describe_map(const std::map<std::int32_t, V>& map) {
  Description json = Description::object();
  for (const auto& [key, value] : map) {
    if constexpr (std::is_same_v<V, Bytes>) {
      json[std::to_string(key)] = hex(value);
    } else {
      json[std::to_string(key)] = value;
    }
  }
  return json;
}

Description nullable(const auto& optional) { return optional ? Description(*optional) : Description(); }

Description describe_entry(const ManifestEntry& entry, const std::vector<TypePtr>& types) {
  const DataFile& f = entry.data_file;
  Description partition = Description::array();
  for (std::size_t i = 0; i < f.partition.size(); ++i)
    partition.push_back(describe_value(*types.at(i), f.partition[i]));
  return {{"status", static_cast<int>(entry.status)},
          {"snapshot_id", nullable(entry.snapshot_id)},
          {"sequence_number", nullable(entry.sequence_number)},
          {"file_sequence_number", nullable(entry.file_sequence_number)},
          {"data_file",
           {{"content", static_cast<int>(f.content)},
            {"file_path", f.file_path},
            {"file_format", f.file_format},
            {"partition", partition},
            {"record_count", f.record_count},
            {"file_size_in_bytes", f.file_size_in_bytes},
            {"column_sizes", describe_map(f.column_sizes)},
            {"value_counts", describe_map(f.value_counts)},
            {"null_value_counts", describe_map(f.null_value_counts)},
            {"nan_value_counts", describe_map(f.nan_value_counts)},
            {"lower_bounds", describe_map(f.lower_bounds)},
            {"upper_bounds", describe_map(f.upper_bounds)},
            {"key_metadata", nullable_hex(f.key_metadata)},
            {"split_offsets", f.split_offsets},
            {"equality_ids", f.equality_ids},
            {"sort_order_id", nullable(f.sort_order_id)}}}};
}

Description describe_manifest_file(const ManifestFile& m) {
  Description partitions = Description::array();
  for (const auto& p : m.partitions) {
    partitions.push_back({{"contains_null", p.contains_null},
                          {"contains_nan", nullable(p.contains_nan)},
                          {"lower_bound", nullable_hex(p.lower_bound)},
                          {"upper_bound", nullable_hex(p.upper_bound)}});
  }
  return {{"manifest_path", m.manifest_path},
          {"manifest_length", m.manifest_length},
          {"partition_spec_id", m.partition_spec_id},
          {"content", static_cast<int>(m.content)},
          {"sequence_number", m.sequence_number},
          {"min_sequence_number", m.min_sequence_number},
          {"added_snapshot_id", m.added_snapshot_id},
          {"added_files_count", m.added_files_count},
          {"existing_files_count", m.existing_files_count},
          {"deleted_files_count", m.deleted_files_count},
          {"added_rows_count", m.added_rows_count},
          {"existing_rows_count", m.existing_rows_count},
          {"deleted_rows_count", m.deleted_rows_count},
          {"partitions", partitions},
          {"key_metadata", nullable_hex(m.key_metadata)}};
}

Description describe_manifest(const ManifestFile& m, const std::vector<ManifestEntry>& entries,
                              const std::vector<TypePtr>& types) {
  Description json = describe_manifest_file(m);
  json["entries"] = Description::array();
  for (const auto& entry : entries) json["entries"].push_back(describe_entry(entry, types));
  return json;
}

using test_tables::all_types_schema;

// Identity partition fields named apart from their columns.
PartitionSpec all_transforms_spec() { return test_tables::all_transforms_spec(0, "_p"); }

std::vector<TypePtr> types_of(const Schema& schema, const PartitionSpec& spec) {
  std::vector<TypePtr> types;
  for (const auto& field : spec.fields())
    types.push_back(field.transform.result_type(schema.find_field(field.source_id)->type));
  return types;
}

std::vector<Literal> partition(int variant) {
  std::vector<Literal> row;
  if (variant == 0) {
    row = {true,
           std::int32_t{7},
           std::int64_t{123456789012},
           0.1f,
           -2.25,
           Decimal{12345},
           std::int32_t{19000},
           std::int64_t{3600000000},
           std::int64_t{1700000000000000},
           std::int64_t{1700000000000001},
           std::string("h\xC3\xA9llo"),
           Uuid::parse("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
           Bytes{1, 2, 3},
           Bytes{0, 255},
           Decimal{-(Int128{1} << 100)}};
  } else {
    row.assign(15, std::monostate{});
    row[2] = std::int64_t{-9};
  }
  return all_transforms_spec().partition_values(all_types_schema(), [&](std::int32_t id) { return row[id - 1]; });
}

DataFile data_file(const std::string& path, int variant, FileContent content = FileContent::kData) {
  DataFile file;
  file.content = content;
  file.file_path = path;
  file.partition = partition(variant);
  file.record_count = 10 + variant;
  file.file_size_in_bytes = 4096 + variant;
  if (variant == 0) test_tables::set_sample_statistics(file);
  if (content == FileContent::kEqualityDeletes) file.equality_ids = {1, 3};
  return file;
}

struct WrittenTable {
  std::string list;
  std::vector<ManifestFile> manifests;              // as the list holds them
  std::vector<std::vector<ManifestEntry>> entries;  // as readers see them (inheritance applied)
};

WrittenTable write_table(const testing::TempDir& dir) {
  const Schema schema = all_types_schema();
  const PartitionSpec spec = all_transforms_spec();
  const std::string metadata = "file://" + (dir.path() / "metadata").string();
  std::vector<ManifestEntry> data = {
      {ManifestEntryStatus::kAdded, std::nullopt, std::nullopt, std::nullopt, data_file("/d/a.parquet", 0)},
      {ManifestEntryStatus::kExisting, 5001, 3, 2, data_file("/d/b.parquet", 1)},
      {ManifestEntryStatus::kDeleted, kSnapshot, 4, 4, data_file("/d/c.parquet", 0)}};
  std::vector<ManifestEntry> deletes = {{ManifestEntryStatus::kAdded, kSnapshot, std::nullopt, std::nullopt,
                                         data_file("/d/pos.parquet", 1, FileContent::kPositionDeletes)},
                                        {ManifestEntryStatus::kAdded, kSnapshot, std::nullopt, std::nullopt,
                                         data_file("/d/eq.parquet", 0, FileContent::kEqualityDeletes)}};
  WrittenTable table;
  table.manifests.push_back(
      write_manifest(metadata + "/m0.avro", schema, spec, ManifestContent::kData, kSnapshot, data));
  table.manifests.push_back(
      write_manifest(metadata + "/m1.avro", schema, spec, ManifestContent::kDeletes, kSnapshot, deletes));
  table.list = metadata + "/snap.avro";
  write_manifest_list(table.list, kSnapshot, 5001, 6, table.manifests);
  table.manifests[0].sequence_number = 6;
  table.manifests[0].min_sequence_number = 3;
  table.manifests[1].sequence_number = table.manifests[1].min_sequence_number = 6;
  for (auto* entries : {&data, &deletes}) {
    for (auto& entry : *entries) {
      if (!entry.snapshot_id) entry.snapshot_id = kSnapshot;
      if (!entry.sequence_number) entry.sequence_number = 6;
      if (!entry.file_sequence_number) entry.file_sequence_number = 6;
    }
  }
  table.entries = {data, deletes};
  return table;
}

TEST(ManifestInteropTest, PyicebergReadsWhatBinbergWrites) {
  testing::TempDir dir;
  const WrittenTable table = write_table(dir);
  const auto types = types_of(all_types_schema(), all_transforms_spec());
  Description expected = Description::array();
  for (std::size_t i = 0; i < table.manifests.size(); ++i) {
    expected.push_back(describe_manifest(table.manifests[i], table.entries[i], types));
  }
  const Description seen_by_pyiceberg = run_tool("describe-list", table.list);
  EXPECT_EQ(seen_by_pyiceberg, expected) << seen_by_pyiceberg.dump(1);

  // Spot checks, so the comparison cannot pass by both sides missing the same thing.
  ASSERT_EQ(seen_by_pyiceberg.size(), 2u);
  const auto& first = seen_by_pyiceberg[0]["entries"][0];
  EXPECT_EQ(first["sequence_number"], 6);  // inherited from the list
  EXPECT_EQ(first["snapshot_id"], kSnapshot);
  EXPECT_EQ(first["data_file"]["partition"][5], Description::parse(R"({"unscaled": "12345", "scale": 2})"));
  EXPECT_EQ(first["data_file"]["partition"][11],
            Description::parse(R"({"uuid": "f79c3e09-677c-4bbd-a479-3f349cb785e7"})"));
  EXPECT_EQ(first["data_file"]["lower_bounds"]["2"], "fdffffff");
  EXPECT_EQ(seen_by_pyiceberg[0]["min_sequence_number"], 3);
  EXPECT_EQ(seen_by_pyiceberg[1]["content"], 1);
  EXPECT_EQ(seen_by_pyiceberg[1]["entries"][1]["data_file"]["equality_ids"], Description::parse("[1, 3]"));
  EXPECT_EQ(seen_by_pyiceberg[0]["partitions"][21]["contains_null"], true);  // void
}

// Every Avro field id of a writer schema by dotted path; array items add ".element", map records ".key"/".value".
void collect_ids(const Description& schema, const std::string& path, std::map<std::string, int>& ids) {
  if (schema.is_array()) {  // union
    for (const auto& branch : schema) collect_ids(branch, path, ids);
    return;
  }
  if (!schema.is_object()) return;
  if (schema["type"] == "record") {
    for (const auto& field : schema["fields"]) {
      const std::string child =
          path.empty() ? field["name"].get<std::string>() : path + "." + field["name"].get<std::string>();
      if (field.contains("field-id")) ids[child] = field["field-id"];
      collect_ids(field["type"], child, ids);
    }
  } else if (schema["type"] == "array") {
    if (schema.contains("element-id")) ids[path + ".element"] = schema["element-id"];
    collect_ids(schema["items"], path, ids);
  }
}

TEST(ManifestInteropTest, FastavroSeesTheSpecFieldIds) {
  testing::TempDir dir;
  const WrittenTable table = write_table(dir);
  const Description manifest = run_tool("fastavro", local_path(table.manifests[0].manifest_path).string());
  EXPECT_EQ(manifest["codec"], "deflate");
  EXPECT_EQ(manifest["metadata"]["format-version"], "2");
  EXPECT_EQ(manifest["metadata"]["content"], "data");
  EXPECT_EQ(manifest["metadata"]["partition-spec-id"], "0");
  EXPECT_EQ(manifest["metadata"]["schema-id"], "0");
  EXPECT_EQ(Json::parse(manifest["metadata"]["partition-spec"].get<std::string>()),
            partition_spec_to_json(all_transforms_spec())["fields"]);
  EXPECT_EQ(manifest["writer_schema"]["name"], "manifest_entry");
  std::map<std::string, int> ids;
  collect_ids(manifest["writer_schema"], "", ids);
  std::map<std::string, int> expected = {
      {"status", 0},
      {"snapshot_id", 1},
      {"sequence_number", 3},
      {"file_sequence_number", 4},
      {"data_file", 2},
      {"data_file.content", 134},
      {"data_file.file_path", 100},
      {"data_file.file_format", 101},
      {"data_file.partition", 102},
      {"data_file.record_count", 103},
      {"data_file.file_size_in_bytes", 104},
      {"data_file.column_sizes", 108},
      {"data_file.column_sizes.key", 117},
      {"data_file.column_sizes.value", 118},
      {"data_file.value_counts", 109},
      {"data_file.value_counts.key", 119},
      {"data_file.value_counts.value", 120},
      {"data_file.null_value_counts", 110},
      {"data_file.null_value_counts.key", 121},
      {"data_file.null_value_counts.value", 122},
      {"data_file.nan_value_counts", 137},
      {"data_file.nan_value_counts.key", 138},
      {"data_file.nan_value_counts.value", 139},
      {"data_file.lower_bounds", 125},
      {"data_file.lower_bounds.key", 126},
      {"data_file.lower_bounds.value", 127},
      {"data_file.upper_bounds", 128},
      {"data_file.upper_bounds.key", 129},
      {"data_file.upper_bounds.value", 130},
      {"data_file.key_metadata", 131},
      {"data_file.split_offsets", 132},
      {"data_file.split_offsets.element", 133},
      {"data_file.equality_ids", 135},
      {"data_file.equality_ids.element", 136},
      {"data_file.sort_order_id", 140},
  };
  const PartitionSpec spec = all_transforms_spec();
  for (const auto& field : spec.fields()) expected["data_file.partition." + field.name] = field.field_id;
  EXPECT_EQ(ids, expected);

  // The records themselves, raw: partition values as encoded (uuid and decimal as fixed bytes).
  const auto types = types_of(all_types_schema(), all_transforms_spec());
  const auto& records = manifest["records"];
  ASSERT_EQ(records.size(), table.entries[0].size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    SCOPED_TRACE(i);
    const ManifestEntry& entry = table.entries[0][i];
    const auto& record = records[i];
    EXPECT_EQ(record["status"], static_cast<int>(entry.status));
    EXPECT_EQ(record["data_file"]["file_path"], entry.data_file.file_path);
    EXPECT_EQ(record["data_file"]["record_count"], entry.data_file.record_count);
    const auto& fields = spec.fields();
    for (std::size_t p = 0; p < fields.size(); ++p) {
      EXPECT_EQ(record["data_file"]["partition"][fields[p].name],
                describe_value(*types[p], entry.data_file.partition[p], /*raw=*/true))
          << fields[p].name;
    }
  }
  // Entry 0 inherits: nulls on disk.
  EXPECT_TRUE(records[0]["snapshot_id"].is_null());
  EXPECT_TRUE(records[0]["sequence_number"].is_null());
  EXPECT_EQ(records[1]["sequence_number"], 3);
  EXPECT_EQ(records[0]["data_file"]["column_sizes"],
            Description::parse(R"([{"key":1,"value":100},{"key":2,"value":200}])"));

  const Description list = run_tool("fastavro", local_path(table.list).string());
  EXPECT_EQ(list["metadata"]["snapshot-id"], std::to_string(kSnapshot));
  EXPECT_EQ(list["metadata"]["parent-snapshot-id"], "5001");
  EXPECT_EQ(list["metadata"]["sequence-number"], "6");
  EXPECT_EQ(list["metadata"]["format-version"], "2");
  std::map<std::string, int> list_ids;
  collect_ids(list["writer_schema"], "", list_ids);
  EXPECT_EQ(list_ids, (std::map<std::string, int>{{"manifest_path", 500},           {"manifest_length", 501},
                                                  {"partition_spec_id", 502},       {"content", 517},
                                                  {"sequence_number", 515},         {"min_sequence_number", 516},
                                                  {"added_snapshot_id", 503},       {"added_files_count", 504},
                                                  {"existing_files_count", 505},    {"deleted_files_count", 506},
                                                  {"added_rows_count", 512},        {"existing_rows_count", 513},
                                                  {"deleted_rows_count", 514},      {"partitions", 507},
                                                  {"partitions.element", 508},      {"partitions.contains_null", 509},
                                                  {"partitions.contains_nan", 518}, {"partitions.lower_bound", 510},
                                                  {"partitions.upper_bound", 511},  {"key_metadata", 519}}));
  ASSERT_EQ(list["records"].size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    Description record = list["records"][i];
    const Description described = describe_manifest_file(table.manifests[i]);
    for (auto& summary : record["partitions"]) {
      for (const char* bound : {"lower_bound", "upper_bound"}) {
        if (summary[bound].is_object()) summary[bound] = summary[bound]["bytes"];
      }
    }
    if (record["key_metadata"].is_object()) record["key_metadata"] = record["key_metadata"]["bytes"];
    EXPECT_EQ(record, described) << record.dump(1);
  }
}

TEST(ManifestInteropTest, BinbergReadsAPyicebergTable) {
  testing::TempDir dir;
  const Description table = run_tool("make-table", dir.path().string());
  const Description& expected = table["manifests"];
  // The table: identity partitions on a string and a date column.
  const std::vector<TypePtr> types = {string_type(), date_type()};
  Description seen_by_binberg = Description::array();
  for (const ManifestFile& manifest : read_manifest_list(table["manifest_list"].get<std::string>())) {
    seen_by_binberg.push_back(describe_manifest(manifest, read_manifest(manifest), types));
  }
  EXPECT_EQ(seen_by_binberg, expected) << seen_by_binberg.dump(1);

  // The table has ADDED (inheriting), EXISTING and DELETED entries, nulls and bounds.
  std::set<int> statuses;
  bool null_partition = false;
  for (const auto& manifest : seen_by_binberg) {
    for (const auto& entry : manifest["entries"]) {
      statuses.insert(entry["status"].get<int>());
      EXPECT_FALSE(entry["sequence_number"].is_null());
      null_partition |= entry["data_file"]["partition"][0].is_null();
      EXPECT_FALSE(entry["data_file"]["lower_bounds"].empty());
    }
  }
  EXPECT_EQ(statuses, (std::set<int>{0, 1, 2}));
  EXPECT_TRUE(null_partition);
  EXPECT_EQ(table["sequence_number"], 3);
}

// 10^38 - 1, the largest unscaled value of a decimal(38, s).
constexpr Int128 kLargestDecimal38 = [] {
  Int128 value = 1;
  for (int digit = 0; digit < 38; ++digit) value *= 10;
  return value - 1;
}();

TEST(ManifestInteropTest, SingleValuesMatchPyicebergToBytes) {
  testing::TempDir dir;
  struct Case {
    TypePtr type;
    Literal value;
    Description python;  // the value as manifest_tool.py's to-bytes takes it
  };
  const std::vector<Case> cases = {
      {boolean_type(), true, true},
      {boolean_type(), false, false},
      {int_type(), std::int32_t{-2}, -2},
      {int_type(), std::int32_t{2147483647}, 2147483647},
      {long_type(), std::int64_t{-9007199254740993}, -9007199254740993},
      {float_type(), 0.1f, static_cast<double>(0.1f)},
      {float_type(), -0.0f, -0.0},
      {double_type(), 1e300, 1e300},
      {double_type(), -2.25, -2.25},
      {date_type(), std::int32_t{19000}, 19000},
      {date_type(), std::int32_t{-1}, -1},
      {time_type(), std::int64_t{86399999999}, 86399999999},
      {timestamp_type(), std::int64_t{1700000000000001}, 1700000000000001},
      {timestamptz_type(), std::int64_t{-1}, -1},
      {string_type(), std::string("h\xC3\xA9llo"), "h\xC3\xA9llo"},
      {string_type(), std::string(), ""},
      {uuid_type(), Uuid::parse("f79c3e09-677c-4bbd-a479-3f349cb785e7"), "f79c3e09-677c-4bbd-a479-3f349cb785e7"},
      {fixed_type(3), Bytes{1, 0, 255}, "0100ff"},
      {binary_type(), Bytes{0, 255, 16}, "00ff10"},
      {binary_type(), Bytes{}, ""},
      {decimal_type(9, 2), Decimal{12345}, "123.45"},
      {decimal_type(9, 2), Decimal{-12345}, "-123.45"},
      {decimal_type(9, 2), Decimal{0}, "0.00"},
      {decimal_type(5, 0), Decimal{127}, "127"},
      {decimal_type(5, 0), Decimal{128}, "128"},
      {decimal_type(5, 0), Decimal{-128}, "-128"},
      {decimal_type(5, 0), Decimal{-129}, "-129"},
      {decimal_type(38, 10), Decimal{-(Int128{1} << 100)}, decimal_text(-(Int128{1} << 100), 10)},
      {decimal_type(38, 0), Decimal{kLargestDecimal38}, decimal_text(kLargestDecimal38, 0)},
  };
  Description input = Description::array();
  for (const auto& c : cases) input.push_back({{"type", c.type->to_string()}, {"value", c.python}});
  const std::string path = (dir.path() / "cases.json").string();
  std::ofstream(path) << input.dump();
  const Description python = run_tool("to-bytes", path);
  ASSERT_EQ(python.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(input[i].dump());
    const Bytes bytes = to_single_value(*cases[i].type, cases[i].value);
    EXPECT_EQ(hex(bytes), python[i].get<std::string>());
    const Literal back = from_single_value(*cases[i].type, bytes, "test");
    EXPECT_EQ(to_single_value(*cases[i].type, back), bytes);
  }
}

}  // namespace
}  // namespace binberg::iceberg
