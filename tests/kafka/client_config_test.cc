#include "kafka/client_config.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafkacpp.h>

#include "core/error.h"

namespace binberg::kafka {
namespace {

TEST(ClientConfigTest, PassesTlsAndSaslPropertiesThrough) {
  ClientOptions options{"127.0.0.1:1",
                        {{"security.protocol", "sasl_ssl"},
                         {"sasl.mechanism", "SCRAM-SHA-512"},
                         {"sasl.username", "cdc"},
                         {"sasl.password", "s3cret"},
                         {"ssl.endpoint.identification.algorithm", "https"}}};
  auto conf = make_config(options, {{"client.id", "binberg"}, {"security.protocol", "plaintext"}});
  std::string value;
  ASSERT_EQ(conf->get("security.protocol", value), RdKafka::Conf::CONF_OK);
  EXPECT_EQ(value, "sasl_ssl") << "user options must win over defaults";
  ASSERT_EQ(conf->get("sasl.mechanisms", value), RdKafka::Conf::CONF_OK);
  EXPECT_EQ(value, "SCRAM-SHA-512");
  ASSERT_EQ(conf->get("bootstrap.servers", value), RdKafka::Conf::CONF_OK);
  EXPECT_EQ(value, "127.0.0.1:1");
}

TEST(ClientConfigTest, RejectedPropertyIsNamedAndSecretsRedacted) {
  try {
    make_config(ClientOptions{"127.0.0.1:1", {{"no.such.property", "v"}}}, {});
    FAIL() << "accepted an unknown property";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no.such.property"), std::string::npos) << e.what();
  }
  try {
    make_config(ClientOptions{"127.0.0.1:1", {{"ssl.key.password.bogus", "hunter2"}}}, {});
    FAIL() << "accepted an unknown property";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << "secret leaked: " << e.what();
    EXPECT_NE(std::string(e.what()).find("<redacted>"), std::string::npos) << e.what();
  }
}

TEST(ClientConfigTest, SecretPropertyNames) {
  EXPECT_TRUE(is_secret_property("sasl.password"));
  EXPECT_TRUE(is_secret_property("ssl.key.password"));
  EXPECT_TRUE(is_secret_property("ssl.key.pem"));
  EXPECT_TRUE(is_secret_property("sasl.oauthbearer.client.secret"));
  EXPECT_FALSE(is_secret_property("sasl.username"));
  EXPECT_FALSE(is_secret_property("bootstrap.servers"));
}

TEST(ClientConfigTest, MissingBootstrapIsAConfigError) { EXPECT_THROW(make_config(ClientOptions{}, {}), ConfigError); }

}  // namespace
}  // namespace binberg::kafka
