#include "registry/registry_client.h"

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <span>
#include <vector>

#include "avro/compatibility.h"
#include "avro/schema.h"
#include "support/test_services.h"

namespace binberg::registry {
namespace {

std::string record_schema(const std::string& amount_type) {
  return R"({"type":"record","name":"Order","namespace":"binberg.test","fields":[{"name":"id","type":"long"},)"
         R"({"name":"amount","type":")" +
         amount_type + R"("}]})";
}

class RegistryClientTest : public ::testing::Test {
 protected:
  RegistryClient client_{RegistryOptions{testing::stack().registry_url()}};
  std::string subject_ = value_subject(testing::unique_name("orders"));
};

TEST_F(RegistryClientTest, RegisterIsIdempotentAndIdsResolve) {
  const auto id = client_.register_schema(subject_, record_schema("long"));
  EXPECT_EQ(client_.register_schema(subject_, record_schema("long")), id) << "same schema must keep its id";
  const std::string stored = client_.schema_by_id(id);
  EXPECT_NE(stored.find("\"Order\""), std::string::npos) << stored;
  EXPECT_NE(stored.find("\"amount\""), std::string::npos) << stored;
}

TEST_F(RegistryClientTest, GlobalBackwardRuleRejectsIncompatibleSchemaWith409) {
  client_.register_schema(subject_, record_schema("long"));
  EXPECT_FALSE(client_.is_compatible(subject_, record_schema("string")));
  try {
    client_.register_schema(subject_, record_schema("string"));
    FAIL() << "registry accepted long -> string under BACKWARD";
  } catch (const RegistryError& e) {
    EXPECT_EQ(e.http_status(), 409) << e.what();
    EXPECT_NE(std::string(e.what()).find(subject_), std::string::npos) << e.what();
  }
  // Widening long -> double is backward compatible (a reader with double reads long data).
  EXPECT_TRUE(client_.is_compatible(subject_, record_schema("double")));
}

// Adding a field without a default breaks BACKWARD (new readers cannot read old data) but not
// FORWARD.
TEST_F(RegistryClientTest, SubjectRuleOverridesTheGlobalRule) {
  const std::string v1 = R"({"type":"record","name":"R","fields":[{"name":"a","type":"int"}]})";
  const std::string v2 =
      R"({"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"string"}]})";
  client_.register_schema(subject_, v1);
  EXPECT_FALSE(client_.is_compatible(subject_, v2)) << "global rule must be BACKWARD";
  client_.set_compatibility(subject_, "FORWARD");
  EXPECT_TRUE(client_.is_compatible(subject_, v2));
  EXPECT_NO_THROW(client_.register_schema(subject_, v2));
}

TEST_F(RegistryClientTest, LookupLatestVersionAndCompatibilityLevel) {
  const auto id1 = client_.register_schema(subject_, record_schema("long"));
  const auto id2 = client_.register_schema(subject_, record_schema("double"));
  EXPECT_NE(id1, id2);
  const auto found = client_.lookup(subject_, record_schema("long"));
  EXPECT_EQ(found.id, id1);
  EXPECT_EQ(found.version, 1);
  const auto latest = client_.latest_version(subject_);
  EXPECT_EQ(latest.id, id2);
  EXPECT_EQ(latest.version, 2);
  EXPECT_NE(latest.schema.find("double"), std::string::npos) << latest.schema;
  EXPECT_EQ(client_.compatibility(subject_), "BACKWARD") << "falls back to the global level";
  client_.set_compatibility(subject_, "FULL");
  EXPECT_EQ(client_.compatibility(subject_), "FULL");
  try {
    client_.lookup(subject_, record_schema("string"));
    FAIL() << "found a schema that was never registered";
  } catch (const RegistryError& e) {
    EXPECT_EQ(e.http_status(), 404) << e.what();
  }
}

// Apicurio's ccompat API deletes a subject's rule when it is set to NONE, so the global BACKWARD
// rule applied again; set_compatibility must give NONE semantics anyway (see its comment).
TEST_F(RegistryClientTest, SubjectLevelNoneAllowsAnythingDespiteTheGlobalRule) {
  ASSERT_EQ(client_.compatibility(""), "BACKWARD") << "the test stack's global level";
  // A subject without versions yet, then one with versions.
  client_.set_compatibility(subject_, "NONE");
  EXPECT_EQ(client_.compatibility(subject_), "NONE");
  client_.register_schema(subject_, record_schema("long"));
  EXPECT_TRUE(client_.is_compatible(subject_, record_schema("string")));
  EXPECT_NO_THROW(client_.register_schema(subject_, record_schema("string")));

  const std::string other = value_subject(testing::unique_name("orders"));
  client_.register_schema(other, record_schema("long"));
  EXPECT_FALSE(client_.is_compatible(other, record_schema("string")));
  client_.set_compatibility(other, "NONE");
  EXPECT_EQ(client_.compatibility(other), "NONE");
  EXPECT_TRUE(client_.is_compatible(other, record_schema("string")));
  EXPECT_NO_THROW(client_.register_schema(other, record_schema("string")));
  // Setting NONE twice, then a real level again, behaves like any other change of level.
  EXPECT_NO_THROW(client_.set_compatibility(other, "NONE"));
  client_.set_compatibility(other, "BACKWARD");
  EXPECT_EQ(client_.compatibility(other), "BACKWARD");
  EXPECT_FALSE(client_.is_compatible(other, record_schema("boolean")));
  EXPECT_EQ(client_.compatibility(""), "BACKWARD") << "the global level is untouched";
}

