#include "registry/registry_client.h"

#include <gtest/gtest.h>

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
// FORWARD. Note: on Apicurio's ccompat API a subject level of NONE removes the subject's rule, so
// the global rule applies again (Confluent would allow anything); binberg never relies on NONE.
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
