#include "avro/schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "support/temp_dir.h"
#include "test_support.h"

namespace binberg::avro {
namespace {

using ::testing::HasSubstr;

// An Iceberg manifest-style schema: every extra attribute must survive parse -> print.
constexpr std::string_view kIcebergSchema = R"({
  "type": "record", "name": "manifest_entry", "namespace": "iceberg.v2",
  "doc": "one data file", "x-custom": {"nested": [1, 2, {"deep": true}]},
  "fields": [
    {"name": "status", "type": "int", "field-id": 0, "doc": "0: existing"},
    {"name": "snapshot_id", "type": ["null", "long"], "default": null, "field-id": 1},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": true}, "field-id": 2},
    {"name": "tags", "type": {"type": "array", "items": "string", "element-id": 7}, "field-id": 3},
    {"name": "counts", "type": {"type": "map", "values": "long", "key-id": 8, "value-id": 9}, "field-id": 4},
    {"name": "kv", "type": {"type": "array", "logicalType": "map", "items": {
        "type": "record", "name": "k9_v10", "fields": [
          {"name": "key", "type": "int", "field-id": 9},
          {"name": "value", "type": "bytes", "field-id": 10}]}}, "field-id": 5}
  ]})";

TEST(AvroSchema, ParsesEveryPrimitive) {
  for (const auto* name : {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}) {
    const Schema schema = Schema::parse(fmt::format("\"{}\"", name));
    EXPECT_EQ(type_name(schema.root().type), name);
    EXPECT_EQ(schema.to_json(), fmt::format("\"{}\"", name));
    EXPECT_EQ(Schema::parse(fmt::format(R"({{"type": "{}"}})", name)).root().type, schema.root().type);
  }
}

TEST(AvroSchema, PrintsEveryAttributeVerbatim) {
  const Schema schema = Schema::parse(kIcebergSchema);
  // The printed JSON must equal the input as JSON (same keys and values), including key order.
  EXPECT_EQ(Json::parse(schema.to_json()), Json::parse(kIcebergSchema));
  EXPECT_EQ(Schema::parse(schema.to_json()).to_json(), schema.to_json());

  const Node& root = schema.root();
  EXPECT_EQ(root.name, "iceberg.v2.manifest_entry");
  EXPECT_EQ(root.fields.at(1).properties.at("field-id"), 1);
  EXPECT_EQ(root.fields.at(2).type->logical_type, LogicalType::kTimestampMicros);
  EXPECT_EQ(root.fields.at(2).type->properties.at("adjust-to-utc"), true);
  EXPECT_EQ(root.fields.at(3).type->properties.at("element-id"), 7);
  EXPECT_EQ(root.fields.at(4).type->properties.at("value-id"), 9);
  EXPECT_EQ(root.fields.at(5).type->items->name, "iceberg.v2.k9_v10");
  EXPECT_EQ(root.fields.at(1).default_value, Json());
}

TEST(AvroSchema, ResolvesNamesThroughNamespaces) {
  const Schema schema = Schema::parse(R"({
    "type": "record", "name": "Outer", "namespace": "a.b", "aliases": ["Old", "x.Older"],
    "fields": [
      {"name": "inner", "type": {"type": "record", "name": "Inner", "fields": [{"name": "v", "type": "int"}]}},
      {"name": "again", "type": "Inner"},
      {"name": "full", "type": "a.b.Inner"},
      {"name": "color", "type": {"type": "enum", "name": "Color", "namespace": "c", "symbols": ["R", "G"]}},
      {"name": "color2", "type": "c.Color"},
      {"name": "top", "type": {"type": "fixed", "name": "Top", "namespace": "", "size": 2}},
      {"name": "top2", "type": "Top"},
      {"name": "dotted", "type": {"type": "fixed", "name": "x.y.Dotted", "size": 1}}
    ]})");
  const Node& root = schema.root();
  EXPECT_EQ(root.aliases, (std::vector<std::string>{"a.b.Old", "x.Older"}));
  EXPECT_EQ(root.fields[0].type, root.fields[1].type);
  EXPECT_EQ(root.fields[0].type, root.fields[2].type);
  EXPECT_EQ(root.fields[3].type->name, "c.Color");
  EXPECT_EQ(root.fields[3].type, root.fields[4].type);
  EXPECT_EQ(root.fields[5].type->name, "Top");
  EXPECT_EQ(root.fields[5].type, root.fields[6].type);
  EXPECT_EQ(root.fields[7].type->name, "x.y.Dotted");
  EXPECT_EQ(schema.find_named("a.b.Inner"), root.fields[0].type);
  // Printed references resolve to the same nodes when parsed again.
  const Schema reparsed = Schema::parse(schema.to_json());
  EXPECT_EQ(reparsed.canonical_form(), schema.canonical_form());
  EXPECT_EQ(reparsed.root().fields[6].type->name, "Top");
}