// The schema-evolution matrix: binberg's own checker (avro::check_compatibility) against the
// registry's verdict for the same (latest, candidate) pair, for BACKWARD, FORWARD and FULL.
struct EvolutionCase {
  std::string name;
  std::string latest;
  std::string candidate;
  // Verdicts for BACKWARD, FORWARD, FULL per the Avro specification's resolution rules: what
  // binberg's checker must say.
  std::array<bool, 3> spec;
  // The registry's verdicts where they differ from the specification's (document why at the case).
  std::optional<std::array<bool, 3>> registry = std::nullopt;
};

std::string record_of(const std::string& fields, const std::string& name = "Row", const std::string& extra = "") {
  return R"({"type":"record","name":")" + name + R"(","namespace":"binberg.test")" + extra + R"(,"fields":[)" + fields +
         "]}";
}

std::string enum_field(const std::string& symbols, const std::string& extra = "") {
  return R"({"name":"e","type":{"type":"enum","name":"E","symbols":[)" + symbols + "]" + extra + "}}";
}

std::vector<EvolutionCase> evolution_cases() {
  const std::string a = R"({"name":"a","type":"int"})";
  const std::string b = R"({"name":"b","type":"string"})";
  const std::string b_default = R"({"name":"b","type":"string","default":"x"})";
  const std::string ab = enum_field(R"("A","B")");
  const std::string abc = enum_field(R"("A","B","C")");
  return {
      //                                     BACKWARD FORWARD FULL
      {"add field with default", record_of(a), record_of(a + "," + b_default), {true, true, true}},
      {"add field without default", record_of(a), record_of(a + "," + b), {false, true, false}},
      {"remove field without default", record_of(a + "," + b), record_of(a), {true, false, false}},
      {"remove field with default", record_of(a + "," + b_default), record_of(a), {true, true, true}},
      {"change type int to string", record_of(a), record_of(R"({"name":"a","type":"string"})"), {false, false, false}},
      {"widen int to long", record_of(a), record_of(R"({"name":"a","type":"long"})"), {true, false, false}},
      {"narrow long to int", record_of(R"({"name":"a","type":"long"})"), record_of(a), {false, true, false}},
      {"widen int to float", record_of(a), record_of(R"({"name":"a","type":"float"})"), {true, false, false}},
      {"string to bytes", record_of(b), record_of(R"({"name":"b","type":"bytes"})"), {true, true, true}},
      {"int to nullable int", record_of(a), record_of(R"({"name":"a","type":["null","int"]})"), {true, false, false}},
      // A reader field's alias matches the writer's field: the new schema reads old data, but the
      // old schema has no alias for the new name, so it cannot read new data.
      {"rename field via alias",
       record_of(a),
       record_of(R"({"name":"a2","type":"int","aliases":["a"]})"),
       {true, false, false}},
      {"rename record via alias",
       record_of(a),
       record_of(a, "Row2", R"(,"aliases":["binberg.test.Row"])"),
       {true, false, false}},
      {"add enum symbol", record_of(ab), record_of(abc), {true, false, false}},
      {"remove enum symbol", record_of(abc), record_of(ab), {false, true, false}},
      // With an enum default the old reader maps the unknown symbol C to its default.
      {"add enum symbol with default",
       record_of(enum_field(R"("A","B")", R"(,"default":"A")")),
       record_of(enum_field(R"("A","B","C")", R"(,"default":"A")")),
       {true, true, true}},
  };
}

// Apicurio 3.0.9 checks with Avro Java's SchemaCompatibility, which follows the specification for
// every pair above, so no case sets `registry`. Where a future registry (or case) disagrees, the
// registry's verdict is asserted for the registry and the specification's for binberg's checker.
TEST_F(RegistryClientTest, CompatibilityVerdictsMatchTheRegistry) {
  using avro::Compatibility;
  const std::array<std::pair<const char*, Compatibility>, 3> levels = {
      {{"BACKWARD", Compatibility::kBackward}, {"FORWARD", Compatibility::kForward}, {"FULL", Compatibility::kFull}}};
  int subject_index = 0;
  for (const EvolutionCase& c : evolution_cases()) {
    const avro::Schema latest = avro::Schema::parse(c.latest);
    const avro::Schema candidate = avro::Schema::parse(c.candidate);
    for (std::size_t i = 0; i < levels.size(); ++i) {
      const auto& [level_name, level] = levels[i];
      SCOPED_TRACE(fmt::format("{} under {}: {} -> {}", c.name, level_name, c.latest, c.candidate));
      const std::string subject = fmt::format("{}-{}", subject_, subject_index++);
      client_.register_schema(subject, c.latest);
      client_.set_compatibility(subject, level_name);
      const bool registry_verdict = client_.is_compatible(subject, c.candidate);
      const std::vector<std::string> problems = avro::check_compatibility(candidate, std::span(&latest, 1), level);
      EXPECT_EQ(registry_verdict, c.registry ? (*c.registry)[i] : c.spec[i]) << "registry verdict";
      EXPECT_EQ(problems.empty(), c.spec[i]) << "binberg verdict: " << fmt::format("{}", fmt::join(problems, "; "));
    }
  }
}

TEST_F(RegistryClientTest, UnknownIdIs404) {
  try {
    client_.schema_by_id(987654321);
    FAIL() << "found a schema that was never registered";
  } catch (const RegistryError& e) {
    EXPECT_EQ(e.http_status(), 404);
    EXPECT_EQ(e.error_code(), 40403);
  }
}

TEST(RegistryClientConfigTest, UnreachableRegistryNamesTheAddress) {
  RegistryClient client(RegistryOptions{"http://127.0.0.1:1/apis/ccompat/v7", std::chrono::milliseconds(500)});
  try {
    client.schema_by_id(1);
    FAIL() << "no error from a closed port";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace binberg::registry
