#include "evidence/json_schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace binberg::evidence {
namespace {

using nlohmann::json;

// The official JSON-Schema-Test-Suite (draft-07), as Debian's json-schema-test-suite installs it.
const std::filesystem::path kSuite = "/usr/share/json-schema-test-suite/tests/draft7";

// Whether SCHEMA holds a $ref to something outside itself (a URI not starting with '#').
bool refers_outside(const json& schema) {
  if (schema.is_object()) {
    for (const auto& [key, value] : schema.items()) {
      if (key == "$ref" && value.is_string() && !value.get<std::string>().starts_with("#")) return true;
      if (refers_outside(value)) return true;
    }
  } else if (schema.is_array()) {
    for (const json& item : schema) {
      if (refers_outside(item)) return true;
    }
  }
  return false;
}

// Every case of the suite's files for the keywords binberg supports: a case whose schema uses a
// keyword it refuses (remote references, ...) is counted as refused, never as passed.
TEST(JsonSchemaTest, AgreesWithTheOfficialTestSuiteOnEverySupportedKeyword) {
  ASSERT_TRUE(std::filesystem::is_directory(kSuite)) << kSuite << ": install json-schema-test-suite (scripts/setup)";
  const char* files[] = {"type",
                         "enum",
                         "const",
                         "properties",
                         "required",
                         "additionalProperties",
                         "patternProperties",
                         "minProperties",
                         "items",
                         "additionalItems",
                         "minItems",
                         "maxItems",
                         "uniqueItems",
                         "minimum",
                         "maximum",
                         "exclusiveMinimum",
                         "exclusiveMaximum",
                         "multipleOf",
                         "minLength",
                         "maxLength",
                         "pattern",
                         "allOf",
                         "anyOf",
                         "oneOf",
                         "not",
                         "definitions",
                         "ref",
                         "boolean_schema",
                         "default"};
  std::size_t checked = 0, remote_reference_groups = 0;
  std::vector<std::string> refused;
  for (const char* file : files) {
    std::ifstream in(kSuite / (std::string(file) + ".json"));
    ASSERT_TRUE(in) << file;
    for (const json& group : json::parse(in)) {
      remote_reference_groups += refers_outside(group.at("schema")) ? 1 : 0;
      std::optional<JsonSchema> schema;
      try {
        schema = JsonSchema::parse(group.at("schema"));
      } catch (const Error& error) {
        refused.push_back(std::string(file) + ": " + group.at("description").get<std::string>());
        continue;
      }
      for (const json& test : group.at("tests")) {
        const bool valid = schema->validate(test.at("data")).empty();
        EXPECT_EQ(valid, test.at("valid").get<bool>()) << file << ": " << group.at("description").get<std::string>()
                                                       << ": " << test.at("description").get<std::string>();
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 300u);
  // Refused: schemas referring outside themselves, and one that keeps schemas under unknown
  // keywords (unknown keywords are refused, so that none is silently left unchecked).
  EXPECT_EQ(refused.size(), remote_reference_groups + 1) << ::testing::PrintToString(refused);
  EXPECT_THAT(refused, ::testing::Contains("ref: escaped pointer ref"));
}

TEST(JsonSchemaTest, ReferencesAreJsonPointersWithPercentAndTildeEscapes) {
  const JsonSchema schema = JsonSchema::parse(json::parse(R"({
    "definitions": {"tilde~field": {"type": "integer"}, "slash/field": {"type": "integer"},
                    "percent%field": {"type": "integer"}},
    "properties": {"tilde": {"$ref": "#/definitions/tilde~0field"}, "slash": {"$ref": "#/definitions/slash~1field"},
                   "percent": {"$ref": "#/definitions/percent%25field"}}})"));
  EXPECT_TRUE(schema.validate(json::parse(R"({"tilde": 1, "slash": 2, "percent": 3})")).empty());
  EXPECT_EQ(schema.validate(json::parse(R"({"tilde": "a", "slash": "b", "percent": "c"})")).size(), 3u);
}

TEST(JsonSchemaTest, AnUnsupportedKeywordIsRefusedNamingWhereItIs) {
  try {
    JsonSchema::parse(json::parse(R"({"properties": {"a": {"if": {"type": "string"}}}})"));
    FAIL() << "a schema with 'if' was accepted";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "JSON schema /properties/a/if: keyword 'if' is not supported");
  }
}

TEST(JsonSchemaTest, ViolationsNameTheValueAndWhatIsWrong) {
  const JsonSchema schema = JsonSchema::parse(json::parse(R"({
    "type": "object", "required": ["run_id", "checks"], "additionalProperties": false,
    "properties": {"run_id": {"type": "string", "pattern": "^[0-9]{8}T"},
                   "checks": {"type": "array", "items": {"$ref": "#/definitions/check"}}},
    "definitions": {"check": {"type": "object", "required": ["verdict"],
                              "properties": {"verdict": {"enum": ["pass", "fail", "skipped"]}}}}})"));
  EXPECT_TRUE(schema.validate(json::parse(R"({"run_id": "20261207T0102", "checks": [{"verdict": "pass"}]})")).empty());
  EXPECT_THAT(schema.validate(json::parse(R"({"run_id": "x", "checks": [{"verdict": "ok"}], "extra": 1})")),
              ::testing::UnorderedElementsAre(R"(/run_id: "x" does not match "^[0-9]{8}T")",
                                              R"(/checks/0/verdict: "ok" is not one of ["pass","fail","skipped"])",
                                              "/: property 'extra' is not allowed"));
}

}  // namespace
}  // namespace binberg::evidence
