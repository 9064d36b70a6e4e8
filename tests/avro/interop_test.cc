// Interoperability with fastavro, an independent implementation: files binberg writes must read back
// in fastavro with every schema attribute and metadata entry intact, and the reverse.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

#include "avro/container.h"
#include "support/temp_dir.h"
#include "test_support.h"

namespace binberg::avro {
namespace {

// Iceberg-style: field ids on fields, element/key/value ids on collections, logical types, nested unions.
constexpr std::string_view kSchema = R"({"type": "record", "name": "data_file", "namespace": "iceberg", "fields": [
  {"name": "id", "type": "long", "field-id": 100},
  {"name": "ok", "type": "boolean", "field-id": 101},
  {"name": "small", "type": "int", "field-id": 102},
  {"name": "ratio", "type": "float", "field-id": 103},
  {"name": "score", "type": "double", "field-id": 104},
  {"name": "path", "type": "string", "field-id": 105, "doc": "location"},
  {"name": "blob", "type": "bytes", "field-id": 106},
  {"name": "kind", "type": {"type": "enum", "name": "kind", "symbols": ["DATA", "DELETES"]}, "field-id": 107},
  {"name": "hash", "type": {"type": "fixed", "name": "hash", "size": 4}, "field-id": 108},
  {"name": "tags", "type": {"type": "array", "items": "string", "element-id": 109}, "field-id": 110},
  {"name": "counts", "type": {"type": "map", "values": ["null", "long"], "key-id": 111, "value-id": 112},
   "field-id": 113},
  {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": true}],
   "default": null, "field-id": 114},
  {"name": "amount", "type": {"type": "fixed", "name": "dec_9_2", "size": 4, "logicalType": "decimal",
   "precision": 9, "scale": 2}, "field-id": 115},
  {"name": "day", "type": {"type": "int", "logicalType": "date"}, "field-id": 116},
  {"name": "partition", "type": ["null", {"type": "record", "name": "r102", "fields": [
      {"name": "bucket", "type": ["null", "int"], "default": null, "field-id": 1000}]}], "field-id": 117}
]})";

Value data_file(std::int64_t i) {
  const auto small = static_cast<std::int32_t>(i * 3 - 50);
  Map counts;
  counts.emplace("a", Union(1, Value(i)));
  counts.emplace("nothing", Union(0, Value()));
  return Record{{
      Value(i),
      Value(i % 2 == 0),
      Value(small),
      Value(0.25f * static_cast<float>(i)),
      Value(-1.5 * static_cast<double>(i)),
      Value(fmt::format("s3://bucket/data/{}.parquet", i)),
      Value(Bytes{static_cast<std::uint8_t>(i), 0x00, 0xff}),
      Value(Enum{static_cast<std::size_t>(i % 2)}),
      Value(Bytes{1, 2, 3, static_cast<std::uint8_t>(i)}),
      Value(Array{Value("x"), Value(fmt::format("t{}", i))}),
      Value(std::move(counts)),
      i % 4 == 0 ? Value(Union(0, Value())) : Value(Union(1, Value(1700000000000000 + i))),
      Value(Bytes{0, 0, 0x30, static_cast<std::uint8_t>(i)}),
      Value(static_cast<std::int32_t>(19000 + i)),
      Value(Union(1, Value(Record{{i % 3 == 0 ? Value(Union(0, Value())) : Value(Union(1, Value(small)))}}))),
  }};
}

const std::map<std::string, std::string> kIcebergMetadata = {
    {"schema", R"({"type":"struct","schema-id":0,"fields":[]})"},
    {"partition-spec", "[]"},
    {"partition-spec-id", "0"},
    {"format-version", "2"},
    {"content", "data"},
};

// Drops namespaces and shortens names, so schemas that spell names differently compare equal.
nlohmann::json unqualified_names(nlohmann::json schema) {
  if (schema.is_array()) {
    for (auto& item : schema) item = unqualified_names(item);
  } else if (schema.is_object()) {
    schema.erase("namespace");
    for (auto& [key, item] : schema.items()) {
      if (key == "name" && item.is_string()) {
        const auto name = item.get<std::string>();
        item = name.substr(name.rfind('.') + 1);
      } else {
        item = unqualified_names(item);
      }
    }
  }
  return schema;
}

