#include "cli/config.h"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/secret.h"

namespace binberg::cli {
namespace {

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative '*' backtracking: linear in practice, no recursion on hostile patterns.
  std::size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// One [section] of the file: typed lookups that name the key on errors, and a check that every
// key was understood (a misspelt option is an error, not a silently ignored line).
class Section {
 public:
  Section(const toml::table* table, std::string name, const std::string& path)
      : table_(table), name_(std::move(name)), path_(path) {}

  // "FILE: [SECTION] KEY", what starts every message about KEY.
  std::string where(const std::string& key) const { return fmt::format("{}: [{}] {}", path_, name_, key); }

  [[noreturn]] void error(const std::string& key, const std::string& problem) const {
    throw ConfigError(fmt::format("{}: {}", where(key), problem));
  }

  template <typename T>
  std::optional<T> get(const std::string& key) {
    seen_.insert(key);
    if (table_ == nullptr) return std::nullopt;
    const toml::node* node = table_->get(key);
    if (node == nullptr) return std::nullopt;
    if constexpr (std::is_same_v<T, std::string>) {
      if (auto value = node->value<std::string>(); value && node->is_string()) return *value;
      error(key, "expected a string");
    } else if constexpr (std::is_same_v<T, bool>) {
      if (node->is_boolean()) return *node->value<bool>();
      error(key, "expected true or false");
    } else {
      if (!node->is_integer()) error(key, "expected an integer");
      const std::int64_t value = *node->value<std::int64_t>();
      if (value < 0 || static_cast<std::uint64_t>(value) > std::numeric_limits<T>::max()) {
        error(key, fmt::format("{} is out of range", value));
      }
      return static_cast<T>(value);
    }
  }

  // An integer that may be negative.
  std::optional<std::int64_t> signed_integer(const std::string& key) {
    seen_.insert(key);
    if (table_ == nullptr) return std::nullopt;
    const toml::node* node = table_->get(key);
    if (node == nullptr) return std::nullopt;
    if (!node->is_integer()) error(key, "expected an integer");
    return *node->value<std::int64_t>();
  }

  template <typename T>
  T get_or(const std::string& key, T fallback) {
    return get<T>(key).value_or(std::move(fallback));
  }

  template <typename T>
  T positive(const std::string& key, T fallback) {
    const T value = get_or<T>(key, fallback);
    if (value == 0) error(key, "must be positive");
    return value;
  }

  // A size given in MiB, as bytes.
  std::size_t mebibytes(const std::string& key, std::size_t fallback) {
    const auto value = positive<std::size_t>(key, fallback);
    if (value > (std::size_t{1} << 20)) error(key, fmt::format("{} MiB is more than 1 TiB", value));
    return value << 20;
  }

  std::vector<std::string> strings(const std::string& key) {
    seen_.insert(key);
    std::vector<std::string> values;
    if (table_ == nullptr) return values;
    const toml::node* node = table_->get(key);
    if (node == nullptr) return values;
    const toml::array* array = node->as_array();
    if (array == nullptr) error(key, "expected an array of strings");
    for (const toml::node& item : *array) {
      if (!item.is_string()) error(key, "expected an array of strings");
      values.push_back(*item.value<std::string>());
    }
    return values;
  }

  // A secret from `<prefix>_env` (an environment variable) or `<prefix>_file` (a file readable
  // by its owner only). The value never appears in messages.
  std::string secret(const std::string& prefix) {
    const auto env = get<std::string>(prefix + "_env");
    const auto file = get<std::string>(prefix + "_file");
    if (table_ != nullptr && table_->get(prefix) != nullptr) {
      error(prefix, fmt::format("secrets are not kept in the file; use {0}_env or {0}_file", prefix));
    }
    if (env && file) error(prefix + "_env", fmt::format("set {0}_env or {0}_file, not both", prefix));
    if (env) return with_context(where(prefix + "_env"), [&] { return secret_from_env(*env); });
    if (file) return with_context(where(prefix + "_file"), [&] { return secret_from_file(*file); });
    return "";
  }

  void check_all_understood() const {
    if (table_ == nullptr) return;
    for (const auto& [key, node] : *table_) {
      const std::string name(key.str());
      if (!seen_.contains(name) && !node.is_table()) error(name, "unknown option");
    }
  }

