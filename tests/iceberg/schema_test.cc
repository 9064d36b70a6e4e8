// Iceberg types and schemas against the spec's "Schemas and Data Types" rules and the JSON form of
// its Appendix C.

#include "iceberg/schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"

namespace binberg::iceberg {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

NestedField field(std::int32_t id, std::string name, bool required, TypePtr type) {
  return NestedField{id, std::move(name), required, std::move(type), std::nullopt};
}

Json round_trip_type(const std::string& json_text) {
  return type_to_json(*type_from_json(Json::parse(json_text), "test type"));
}

TEST(TypesTest, PrimitiveTypeStringsRoundTrip) {
  for (const char* name : {"boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz",
                           "string", "uuid", "binary", "decimal(10,2)", "decimal(38,0)", "fixed[16]", "fixed[1]"}) {
    EXPECT_EQ(round_trip_type(Json(name).dump()), Json(name)) << name;
  }
}

TEST(TypesTest, DecimalAcceptsTheSpacedFormPyicebergWrites) {
  const TypePtr type = type_from_json("decimal(9, 2)", "test");
  EXPECT_EQ(type->kind(), TypeKind::kDecimal);
  EXPECT_EQ(type->decimal_precision(), 9);
  EXPECT_EQ(type->decimal_scale(), 2);
  EXPECT_EQ(type_to_json(*type), "decimal(9,2)");
}

TEST(TypesTest, NestedTypesRoundTripInTheSpecLayout) {
  const std::string list = R"({"type":"list","element-id":3,"element-required":true,"element":"string"})";
  const std::string map =
      R"({"type":"map","key-id":4,"key":"string","value-id":5,"value-required":false,"value":"double"})";
  const std::string nested =
      R"({"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"uuid","doc":"row key"},)"
      R"({"id":2,"name":"data","required":false,"type":{"type":"list","element-id":6,"element-required":false,)"
      R"("element":{"type":"map","key-id":7,"key":"int","value-id":8,"value-required":true,"value":"fixed[4]"}}}]})";
  for (const auto& text : {list, map, nested}) EXPECT_EQ(round_trip_type(text).dump(), text);
}

TEST(TypesTest, RejectsInvalidTypesWithTheirPlace) {
  EXPECT_THAT([] { type_from_json("varchar", "schema 0 field 3"); },
              ThrowsMessage<Error>(HasSubstr("schema 0 field 3: unknown Iceberg type \"varchar\"")));
  EXPECT_THAT([] { type_from_json("decimal(39,2)", "f"); },
              ThrowsMessage<Error>(HasSubstr("decimal precision must be 1..38")));
  EXPECT_THAT([] { type_from_json("fixed[0]", "f"); },
              ThrowsMessage<Error>(HasSubstr("fixed length must be positive")));
  EXPECT_THAT([] { type_from_json(Json::parse(R"({"type":"list","element-id":3,"element":"int"})"), "f"); },
              ThrowsMessage<Error>(HasSubstr("f is missing required field \"element-required\"")));
  EXPECT_THAT([] { type_from_json(Json::parse(R"({"type":"variant"})"), "f"); },
              ThrowsMessage<Error>(HasSubstr("unknown nested type \"variant\"")));
}

TEST(TypesTest, MapKeysAreAlwaysRequired) {
  const TypePtr map = map_type(1, string_type(), 2, false, long_type());
  EXPECT_TRUE(map->map_key().required);
  EXPECT_FALSE(map->map_value().required);
  EXPECT_EQ(map->to_string(), "map<1: key: required string, 2: value: optional long>");
}

Schema sample_schema() {
  return Schema(3,
                {field(1, "id", true, long_type()),
                 field(2, "location", true,
                       struct_type({field(3, "lat", true, double_type()), field(4, "zip", true, string_type())})),
                 field(5, "tags", false, list_type(6, true, string_type())),
                 field(7, "attrs", false, map_type(8, string_type(), 9, false, int_type())),
                 field(10, "extra", false, struct_type({field(11, "code", true, int_type())}))},
                {1, 4});
}

TEST(SchemaTest, FindsFieldsByIdAndFullName) {
  const Schema schema = sample_schema();
  EXPECT_EQ(schema.highest_field_id(), 11);
  EXPECT_EQ(schema.find_field(4)->name, "zip");
  EXPECT_EQ(schema.find_field("location.zip")->id, 4);
  EXPECT_EQ(schema.find_field("tags.element")->id, 6);
  EXPECT_EQ(schema.find_field("attrs.key")->id, 8);
  EXPECT_EQ(schema.find_field("attrs.value")->id, 9);
  EXPECT_EQ(schema.find_field("zip"), nullptr);
  EXPECT_EQ(schema.find_field(12), nullptr);
  EXPECT_EQ(schema.full_name(11), "extra.code");
  EXPECT_TRUE(schema.is_in_list_or_map(6));
  EXPECT_FALSE(schema.is_in_list_or_map(4));
}