TEST(AvroSchema, RecursiveTypesFormCycles) {
  const Schema schema = Schema::parse(R"({"type": "record", "name": "Node", "fields": [
      {"name": "value", "type": "long"}, {"name": "next", "type": ["null", "Node"], "default": null}]})");
  const Node& root = schema.root();
  EXPECT_EQ(root.fields[1].type->branches[1], &root);
  EXPECT_EQ(Json::parse(schema.to_json())["fields"][1]["type"][1], "Node");
}

TEST(AvroSchema, RecognizesValidLogicalTypes) {
  struct Case {
    std::string_view schema;
    LogicalType expected;
  };
  const Case cases[] = {
      {R"({"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2})", LogicalType::kDecimal},
      {R"({"type": "fixed", "name": "d", "size": 8, "logicalType": "decimal", "precision": 18})",
       LogicalType::kDecimal},
      {R"({"type": "string", "logicalType": "uuid"})", LogicalType::kUuid},
      {R"({"type": "int", "logicalType": "date"})", LogicalType::kDate},
      {R"({"type": "int", "logicalType": "time-millis"})", LogicalType::kTimeMillis},
      {R"({"type": "long", "logicalType": "time-micros"})", LogicalType::kTimeMicros},
      {R"({"type": "long", "logicalType": "timestamp-millis"})", LogicalType::kTimestampMillis},
      {R"({"type": "long", "logicalType": "timestamp-micros"})", LogicalType::kTimestampMicros},
      {R"({"type": "long", "logicalType": "local-timestamp-millis"})", LogicalType::kLocalTimestampMillis},
      {R"({"type": "long", "logicalType": "local-timestamp-micros"})", LogicalType::kLocalTimestampMicros},
      // Invalid logical types are ignored: the underlying type remains, the attributes stay printed.
      {R"({"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 3})", LogicalType::kNone},
      {R"({"type": "fixed", "name": "f", "size": 8, "logicalType": "decimal", "precision": 19})", LogicalType::kNone},
      {R"({"type": "int", "logicalType": "timestamp-micros"})", LogicalType::kNone},
      {R"({"type": "long", "logicalType": "no-such-type"})", LogicalType::kNone},
  };
  for (const Case& c : cases) {
    const Schema schema = Schema::parse(c.schema);
    EXPECT_EQ(schema.root().logical_type, c.expected) << c.schema;
    EXPECT_EQ(Json::parse(schema.to_json()), Json::parse(c.schema)) << c.schema;
  }
  const Schema decimal = Schema::parse(cases[0].schema);
  EXPECT_EQ(decimal.root().precision, 10);
  EXPECT_EQ(decimal.root().scale, 2);
}

