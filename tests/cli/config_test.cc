// The configuration file: defaults, every validation error naming file, section and key, secrets
// kept out of the file, and capture rules.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "cli/config.h"
#include "core/error.h"
#include "iceberg/catalog.h"
#include "support/temp_dir.h"
#include "tables/table_pair.h"

namespace binberg::cli {
namespace {

const std::string kMinimal = R"([source]
user = "binberg"
server_id = 4201

[capture]
include = ["shop.*"]

[iceberg]
catalog_uri = "sqlite:////tmp/catalog.db"
warehouse = "/tmp/warehouse"
)";

// The ConfigError message for TEXT, or "" when it parses.
std::string config_error(const std::string& text) {
  try {
    parse_config(text, "test.toml");
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

TEST(ConfigTest, MinimalFileGetsTheDocumentedDefaults) {
  const Config config = parse_config(kMinimal, "test.toml");
  EXPECT_EQ(config.source.host, "127.0.0.1");
  EXPECT_EQ(config.source.port, 3306);
  EXPECT_EQ(config.source.user, "binberg");
  EXPECT_EQ(config.source.password, "");
  EXPECT_FALSE(config.source.tls.enabled);
  EXPECT_EQ(config.server_id, 4201U);
  EXPECT_EQ(config.catalog.name, "binberg");
  EXPECT_EQ(config.catalog.uri, "sqlite:////tmp/catalog.db");
  EXPECT_EQ(config.catalog.durability, iceberg::CatalogDurability::kRequired) << "a durable catalog unless allowed";
  EXPECT_EQ(parse_config(kMinimal + "allow_non_durable_catalog = true\n", "t").catalog.durability,
            iceberg::CatalogDurability::kNotRequired);
  EXPECT_EQ(config.changelog_suffix, "_changelog");
  EXPECT_EQ(config.commit.interval, std::chrono::milliseconds(1000));
  EXPECT_EQ(config.commit.max_events, 200'000U);
  EXPECT_EQ(config.writer_id, "binberg");
  EXPECT_EQ(config.metrics_address, "") << "no metrics endpoint unless asked for";
  EXPECT_EQ(config.path, "test.toml");
  EXPECT_EQ(parse_config(kMinimal + "[metrics]\naddress = \"127.0.0.1:9464\"\n", "t").metrics_address,
            "127.0.0.1:9464");
}

TEST(ConfigTest, ErrorsNameFileSectionAndKey) {
  EXPECT_EQ(config_error(kMinimal + "[commit]\ninterval_ms = 0\n"),
            "test.toml: [commit] interval_ms: must be positive");
  EXPECT_EQ(config_error(kMinimal + "[commit]\nintervall_ms = 5\n"),
            "test.toml: [commit] intervall_ms: unknown option");
  EXPECT_EQ(config_error(kMinimal + "[metrics]\nport = 9464\n"), "test.toml: [metrics] port: unknown option");
  EXPECT_EQ(config_error(kMinimal + "[replicator]\nwriter_id = 7\n"),
            "test.toml: [replicator] writer_id: expected a string");
  EXPECT_NE(config_error(kMinimal + "[sinks]\n").find("unknown section or option 'sinks'"), std::string::npos);
  EXPECT_NE(config_error("[source]\nuser = \"u\"\n").find("[source] server_id: is required"), std::string::npos);
  EXPECT_NE(config_error(R"([source]
user = "u"
server_id = 1
port = 70000
)")
                .find("[source] port: 70000 is out of range"),
            std::string::npos);
  // TOML syntax errors carry line and column.
  EXPECT_NE(config_error("[source\n").find("test.toml:1:"), std::string::npos);
}

TEST(ConfigTest, MemoryLimitsReachTheReaderAndWriters) {
  const replicate::ReplicatorOptions defaults = replicator_options(parse_config(kMinimal, "t"), {});
  EXPECT_EQ(defaults.reader.spool.memory_limit, 64u << 20);
  EXPECT_EQ(defaults.reader.spool.directory, "");
  EXPECT_EQ(defaults.reader.queue_events, 65'536u);
  EXPECT_EQ(defaults.writer.max_buffered_bytes, 256u << 20);
  EXPECT_EQ(defaults.writer.max_index_bytes, std::size_t{2048} << 20);
  const replicate::ReplicatorOptions options = replicator_options(
      parse_config(kMinimal + "[memory]\ntransaction_buffer_mb = 8\nspool_dir = \"/var/tmp/b\"\nqueue_events = 1000\n"
                              "writer_buffer_mb = 32\nindex_mb = 100\n",
                   "t"),
      {});
  EXPECT_EQ(options.reader.spool.memory_limit, 8u << 20);
  EXPECT_EQ(options.reader.spool.directory, "/var/tmp/b");
  EXPECT_EQ(options.reader.queue_events, 1000u);
  EXPECT_EQ(options.writer.max_buffered_bytes, 32u << 20);
  EXPECT_EQ(options.writer.max_index_bytes, 100u << 20);
  EXPECT_EQ(config_error(kMinimal + "[memory]\nwriter_buffer_mb = 0\n"),
            "test.toml: [memory] writer_buffer_mb: must be positive");
  EXPECT_EQ(config_error(kMinimal + "[memory]\ntransaction_buffer_mb = 2000000\n"),
            "test.toml: [memory] transaction_buffer_mb: 2000000 MiB is more than 1 TiB");
}

TEST(ConfigTest, RequiredSectionsAreNamed) {
  EXPECT_NE(config_error(R"([source]
user = "u"
server_id = 1
[iceberg]
catalog_uri = "sqlite:////tmp/c.db"
warehouse = "/tmp/w"
)")
                .find("[capture] include"),
            std::string::npos);
  EXPECT_NE(config_error(R"([source]
user = "u"
server_id = 1
[capture]
include = ["a.*"]
)")
                .find("[iceberg] catalog_uri: is required"),
            std::string::npos);
}

TEST(ConfigTest, PasswordsNeverLiveInTheFile) {
  const std::string text = "[source]\nuser = \"u\"\nserver_id = 1\npassword = \"hunter2\"\n";
  const std::string message = config_error(text);
  EXPECT_NE(message.find("secrets are not kept in the file"), std::string::npos);
  EXPECT_EQ(message.find("hunter2"), std::string::npos);
}

TEST(ConfigTest, PasswordFromEnvironment) {
  ::setenv("BINBERG_CONFIG_TEST_PASSWORD", "s3cret", 1);
  std::string text = kMinimal;
  text.insert(text.find("server_id"), "password_env = \"BINBERG_CONFIG_TEST_PASSWORD\"\n");
  EXPECT_EQ(parse_config(text, "test.toml").source.password, "s3cret");
  ::unsetenv("BINBERG_CONFIG_TEST_PASSWORD");
  EXPECT_NE(config_error(text).find("environment variable BINBERG_CONFIG_TEST_PASSWORD is not set"), std::string::npos);
}

TEST(ConfigTest, PasswordFileMustBePrivate) {
  binberg::testing::TempDir dir;
  const std::string secret = (dir.path() / "password").string();
  std::ofstream(secret) << "pa55word\n";
  std::string text = kMinimal;
  text.insert(text.find("server_id"), "password_file = \"" + secret + "\"\n");
  ::chmod(secret.c_str(), 0644);
  const std::string message = config_error(text);
  EXPECT_NE(message.find("is readable by others"), std::string::npos);
  EXPECT_EQ(message.find("pa55word"), std::string::npos);
  ::chmod(secret.c_str(), 0600);
  EXPECT_EQ(parse_config(text, "test.toml").source.password, "pa55word");
}

TEST(ConfigTest, TlsOptionsReachTheConnection) {
  const Config config = parse_config(kMinimal + R"([source.tls]
enabled = true
ca_file = "/etc/ssl/ca.pem"
verify_server_cert = false
)",
                                     "test.toml");
  EXPECT_TRUE(config.source.tls.enabled);
  EXPECT_EQ(config.source.tls.ca_file, "/etc/ssl/ca.pem");
  EXPECT_FALSE(config.source.tls.verify_server_cert);
}

TEST(ConfigTest, CaptureRulesIncludeThenExclude) {
  CaptureRules rules{{"shop.*", "crm.cust?mers"}, {"shop.*_tmp"}};
  EXPECT_TRUE(rules.matches("shop", "orders"));
  EXPECT_FALSE(rules.matches("shop", "orders_tmp"));
  EXPECT_TRUE(rules.matches("crm", "customers"));
  EXPECT_FALSE(rules.matches("crm", "custoomers"));
  EXPECT_FALSE(rules.matches("shopping", "orders"));
  EXPECT_FALSE(rules.matches("other", "orders"));
  // '*' backtracks: the pattern's last literal must match the name's end.
  const CaptureRules backtracking{{"*a*b"}, {}};
  EXPECT_TRUE(backtracking.matches("xa", "yab"));
  EXPECT_FALSE(backtracking.matches("xa", "yabc"));
}

const std::string kSourceOnly = R"([source]
user = "binberg"
server_id = 4201

[capture]
include = ["shop.*"]

[kafka]
bootstrap_servers = "127.0.0.1:9092"

[registry]
url = "http://127.0.0.1:8080/apis/ccompat/v7"
)";

TEST(ConfigTest, SourceOnlyFileNeedsNoCatalogAndGetsTheDocumentedDefaults) {
  const Config config = parse_config(kSourceOnly, "test.toml");
  const publish::KafkaSourceOptions options = kafka_source_options(config, {capture::CapturedTable{"shop", "orders"}});
  EXPECT_EQ(options.kafka.bootstrap_servers, "127.0.0.1:9092");
  EXPECT_EQ(options.registry.url, "http://127.0.0.1:8080/apis/ccompat/v7");
  EXPECT_EQ(options.topic_prefix, "binberg");
  EXPECT_EQ(options.partitions, 1);
  EXPECT_EQ(options.replication_factor, 1);
  EXPECT_EQ(options.delivery, publish::Delivery::kExactlyOnce);
  EXPECT_EQ(options.source_name, "binberg");
  EXPECT_EQ(options.offsets_topic, "");
  EXPECT_EQ(options.max_consecutive_failures, 0u);
  EXPECT_EQ(options.server_id, 4201u);
  // The source saves (cuts Kafka transactions) on its own, shorter schedule than [commit]'s.
  EXPECT_EQ(options.commit.interval, std::chrono::milliseconds(100));
  EXPECT_EQ(options.commit.max_events, 50'000u);
  EXPECT_EQ(options.commit.idle_position_interval, config.commit.idle_position_interval);
  EXPECT_EQ(publish::change_topic(options.topic_prefix, options.tables.front()), "binberg.shop.orders");
  // Without a catalog the file is no replicate configuration, and says so.
  try {
    (void)replicator_options(config, {capture::CapturedTable{"shop", "orders"}});
    FAIL() << "no error";
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(), "test.toml: [iceberg] catalog_uri and warehouse are required to write Iceberg tables");
  }
  // Without a broker or a registry it is no source configuration either.
  try {
    (void)kafka_source_options(parse_config(kMinimal, "test.toml"), {});
    FAIL() << "no error";
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(), "test.toml: [kafka] bootstrap_servers is required (host:port of the brokers)");
  }
}

TEST(ConfigTest, TypesSayWhatWideDecimalsBecomeAndTheDefaultRefusesThem) {
  EXPECT_EQ(replicator_options(parse_config(kMinimal, "t"), {}).types.wide_decimal, tables::WideDecimal::kRefuse)
      << "refused by default: a column held as text stays text for good";
  const Config config = parse_config(kMinimal + "[types]\nwide_decimal = \"string\"\n", "t");
  EXPECT_EQ(replicator_options(config, {}).types.wide_decimal, tables::WideDecimal::kString);
  EXPECT_EQ(config.types.wide_decimal, tables::WideDecimal::kString);
  EXPECT_EQ(config_error(kMinimal + "[types]\nwide_decimal = \"double\"\n"),
            "test.toml: [types] wide_decimal: 'double' is neither refuse nor string");
  EXPECT_EQ(config_error(kMinimal + "[types]\nfloat_key = \"string\"\n"),
            "test.toml: [types] float_key: unknown option");
  const std::string sink = kSourceOnly + R"(
[iceberg]
catalog_uri = "sqlite:////tmp/catalog.db"
warehouse = "/tmp/warehouse"

[sink]
topics = ["binberg.shop.orders"]

[types]
wide_decimal = "string"
)";
  EXPECT_EQ(kafka_sink_options(parse_config(sink, "t")).types.wide_decimal, tables::WideDecimal::kString);
}

// `binberg table ls` and `binberg reconcile` report a captured table as stopped when binberg cannot
// map it under [types] and so made no tables for it; a table it made keeps the types it was made with.
TEST(ConfigTest, AStoppedTableIsOneBinbergCannotMapAndMadeNoTablesFor) {
  binberg::testing::TempDir dir;
  Config config = parse_config(kMinimal, "t");
  config.catalog.uri = "sqlite:///" + (dir.path() / "catalog.db").string();
  config.catalog.warehouse = (dir.path() / "warehouse").string();
  const auto catalog = iceberg::open_catalog(config.catalog);
  const capture::CapturedTable prices{"shop", "prices"};
  auto schema = std::make_shared<TableSchema>();
  schema->database = "shop";
  schema->table = "prices";
  schema->columns = {Column{}, Column{}};
  schema->columns[0].name = "k";
  schema->columns[0].type = SourceType::kFloat;
  schema->columns[1].name = "amount";
  schema->columns[1].type = SourceType::kDecimal;
  schema->columns[1].precision = 50;
  schema->columns[1].scale = 2;
  schema->primary_key = {0};
  const auto stopped = stopped_reason(config, *catalog, prices, *schema);
  ASSERT_TRUE(stopped.has_value());
  EXPECT_NE(stopped->find("table shop.prices column amount (DECIMAL(50,2))"), std::string::npos) << *stopped;
  config.types.wide_decimal = tables::WideDecimal::kString;
  EXPECT_NE(stopped_reason(config, *catalog, prices, *schema).value_or("").find("column k (FLOAT)"), std::string::npos);
  schema->columns[0].type = SourceType::kBigInt;
  EXPECT_FALSE(stopped_reason(config, *catalog, prices, *schema).has_value());
  tables::open_table_pair(*catalog, "shop", "prices", config.changelog_suffix, schema, config.types);
  config.types.wide_decimal = tables::WideDecimal::kRefuse;
  EXPECT_FALSE(stopped_reason(config, *catalog, prices, *schema).has_value())
      << "tables made with wide decimals as text keep them, whatever [types] says now";
}

TEST(ConfigTest, SinkNeedsTopicsAndACatalog) {
  const std::string sink = kSourceOnly + R"(
[iceberg]
catalog_uri = "sqlite:////tmp/catalog.db"
warehouse = "/tmp/warehouse"

[sink]
topics = ["binberg.shop.orders"]
)";
  const sink::KafkaSinkOptions options = kafka_sink_options(parse_config(sink, "test.toml"));
  EXPECT_EQ(options.topics, std::vector<std::string>{"binberg.shop.orders"});
  EXPECT_EQ(options.group_id, "binberg-sink");
  EXPECT_EQ(options.changelog_suffix, "_changelog");
  EXPECT_EQ(options.writer.writer_id, "binberg");
  try {
    (void)kafka_sink_options(parse_config(kSourceOnly, "test.toml"));
    FAIL() << "no error";
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(), "test.toml: [iceberg] catalog_uri and warehouse are required to write Iceberg tables");
  }
  try {
    (void)kafka_sink_options(parse_config(sink.substr(0, sink.find("[sink]")), "test.toml"));
    FAIL() << "no error";
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(), "test.toml: [sink] topics: name the topics to read, e.g. [\"cdc.shop.orders\"]");
  }
  EXPECT_EQ(config_error(sink + "group_id = \"\"\n"), "test.toml: [sink] group_id: must not be empty");
  EXPECT_FALSE(options.scale_out);
  const sink::KafkaSinkOptions shared =
      kafka_sink_options(parse_config(sink + "scale_out = true\nmember_timeout_ms = 6000\n", "test.toml"));
  EXPECT_TRUE(shared.scale_out);
  EXPECT_EQ(shared.member_timeout, std::chrono::milliseconds(6000));
  EXPECT_NE(config_error(sink + "member_timeout_ms = 0\n").find("member_timeout_ms"), std::string::npos);
  EXPECT_EQ(shared.stall_timeout, std::chrono::milliseconds(300'000));
  EXPECT_EQ(config_error(sink + "stall_timeout_ms = 5000\n"),
            "test.toml: [sink] stall_timeout_ms: must be at least member_timeout_ms");
}

TEST(ConfigTest, KafkaOptionsAreCheckedAndSecretsStayOutOfTheFile) {
  const Config config = parse_config(kSourceOnly + R"(
[kafka.properties]
"security.protocol" = "SASL_SSL"
"sasl.username" = "cdc"
)",
                                     "test.toml");
  EXPECT_EQ(config.kafka.client.properties.at("security.protocol"), "SASL_SSL");
  EXPECT_EQ(config.kafka.client.properties.at("sasl.username"), "cdc");
  EXPECT_EQ(config_error(kSourceOnly + "[kafka.properties]\n\"sasl.password\" = \"x\"\n"),
            "test.toml: [kafka.properties] sasl.password: secrets are not kept in the file; use [kafka] "
            "sasl_password_env or sasl_password_file");
  ::setenv("BINBERG_TEST_SASL", "s3cret", 1);
  const std::string with_env = kSourceOnly;
  const Config secret = parse_config(
      std::string(with_env).replace(with_env.find("[registry]"), 0, "sasl_password_env = \"BINBERG_TEST_SASL\"\n\n"),
      "test.toml");
  EXPECT_EQ(secret.kafka.client.properties.at("sasl.password"), "s3cret");
  EXPECT_EQ(config_error(std::string(with_env).replace(with_env.find("[registry]"), 0, "delivery = \"twice\"\n\n")),
            "test.toml: [kafka] delivery: 'twice' is neither exactly-once nor at-least-once");
  EXPECT_EQ(config_error(std::string(with_env).replace(with_env.find("[registry]"), 0, "partitions = 0\n\n")),
            "test.toml: [kafka] partitions: must be positive");
  EXPECT_EQ(config_error(std::string(with_env).replace(with_env.find("[registry]"), 0, "acks = 1\n\n")),
            "test.toml: [kafka] acks: unknown option");
  const Config at_least_once = parse_config(
      std::string(with_env).replace(with_env.find("[registry]"), 0, "delivery = \"at-least-once\"\n\n"), "t");
  EXPECT_EQ(kafka_source_options(at_least_once, {}).delivery, publish::Delivery::kAtLeastOnce);
  const publish::KafkaSourceOptions saving = kafka_source_options(
      parse_config(std::string(with_env).replace(with_env.find("[registry]"), 0,
                                                 "save_interval_ms = 250\nsave_max_records = 7\n\n"),
                   "t"),
      {});
  EXPECT_EQ(saving.commit.interval, std::chrono::milliseconds(250));
  EXPECT_EQ(saving.commit.max_events, 7u);
  EXPECT_EQ(config_error(std::string(with_env).replace(with_env.find("[registry]"), 0, "save_interval_ms = 0\n\n")),
            "test.toml: [kafka] save_interval_ms: must be positive");
}

}  // namespace
}  // namespace binberg::cli