 private:
  const toml::table* table_;
  std::string name_;
  const std::string& path_;
  std::set<std::string> seen_;
};

void require_kafka(const Config& config) {
  if (config.kafka.client.bootstrap_servers.empty()) {
    throw ConfigError(fmt::format("{}: [kafka] bootstrap_servers is required (host:port of the brokers)", config.path));
  }
  if (config.kafka.registry.url.empty()) {
    throw ConfigError(fmt::format(
        "{}: [registry] url is required (a Confluent-compatible API, e.g. http://127.0.0.1:8080/apis/ccompat/v7)",
        config.path));
  }
}

iceberg::TableWriterOptions writer_options(const Config& config) {
  iceberg::TableWriterOptions writer;
  writer.writer_id = config.writer_id;
  writer.max_buffered_bytes = config.memory.writer_buffer_bytes;
  writer.max_index_bytes = config.memory.index_bytes;
  return writer;
}

capture::SourceReaderOptions reader_options(const Config& config) {
  capture::SourceReaderOptions reader;
  reader.spool = mysql::SpoolOptions{config.memory.spool_dir, config.memory.transaction_buffer_bytes};
  reader.queue_events = config.memory.queue_events;
  return reader;
}

void require_catalog(const Config& config) {
  if (config.catalog.uri.empty() || config.catalog.warehouse.empty()) {
    throw ConfigError(
        fmt::format("{}: [iceberg] catalog_uri and warehouse are required to write Iceberg tables", config.path));
  }
}

}  // namespace

bool CaptureRules::matches(const std::string& database, const std::string& table) const {
  const std::string name = database + "." + table;
  bool included = false;
  for (const auto& pattern : include) included = included || glob_match(pattern, name);
  for (const auto& pattern : exclude) {
    if (glob_match(pattern, name)) return false;
  }
  return included;
}

namespace {

// [source] and [source.tls]: the database binberg reads.
void read_source(const toml::table& root, const std::string& path, Config& config) {
  Section source(root["source"].as_table(), "source", path);
  config.source.host = source.get_or<std::string>("host", "127.0.0.1");
  config.source.port = source.positive<std::uint16_t>("port", 3306);
  config.source.user = source.get_or<std::string>("user", "");
  if (config.source.user.empty()) source.error("user", "is required");
  config.source.password = source.secret("password");
  config.source.connect_timeout_seconds = source.positive<unsigned>("connect_timeout_s", 10);
  config.source.read_timeout_seconds = source.positive<unsigned>("read_timeout_s", 60);
  config.server_id = source.get_or<std::uint32_t>("server_id", 0);
  if (config.server_id == 0) source.error("server_id", "is required: a replica id unique among the source's replicas");
  source.check_all_understood();
  Section tls(root["source"]["tls"].as_table(), "source.tls", path);
  config.source.tls.enabled = tls.get_or<bool>("enabled", false);
  config.source.tls.verify_server_cert = tls.get_or<bool>("verify_server_cert", true);
  config.source.tls.ca_file = tls.get_or<std::string>("ca_file", "");
  config.source.tls.cert_file = tls.get_or<std::string>("cert_file", "");
  config.source.tls.key_file = tls.get_or<std::string>("key_file", "");
  tls.check_all_understood();
}

// [capture]: which tables.
void read_capture(const toml::table& root, const std::string& path, Config& config) {
  Section capture(root["capture"].as_table(), "capture", path);
  config.capture.include = capture.strings("include");
  config.capture.exclude = capture.strings("exclude");
  if (config.capture.include.empty()) capture.error("include", "name at least one pattern, e.g. [\"shop.*\"]");
  capture.check_all_understood();
}

// [iceberg]: the catalog and the tables binberg writes.
void read_iceberg(const toml::table& root, const std::string& path, Config& config) {
  // A file for `binberg source` alone (a [kafka] section, no [iceberg]) needs no catalog.
  const bool catalog_required = root["iceberg"] || !root["kafka"];
  Section iceberg(root["iceberg"].as_table(), "iceberg", path);
  config.catalog.name = iceberg.get_or<std::string>("catalog_name", "binberg");
  config.catalog.uri = iceberg.get_or<std::string>("catalog_uri", "");
  if (config.catalog.uri.empty() && catalog_required)
    iceberg.error("catalog_uri", "is required (sqlite:////abs/path.db or postgresql://...)");
  config.catalog.warehouse = iceberg.get_or<std::string>("warehouse", "");
  if (config.catalog.warehouse.empty() && catalog_required)
    iceberg.error("warehouse", "is required (an absolute path or file:/ URI)");
  config.catalog.password = iceberg.secret("catalog_password");
  config.catalog.durability = iceberg.get_or<bool>("allow_non_durable_catalog", false)
                                  ? iceberg::CatalogDurability::kNotRequired
                                  : iceberg::CatalogDurability::kRequired;
  config.catalog.retry_timeout =
      std::chrono::milliseconds(iceberg.positive<std::uint32_t>("catalog_retry_timeout_ms", 30'000));
  config.iceberg_namespace = iceberg.get_or<std::string>("namespace", "");
  config.changelog_suffix = iceberg.get_or<std::string>("changelog_suffix", "_changelog");
  if (config.changelog_suffix.empty()) iceberg.error("changelog_suffix", "must not be empty");
  iceberg.check_all_understood();
}

// [types]: what source types without an exact Iceberg type become.
void read_types(const toml::table& root, const std::string& path, Config& config) {
  Section types(root["types"].as_table(), "types", path);
  const std::string wide_decimal = types.get_or<std::string>("wide_decimal", "refuse");
  if (wide_decimal == "string") {
    config.types.wide_decimal = tables::WideDecimal::kString;
  } else if (wide_decimal != "refuse") {
    types.error("wide_decimal", fmt::format("'{}' is neither refuse nor string", wide_decimal));
  }
  types.check_all_understood();
}

// [commit] and [replicator]: when commits are cut, how snapshots are read.
void read_commit(const toml::table& root, const std::string& path, Config& config) {
  Section commit(root["commit"].as_table(), "commit", path);
  config.commit.interval = std::chrono::milliseconds(commit.positive<std::uint32_t>("interval_ms", 1000));
  config.commit.max_events = commit.positive<std::size_t>("max_events", 200'000);
  config.commit.idle_position_interval =
      std::chrono::milliseconds(commit.positive<std::uint32_t>("idle_position_interval_ms", 60'000));
  commit.check_all_understood();

  Section replicator(root["replicator"].as_table(), "replicator", path);
  config.writer_id = replicator.get_or<std::string>("writer_id", "binberg");
  config.snapshot_chunk_rows = replicator.positive<std::size_t>("snapshot_chunk_rows", 10'000);
  replicator.check_all_understood();
}

// [memory]: the bounds of what binberg buffers.
void read_memory(const toml::table& root, const std::string& path, Config& config) {
  Section memory(root["memory"].as_table(), "memory", path);
  config.memory.transaction_buffer_bytes = memory.mebibytes("transaction_buffer_mb", 64);
  config.memory.spool_dir = memory.get_or<std::string>("spool_dir", "");
  config.memory.queue_events = memory.positive<std::size_t>("queue_events", 65'536);
  config.memory.writer_buffer_bytes = memory.mebibytes("writer_buffer_mb", 256);
  config.memory.index_bytes = memory.mebibytes("index_mb", 2048);
  memory.check_all_understood();
}

// [kafka] and [kafka.properties]: path B's broker and topics.
void read_kafka(const toml::table& root, const std::string& path, Config& config) {
  Section kafka(root["kafka"].as_table(), "kafka", path);
  config.kafka.client.bootstrap_servers = kafka.get_or<std::string>("bootstrap_servers", "");
  config.kafka.topic_prefix = kafka.get_or<std::string>("topic_prefix", "binberg");
  if (config.kafka.topic_prefix.empty()) kafka.error("topic_prefix", "must not be empty");
  config.kafka.partitions = kafka.positive<std::int32_t>("partitions", 1);
  config.kafka.replication_factor = kafka.positive<std::int16_t>("replication_factor", 1);
  const std::string delivery = kafka.get_or<std::string>("delivery", "exactly-once");
  if (delivery == "exactly-once") {
    config.kafka.delivery = publish::Delivery::kExactlyOnce;
  } else if (delivery == "at-least-once") {
    config.kafka.delivery = publish::Delivery::kAtLeastOnce;
  } else {
    kafka.error("delivery", fmt::format("'{}' is neither exactly-once nor at-least-once", delivery));
  }
  config.kafka.source_name = kafka.get_or<std::string>("source_name", "binberg");
  if (config.kafka.source_name.empty()) kafka.error("source_name", "must not be empty");
  config.kafka.offsets_topic = kafka.get_or<std::string>("offsets_topic", "");
  config.kafka.max_retries = kafka.get_or<std::uint32_t>("max_retries", 0);
  config.kafka.save_interval = std::chrono::milliseconds(kafka.positive<std::uint32_t>("save_interval_ms", 100));
  config.kafka.save_max_records = kafka.positive<std::size_t>("save_max_records", 50'000);
  if (std::string password = kafka.secret("sasl_password"); !password.empty()) {
    config.kafka.client.properties["sasl.password"] = std::move(password);
  }
  kafka.check_all_understood();
  if (const toml::table* properties = root["kafka"]["properties"].as_table()) {
    for (const auto& [key, node] : *properties) {
      const std::string name(key.str());
      if (!node.is_string()) {
        throw ConfigError(fmt::format("{}: [kafka.properties] {}: expected a string", path, name));
      }
      if (kafka::is_secret_property(name)) {
        throw ConfigError(
            fmt::format("{}: [kafka.properties] {}: secrets are not kept in the file; use [kafka] sasl_password_env or "
                        "sasl_password_file",
                        path, name));
      }
      config.kafka.client.properties[name] = *node.value<std::string>();
    }
  }
}

// [registry]: the schema registry.
void read_registry(const toml::table& root, const std::string& path, Config& config) {
  Section registry(root["registry"].as_table(), "registry", path);
  config.kafka.registry.url = registry.get_or<std::string>("url", "");
  config.kafka.registry.timeout = std::chrono::milliseconds(registry.positive<std::uint32_t>("timeout_ms", 10'000));
  registry.check_all_understood();
}

// [sink]: what `binberg sink` reads and where bad records go.
void read_sink(const toml::table& root, const std::string& path, Config& config) {
  Section sink(root["sink"].as_table(), "sink", path);
  config.kafka.sink_topics = sink.strings("topics");
  config.kafka.sink_group = sink.get_or<std::string>("group_id", "binberg-sink");
  if (config.kafka.sink_group.empty()) sink.error("group_id", "must not be empty");
  config.kafka.sink_scale_out = sink.get_or<bool>("scale_out", false);
  config.kafka.sink_member_timeout =
      std::chrono::milliseconds(sink.positive<std::uint32_t>("member_timeout_ms", 10'000));
  config.kafka.sink_stall_timeout =
      std::chrono::milliseconds(sink.positive<std::uint32_t>("stall_timeout_ms", 300'000));
  if (config.kafka.sink_stall_timeout < config.kafka.sink_member_timeout) {
    sink.error("stall_timeout_ms", "must be at least member_timeout_ms");
  }
  if (const auto factor = sink.get<std::int16_t>("dead_letter_replication_factor")) {
    if (*factor == 0) sink.error("dead_letter_replication_factor", "must be positive");
    config.kafka.sink_dead_letter_replication_factor = *factor;
  }
  config.kafka.sink_allow_finite_dead_letter_retention = sink.get_or<bool>("allow_finite_dead_letter_retention", false);
  config.kafka.sink_dead_letter_retention_ms = sink.signed_integer("dead_letter_retention_ms").value_or(-1);
  if (const std::int64_t retention = config.kafka.sink_dead_letter_retention_ms; retention != -1) {
    if (retention <= 0) sink.error("dead_letter_retention_ms", "-1 (keep for ever) or a positive number of ms");
    if (!config.kafka.sink_allow_finite_dead_letter_retention) {
      sink.error("dead_letter_retention_ms",
                 "a finite retention lets dead letters, the only copy of their changes, age out; set "
                 "allow_finite_dead_letter_retention = true to accept that");
    }
  }
  sink.check_all_understood();
}

// [metrics]: where the Prometheus endpoint listens.
void read_metrics(const toml::table& root, const std::string& path, Config& config) {
  Section metrics(root["metrics"].as_table(), "metrics", path);
  config.metrics_address = metrics.get_or<std::string>("address", "");
  metrics.check_all_understood();
}

}  // namespace

Config parse_config(const std::string& text, const std::string& path) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& error) {
    throw ConfigError(
        fmt::format("{}:{}:{}: {}", path, error.source().begin.line, error.source().begin.column, error.description()));
  }
  static const std::set<std::string> kSections = {"source", "capture", "iceberg",  "types", "commit", "replicator",
                                                  "memory", "kafka",   "registry", "sink",  "metrics"};
  for (const auto& [key, node] : root) {
    if (!kSections.contains(std::string(key.str())) || !node.is_table()) {
      throw ConfigError(
          fmt::format("{}: unknown section or option '{}' (sections: source, capture, iceberg, types, commit, "
                      "replicator, memory, kafka, registry, sink, metrics)",
                      path, key.str()));
    }
  }
  Config config;
  config.path = path;

  for (const auto read : {read_source, read_capture, read_iceberg, read_types, read_commit, read_memory, read_kafka,
                          read_registry, read_sink, read_metrics}) {
    read(root, path, config);
  }
  return config;
}

Config load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(fmt::format("{}: cannot read the configuration file", path));
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path);
}

std::vector<capture::CapturedTable> resolve_tables(mysql::Connection& connection, const CaptureRules& rules) {
  const mysql::ResultSet result = connection.query(
      "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE' AND "
      "TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') "
      "ORDER BY TABLE_SCHEMA, TABLE_NAME");
  std::vector<capture::CapturedTable> tables;
  for (const auto& row : result.rows) {
    if (!row[0] || !row[1]) continue;
    if (rules.matches(*row[0], *row[1])) tables.push_back(capture::CapturedTable{*row[0], *row[1]});
  }
  return tables;
}

std::optional<std::string> stopped_reason(const Config& config, iceberg::Catalog& catalog,
                                          const capture::CapturedTable& table, const TableSchema& schema) {
  const std::string ns = config.iceberg_namespace.empty() ? table.database : config.iceberg_namespace;
  try {
    catalog.metadata_location(iceberg::TableIdentifier{ns, table.table + config.changelog_suffix});
    return std::nullopt;
  } catch (const iceberg::NoSuchTable&) {
  }
  try {
    tables::check_mappable(schema, config.types);
  } catch (const tables::UnmappableTable& error) {
    return error.what();
  }
  return std::nullopt;
}

namespace {

// The options every reader of the binlog takes (path A's replicator, path B's source): the same
// fields, from the same keys.
template <typename Options>
void set_capture_options(const Config& config, std::vector<capture::CapturedTable> tables, Options& options) {
  options.source = config.source;
  options.server_id = config.server_id;
  options.tables = std::move(tables);
  options.snapshot_chunk_rows = config.snapshot_chunk_rows;
  options.reader = reader_options(config);
}

// The options every writer of the table pairs takes (path A's replicator, path B's sink).
template <typename Options>
void set_table_options(const Config& config, Options& options) {
  options.iceberg_namespace = config.iceberg_namespace;
  options.changelog_suffix = config.changelog_suffix;
  options.commit = config.commit;
  options.writer = writer_options(config);
  options.types = config.types;
}

}  // namespace

replicate::ReplicatorOptions replicator_options(const Config& config, std::vector<capture::CapturedTable> tables) {
  require_catalog(config);
  replicate::ReplicatorOptions options;
  set_capture_options(config, std::move(tables), options);
  set_table_options(config, options);
  return options;
}

sink::KafkaSinkOptions kafka_sink_options(const Config& config) {
  require_kafka(config);
  require_catalog(config);
  if (config.kafka.sink_topics.empty()) {
    throw ConfigError(
        fmt::format("{}: [sink] topics: name the topics to read, e.g. [\"cdc.shop.orders\"]", config.path));
  }
  sink::KafkaSinkOptions options;
  options.kafka = config.kafka.client;
  options.registry = config.kafka.registry;
  options.topics = config.kafka.sink_topics;
  options.group_id = config.kafka.sink_group;
  options.scale_out = config.kafka.sink_scale_out;
  options.member_timeout = config.kafka.sink_member_timeout;
  options.stall_timeout = config.kafka.sink_stall_timeout;
  options.replication_factor = config.kafka.replication_factor;
  options.dead_letters = sink::DeadLetterTopicOptions{config.kafka.sink_dead_letter_replication_factor,
                                                      config.kafka.sink_dead_letter_retention_ms,
                                                      config.kafka.sink_allow_finite_dead_letter_retention};
  set_table_options(config, options);
  options.max_consecutive_failures = config.kafka.max_retries;
  options.queue_records = config.memory.queue_events;
  return options;
}

publish::KafkaSourceOptions kafka_source_options(const Config& config, std::vector<capture::CapturedTable> tables) {
  require_kafka(config);
  publish::KafkaSourceOptions options;
  set_capture_options(config, std::move(tables), options);
  options.kafka = config.kafka.client;
  options.registry = config.kafka.registry;
  options.topic_prefix = config.kafka.topic_prefix;
  options.partitions = config.kafka.partitions;
  options.replication_factor = config.kafka.replication_factor;
  options.delivery = config.kafka.delivery;
  options.source_name = config.kafka.source_name;
  options.offsets_topic = config.kafka.offsets_topic;
  options.max_consecutive_failures = config.kafka.max_retries;
  options.commit = config.commit;  // idle_position_interval
  options.commit.interval = config.kafka.save_interval;
  options.commit.max_events = config.kafka.save_max_records;
  return options;
}

}  // namespace binberg::cli