TEST(AvroSchema, RejectsInvalidSchemasNamingWhere) {
  struct Case {
    std::string_view schema;
    std::string_view message;
  };
  const Case cases[] = {
      {R"("foo")", "unknown type 'foo' at /"},
      {R"({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}, {"name": "x", "type": "foo"}]})",
       "unknown type 'foo' at /fields/1/type"},
      {R"({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}, {"name": "a", "type": "long"}]})",
       "field 'a' is defined twice at /fields/1"},
      {R"(["int", {"type": "record", "name": "r", "fields": []}, {"type": "enum", "name": "r", "symbols": []}])",
       "type 'r' is defined twice at /2/name"},
      {R"({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int", "default": "x"}]})",
       "field 'a' has an invalid default"},
      {R"({"type": "record", "name": "r", "fields": [{"name": "a", "type": ["null", "int"], "default": 1}]})",
       "at /fields/0"},
      {R"({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int", "default": 3000000000}]})",
       "invalid default"},
      {R"({"type": "enum", "name": "e", "symbols": ["A", "B"], "default": "C"})", "not a symbol at /default"},
      {R"({"type": "enum", "name": "e", "symbols": ["A", "A"]})", "appears twice at /symbols"},
      {R"({"type": "enum", "name": "e", "symbols": ["1A"]})", "invalid symbol"},
      {R"(["int", "long", "int"])", "union contains int twice at /2"},
      {R"(["int", ["long"]])", "may not directly contain a union at /1"},
      {R"({"type": "record", "name": "r"})", "no 'fields' array at /"},
      {R"({"type": "record", "name": "9r", "fields": []})", "invalid name '9r'"},
      {R"({"type": "record", "name": "int", "fields": []})", "'int' is a primitive type name"},
      {R"({"type": "fixed", "name": "f"})", "no non-negative 'size'"},
      {R"({"type": "fixed", "name": "f", "size": -1})", "no non-negative 'size'"},
      {R"({"type": "array"})", "array has no 'items'"},
      {R"({"type": "map", "values": "nope"})", "unknown type 'nope' at /values"},
      {R"({"name": "x"})", "no 'type'"},
      {R"(42)", "must be a string, object or array"},
      {R"({"type": "record", "name": "r", "fields": [)", "invalid JSON"},
      {R"({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int", "order": "up"}]})", "invalid order"},
      {R"({"type": "record", "name": "r", "fields": [{"type": "int"}]})", "field has no valid 'name' at /fields/0"},
  };
  for (const Case& c : cases) {
    try {
      Schema::parse(c.schema);
      ADD_FAILURE() << "accepted " << c.schema;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(c.message)) << c.schema;
      EXPECT_THAT(e.what(), HasSubstr("avro schema: ")) << c.schema;
    }
  }
}

TEST(AvroSchema, AcceptsValidDefaults) {
  const Schema schema = Schema::parse(R"({"type": "record", "name": "r", "fields": [
      {"name": "b", "type": "bytes", "default": "\u00ff\u0000a"},
      {"name": "f", "type": {"type": "fixed", "name": "F", "size": 2}, "default": "ab"},
      {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["X", "Y"]}, "default": "Y"},
      {"name": "a", "type": {"type": "array", "items": "double"}, "default": [1, 2.5]},
      {"name": "m", "type": {"type": "map", "values": "int"}, "default": {"k": 1}},
      {"name": "u", "type": ["string", "null"], "default": "s"},
      {"name": "n", "type": {"type": "record", "name": "N", "fields": [{"name": "x", "type": "int", "default": 4}]},
       "default": {}}]})");
  EXPECT_EQ(value_from_json(*schema.root().fields[0].type, *schema.root().fields[0].default_value),
            Value(Bytes{0xff, 0x00, 'a'}));
  EXPECT_EQ(value_from_json(*schema.root().fields[6].type, *schema.root().fields[6].default_value),
            Value(Record{{Value(std::int32_t{4})}}));
}