class AvroInterop : public ::testing::TestWithParam<Codec> {
 protected:
  binberg::testing::TempDir dir_;
  const Schema schema_ = Schema::parse(kSchema);
};

TEST_P(AvroInterop, FastavroReadsWhatBinbergWrites) {
  const auto avro_path = dir_.path() / "written.avro";
  const int rows = 300;
  {
    std::ofstream out(avro_path, std::ios::binary);
    ContainerWriterOptions options;
    options.codec = GetParam();
    options.block_size = 1024;  // several blocks
    options.metadata = kIcebergMetadata;
    ContainerWriter writer(out, schema_, options, avro_path.string());
    for (int i = 0; i < rows; ++i) writer.append(data_file(i));
    writer.close();
  }
  const auto json_path = dir_.path() / "read.json";
  testing::run_fastavro_tool(fmt::format("read '{}' '{}'", avro_path.string(), json_path.string()));
  std::ifstream in(json_path);
  const auto result = nlohmann::json::parse(in);

  for (const auto& [key, value] : kIcebergMetadata) EXPECT_EQ(result["metadata"][key], value) << key;
  EXPECT_EQ(result["metadata"]["avro.codec"], codec_name(GetParam()));
  EXPECT_EQ(result["metadata"]["avro.schema"], schema_.to_json());
  // fastavro's parsed view of the header schema keeps every attribute binberg wrote (it only spells
  // names in full).
  EXPECT_EQ(unqualified_names(result["writer_schema"]), unqualified_names(nlohmann::json::parse(kSchema)));

  const auto& records = result["records"];
  ASSERT_EQ(records.size(), static_cast<std::size_t>(rows));
  for (int i = 0; i < rows; ++i) ASSERT_EQ(records[i], testing::to_plain(schema_.root(), data_file(i))) << i;
}

TEST_P(AvroInterop, BinbergReadsWhatFastavroWrites) {
  const int rows = 200;
  nlohmann::json records = nlohmann::json::array();
  for (int i = 0; i < rows; ++i) records.push_back(testing::to_plain(schema_.root(), data_file(i)));
  const auto schema_path = dir_.path() / "schema.json";
  const auto records_path = dir_.path() / "records.json";
  const auto metadata_path = dir_.path() / "metadata.json";
  const auto avro_path = dir_.path() / "fastavro.avro";
  testing::write_text(schema_path, std::string(kSchema));
  testing::write_text(records_path, records.dump());
  testing::write_text(metadata_path, nlohmann::json(kIcebergMetadata).dump());
  testing::run_fastavro_tool(fmt::format("write '{}' '{}' {} '{}' '{}'", schema_path.string(), records_path.string(),
                                         codec_name(GetParam()), avro_path.string(), metadata_path.string()));

  std::ifstream in(avro_path, std::ios::binary);
  ContainerReader reader(in, avro_path.string());
  EXPECT_EQ(reader.codec(), GetParam());
  for (const auto& [key, value] : kIcebergMetadata) EXPECT_EQ(reader.metadata().at(key), value) << key;
  EXPECT_EQ(reader.writer_schema().root().fields[9].type->properties.at("element-id"), 109);
  EXPECT_EQ(reader.writer_schema().canonical_form(), schema_.canonical_form());
  int count = 0;
  for (Value value; reader.next(value); ++count) {
    ASSERT_LT(count, rows);
    ASSERT_EQ(testing::to_plain(reader.writer_schema().root(), value), records[count]) << count;
  }
  EXPECT_EQ(count, rows);
}

INSTANTIATE_TEST_SUITE_P(Codecs, AvroInterop, ::testing::Values(Codec::kNull, Codec::kDeflate, Codec::kSnappy),
                         [](const auto& param_info) { return std::string(codec_name(param_info.param)); });

}  // namespace
}  // namespace binberg::avro