TEST(SchemaTest, FieldsStayValidInCopies) {
  const NestedField* zip = nullptr;
  Schema copy = [&] {
    Schema original = sample_schema();
    zip = original.find_field(4);
    return original.with_schema_id(9);
  }();
  EXPECT_EQ(copy.schema_id(), 9);
  EXPECT_EQ(copy.find_field(4), zip);
  EXPECT_EQ(zip->name, "zip");
}

TEST(SchemaTest, JsonRoundTripKeepsEverything) {
  const Schema schema = sample_schema();
  const Json json = schema_to_json(schema);
  EXPECT_EQ(json["type"], "struct");
  EXPECT_EQ(json["schema-id"], 3);
  EXPECT_EQ(json["identifier-field-ids"], Json::parse("[1,4]"));
  EXPECT_EQ(schema_from_json(json), schema);
  EXPECT_EQ(schema_to_json(schema_from_json(json)), json);
}

TEST(SchemaTest, DocIsPartOfTheField) {
  NestedField documented = field(1, "id", true, long_type());
  documented.doc = "primary key";
  const Schema schema(0, {documented});
  EXPECT_EQ(schema_to_json(schema)["fields"][0]["doc"], "primary key");
  EXPECT_EQ(schema_from_json(schema_to_json(schema)).fields()[0].doc, "primary key");
  EXPECT_FALSE(schema.same_structure(Schema(0, {field(1, "id", true, long_type())})));
}

TEST(SchemaTest, IdentifierFieldsMustBeRequiredNonFloatingPrimitivesOutsideOptionalStructsListsAndMaps) {
  const auto with_identifiers = [](std::vector<std::int32_t> ids) {
    return [ids] { (void)Schema(0, sample_schema().fields(), ids); };
  };
  EXPECT_THAT(with_identifiers({3}),
              ThrowsMessage<Error>(HasSubstr("identifier field 3 (\"location.lat\") must not be a double")));
  EXPECT_THAT(with_identifiers({2}), ThrowsMessage<Error>(HasSubstr("must be a primitive")));
  EXPECT_THAT(with_identifiers({6}), ThrowsMessage<Error>(HasSubstr("must not be nested in a list or map")));
  EXPECT_THAT(with_identifiers({8}), ThrowsMessage<Error>(HasSubstr("must not be nested in a list or map")));
  EXPECT_THAT(with_identifiers({11}),
              ThrowsMessage<Error>(HasSubstr("\"extra.code\") must not be nested in an optional struct")));
  EXPECT_THAT(with_identifiers({9}),
              ThrowsMessage<Error>(HasSubstr("identifier field 9 (\"attrs.value\") must be required")));
  EXPECT_THAT(with_identifiers({42}), ThrowsMessage<Error>(HasSubstr("schema 0: identifier field 42 does not exist")));
  EXPECT_THAT(with_identifiers({1, 1}), ThrowsMessage<Error>(HasSubstr("is listed twice")));
  EXPECT_NO_THROW(with_identifiers({1, 4})());
}

TEST(SchemaTest, RejectsDuplicateIdsNamesAndReservedIds) {
  EXPECT_THAT(
      [] {
        Schema(0, {field(1, "a", true, int_type()), field(1, "b", true, int_type())});
      },
      ThrowsMessage<Error>(HasSubstr("schema 0: field id 1 is used by both \"a\" and \"b\"")));
  EXPECT_THAT(
      [] {
        Schema(0, {field(1, "a", true, int_type()), field(2, "a", true, int_type())});
      },
      ThrowsMessage<Error>(HasSubstr("struct has two fields named \"a\"")));
  EXPECT_THAT([] { Schema(0, {field(1, "a", true, list_type(1, true, int_type()))}); },
              ThrowsMessage<Error>(HasSubstr("field id 1 is used by both \"a\" and \"a.element\"")));
  EXPECT_THAT([] { Schema(0, {field(2147483646, "_file", true, string_type())}); },
              ThrowsMessage<Error>(HasSubstr("outside 0..2147483447")));
}

TEST(SchemaTest, RejectsMalformedJson) {
  EXPECT_THAT([] { schema_from_json(Json::parse(R"({"type":"struct","fields":[]})")); },
              ThrowsMessage<Error>(HasSubstr("schema is missing required field \"schema-id\"")));
  EXPECT_THAT([] { schema_from_json(Json::parse(R"({"type":"list","schema-id":1,"fields":[]})")); },
              ThrowsMessage<Error>(HasSubstr("schema 1 must have type \"struct\"")));
  EXPECT_THAT(
      [] {
        schema_from_json(Json::parse(R"({"type":"struct","schema-id":1,"fields":[{"id":1,"name":"a","type":"int"}]})"));
      },
      ThrowsMessage<Error>(HasSubstr("schema 1 field 1 is missing required field \"required\"")));
  EXPECT_THAT(
      [] {
        schema_from_json(Json::parse(
            R"({"type":"struct","schema-id":1,"fields":[{"id":"1","name":"a","required":true,"type":"int"}]})"));
      },
      ThrowsMessage<Error>(HasSubstr("schema 1 field \"id\" must be an integer")));
}

}  // namespace
}  // namespace binberg::iceberg