// default_json writes what value_from_json reads back, for every kind a column default can be.
TEST(AvroSchema, DefaultsWrittenFromValuesReadBackTheSame) {
  const Schema schema = Schema::parse(R"({"type": "record", "name": "r", "fields": [
      {"name": "i", "type": "int"}, {"name": "l", "type": "long"}, {"name": "f", "type": "float"},
      {"name": "d", "type": "double"}, {"name": "s", "type": "string"}, {"name": "b", "type": "bytes"},
      {"name": "t", "type": "boolean"}, {"name": "n", "type": "null"}]})");
  const std::vector<Value> values = {
      Value(std::int32_t{-7}),     Value(std::int64_t{1} << 40),         Value(1.5f), Value(-2.25),
      Value(std::string("grüße")), Value(Bytes{0x00, 0x7f, 0x80, 0xff}), Value(true), Value()};
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Json json = default_json(values[i]);
    EXPECT_EQ(value_from_json(*schema.root().fields[i].type, json), values[i]) << json.dump();
  }
  EXPECT_THROW(default_json(Value(Record{{Value(std::int32_t{1})}})), Error);
}

// Schemas covering every canonical-form rule: full names, stripped attributes, key order, references.
const std::string_view kCanonicalCases[] = {
    R"("int")",
    R"({"type": "long", "logicalType": "timestamp-micros"})",
    R"(["null", "string", {"type": "array", "items": {"type": "map", "values": "bytes"}}])",
    R"({"type": "fixed", "name": "md5", "namespace": "org.x", "size": 16, "aliases": ["h"]})",
    R"({"type": "enum", "name": "Suit", "doc": "cards", "symbols": ["SPADES", "HEARTS"], "default": "HEARTS"})",
    kIcebergSchema,
    R"({"type": "record", "name": "LinkedList", "namespace": "n", "fields": [
        {"name": "value", "type": "int", "doc": "v", "order": "descending"},
        {"name": "next", "type": ["null", "LinkedList"], "default": null, "aliases": ["tail"]},
        {"name": "other", "type": {"type": "record", "name": "Other", "namespace": "m",
                                   "fields": [{"name": "back", "type": ["null", "n.LinkedList"]}]}},
        {"name": "other2", "type": "m.Other"}]})",
};

TEST(AvroSchema, CanonicalFormAndFingerprintsMatchFastavro) {
  const binberg::testing::TempDir dir;
  for (const std::string_view text : kCanonicalCases) {
    const Schema schema = Schema::parse(text);
    const auto path = dir.path() / "schema.json";
    testing::write_text(path, std::string(text));
    const auto reference = nlohmann::json::parse(testing::run_fastavro_tool("canonical " + path.string()));
    EXPECT_EQ(schema.canonical_form(), reference.at("canonical").get<std::string>()) << text;
    // fastavro prints the CRC-64-AVRO fingerprint as its 8 bytes in little-endian order.
    std::string little_endian;
    for (int i = 0; i < 8; ++i) little_endian.push_back(static_cast<char>((schema.fingerprint64() >> (8 * i)) & 0xff));
    EXPECT_EQ(testing::hex(little_endian), reference.at("crc64").get<std::string>()) << text;
    const auto sha = schema.fingerprint_sha256();
    EXPECT_EQ(testing::hex({reinterpret_cast<const char*>(sha.data()), sha.size()}),
              reference.at("sha256").get<std::string>())
        << text;
  }
}

// Vector computed once with fastavro 1.13.1:
//   .venv/bin/python -c "import fastavro.schema as s; print(s.fingerprint(s.to_parsing_canonical_form('int'),
//   'CRC-64-AVRO'))"
// It pins the CRC table independently of the Python reference run above.
TEST(AvroSchema, Crc64OfPrimitivesMatchesRecordedVectors) {
  auto little_endian_hex = [](std::uint64_t fp) {
    std::string bytes;
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((fp >> (8 * i)) & 0xff));
    return testing::hex(bytes);
  };
  EXPECT_EQ(little_endian_hex(Schema::parse(R"("int")").fingerprint64()), "8f5c393f1ad57572");
}

}  // namespace
}  // namespace binberg::avro
